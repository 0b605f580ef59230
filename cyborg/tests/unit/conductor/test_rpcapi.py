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

from cyborg.conductor import agent_topics
from cyborg.conductor import manager
from cyborg.conductor import rpcapi
from cyborg import exception
from cyborg.tests import base
from cyborg.tests import fixtures
from cyborg.tests import rpc_contract


class TestConductorRPCAPI(rpc_contract.RPCAPIContract, base.TestCase):

    client_class = rpcapi.ConductorAPI
    manager_class = manager.ConductorManager
    routing = ('timeout',)
    # openstack-cyborg 17.0.0's agents call it (cyborg17_agents).
    server_only = ('report_data',)

    def test_no_conductor_is_service_unavailable(self):
        # Callers (the API, the agent) answer 503 or retry, never 500.
        self.useFixture(fixtures.RPC())
        conductor = rpcapi.ConductorAPI()  # registers the RPC options
        self.conf.config(rpc_response_timeout=0.1)
        error = self.assertRaises(
            exception.ServiceUnavailable,
            conductor.arq_delete, self.context, uuids=['x'])
        self.assertIn('arq_delete', str(error))


class TestAgentTopicRPCAPI(rpc_contract.RPCAPIContract, base.TestCase):
    """Agents' topics serve the report calls, and nothing else."""

    client_class = rpcapi.AgentConductorAPI
    manager_class = agent_topics.HostEndpoint
    routing = ('timeout',)

    def test_same_version_as_the_shared_topic(self):
        self.assertEqual(rpcapi.ConductorAPI.RPC_API_VERSION,
                         self.client_class.RPC_API_VERSION)
