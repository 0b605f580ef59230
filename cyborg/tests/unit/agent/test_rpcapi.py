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
"""The agent's RPC client and manager stay in step."""

import inspect

from cyborg.agent import manager
from cyborg.agent import rpcapi
from cyborg.tests import base

# Client arguments that pick the server and the wait, not sent along.
_ROUTING = ('host', 'timeout')


def _public_methods(cls):
    return {name: fn for name, fn in inspect.getmembers(cls,
                                                        inspect.isfunction)
            if not name.startswith('_')}


class TestAgentRPCAPI(base.TestCase):

    def test_versions_match(self):
        self.assertEqual(rpcapi.AgentAPI.RPC_API_VERSION,
                         manager.AgentManager.RPC_API_VERSION)
        self.assertEqual(manager.AgentManager.RPC_API_VERSION,
                         manager.AgentManager.target.version)

    def test_same_methods_and_arguments(self):
        client = _public_methods(rpcapi.AgentAPI)
        server = _public_methods(manager.AgentManager)
        self.assertEqual(sorted(client), sorted(server))
        for name, fn in client.items():
            self.assertEqual(
                [p for p in inspect.signature(fn).parameters
                 if p not in _ROUTING],
                list(inspect.signature(server[name]).parameters),
                'arguments of %s differ' % name)

    def test_endpoints_declare_expected_exceptions(self):
        for name, fn in _public_methods(manager.AgentManager).items():
            self.assertTrue(hasattr(fn, '__wrapped__'),
                            '%s lacks @rpc.expected_exceptions' % name)
