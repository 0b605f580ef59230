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
from cyborg.tests import stand_ins


class TestAgentRPCAPI(rpc_contract.RPCAPIContract, base.TestCase):

    client_class = rpcapi.AgentAPI
    manager_class = manager.AgentManager
    # Client arguments that pick the server and the wait, not sent along.
    routing = ('host', 'timeout')
    # 17.0.0's methods, for calls its agent left in the queue.
    server_only = ('fpga_program', 'create_vgpu_mdev', 'remove_vgpu_mdev')

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

    def test_program_sends_allow_shell_from_1_1(self):
        self.useFixture(fixtures.RPC())
        agent = self.useFixture(stand_ins.StandInAgent('host9')).endpoint
        api = rpcapi.AgentAPI()
        api.program(self.context, 'host9', 'region', bitstream_id='b',
                    allow_shell=True)
        api.program(self.context, 'host9', 'region', bitstream_id='b')
        self.assertEqual([True, False], [
            kwargs['allow_shell'] for kwargs in agent.called('program')])

    def test_capped_at_1_0_a_bind_is_sent_a_shell_update_refused(self):
        # An agent of 1.0 cannot be told that it may not flash a shell:
        # a shell update is not sent to it at all.
        self.useFixture(fixtures.RPC())
        self.conf.config(agent='1.0', group='upgrade_levels')
        api = rpcapi.AgentAPI()
        with mock.patch.object(api.client, 'prepare',
                               wraps=api.client.prepare) as prepare:
            self.assertRaises(exception.ServiceUnavailable, api.program,
                              self.context, 'host9', 'region',
                              bitstream_id='b', timeout=0.1)
            self.assertEqual('1.0', prepare.call_args.kwargs['version'])
            prepare.reset_mock()
            error = self.assertRaises(
                exception.BitstreamRejected, api.program, self.context,
                'host9', 'region', bitstream_id='b', allow_shell=True)
        self.assertIn('RPC version 1.1', str(error))
        # Nothing was sent to a host.
        self.assertEqual([], [c for c in prepare.call_args_list
                              if 'server' in c.kwargs])
