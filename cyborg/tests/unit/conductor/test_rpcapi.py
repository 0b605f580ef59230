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
"""The conductor's RPC client and manager stay in step."""

import inspect

from cyborg.conductor import manager
from cyborg.conductor import rpcapi
from cyborg.tests import base


def _public_methods(cls):
    return {name: fn for name, fn in inspect.getmembers(cls,
                                                        inspect.isfunction)
            if not name.startswith('_')}


class TestConductorRPCAPI(base.TestCase):

    def test_versions_match(self):
        self.assertEqual(rpcapi.ConductorAPI.RPC_API_VERSION,
                         manager.ConductorManager.RPC_API_VERSION)
        self.assertEqual(manager.ConductorManager.RPC_API_VERSION,
                         manager.ConductorManager.target.version)

    def test_same_methods_and_arguments(self):
        client = _public_methods(rpcapi.ConductorAPI)
        server = _public_methods(manager.ConductorManager)
        self.assertEqual(sorted(client), sorted(server))
        for name, fn in client.items():
            self.assertEqual(
                list(inspect.signature(fn).parameters),
                list(inspect.signature(server[name]).parameters),
                'arguments of %s differ' % name)
