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

from unittest import mock

from cyborg.agent import manager
from cyborg.agent import rpcapi
from cyborg import exception
from cyborg.tests import base
from cyborg.tests import fixtures
from cyborg.tests import rpc_contract


class TestAgentRPCAPI(rpc_contract.RPCAPIContract, base.TestCase):

    client_class = rpcapi.AgentAPI
    manager_class = manager.AgentManager
    # Client arguments that pick the server and the wait, not sent along.
    routing = ('host', 'timeout')

    def test_silent_agent_is_service_unavailable(self):
        self.useFixture(fixtures.RPC())
        agent = rpcapi.AgentAPI()
        error = self.assertRaises(
            exception.ServiceUnavailable, agent.program, self.context,
            'host9', 'region', bitstream_id='b', timeout=0.1)
        self.assertIn('host9', str(error))

    def test_program_asks_for_heartbeats(self):
        # A long call: an agent that dies in it is noticed within
        # rpc_response_timeout, not at the end of the call's timeout.
        self.useFixture(fixtures.RPC())
        agent = rpcapi.AgentAPI()
        self.conf.config(rpc_response_timeout=7)
        with mock.patch.object(agent.client, 'prepare',
                               wraps=agent.client.prepare) as prepare:
            self.assertRaises(exception.ServiceUnavailable, agent.program,
                              self.context, 'host9', 'region',
                              bitstream_id='b', timeout=0.1)
        self.assertEqual(7, prepare.call_args.kwargs['call_monitor_timeout'])
        self.assertEqual(0.1, prepare.call_args.kwargs['timeout'])
