# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""The checks that keep an RPC client and its server-side manager in step.

A test case mixes :class:`RPCAPIContract` in and names the two classes;
client arguments that only route the call (``routing``) are not sent.
"""

import inspect


def public_methods(cls):
    return {name: fn for name, fn in inspect.getmembers(cls,
                                                        inspect.isfunction)
            if not name.startswith('_')}


class RPCAPIContract:
    """Mixin for a ``testtools.TestCase``."""

    client_class = None
    manager_class = None
    routing = ()
    #: Manager methods that only another release's clients call.
    server_only = ()

    def test_versions_match(self):
        self.assertEqual(self.client_class.RPC_API_VERSION,
                         self.manager_class.RPC_API_VERSION)
        self.assertEqual(self.manager_class.RPC_API_VERSION,
                         self.manager_class.target.version)

    def test_same_methods_and_arguments(self):
        client = public_methods(self.client_class)
        server = public_methods(self.manager_class)
        self.assertEqual(sorted(client),
                         sorted(set(server) - set(self.server_only)))
        for name, fn in client.items():
            self.assertEqual(
                [p for p in inspect.signature(fn).parameters
                 if p not in self.routing],
                list(inspect.signature(server[name]).parameters),
                'arguments of %s differ' % name)

    def test_endpoints_declare_expected_exceptions(self):
        for name, fn in public_methods(self.manager_class).items():
            self.assertTrue(hasattr(fn, '__wrapped__'),
                            '%s lacks @rpc.expected_exceptions' % name)
