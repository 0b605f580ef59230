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
"""The devstack plugin gives each agent a broker virtual host and user.

Run as :mod:`devstack_plugin` runs the plugin, with its stand-ins;
``rabbitmqctl`` is one of them.
"""

from cyborg.tests.functional import devstack_plugin as plugin

VHOST_URL = 'rabbit://cyborg-compute-1:service-secret@192.0.2.10:5672/' \
    'cyborg-compute-1'


class TestAgentVirtualHosts(plugin.PluginTestCase):

    def test_all_in_one_node(self):
        calls = self.stack()
        self.assertEqual([
            ('rpc_backend_add_vhost', 'cyborg-compute-1'),
            ('rabbitmqctl', 'add_user', 'cyborg-compute-1', 'service-secret'),
            ('rabbitmqctl', 'set_permissions', '-p', 'cyborg-compute-1',
             'cyborg-compute-1', '.*', '.*', '.*'),
        ], plugin.named(calls, 'rpc_backend_add_vhost', 'rabbitmqctl'))
        conf = self.load_cyborg_conf()
        self.assertEqual(
            'rabbit://stackrabbit:service-secret@192.0.2.10:5672/'
            'cyborg-{host}', conf.conductor.agent_transport_url)
        # The agent alone reads its own file, kept from other users.
        agent_conf_file = self.conf_dir / 'cyborg-agent.conf'
        self.assertEqual(0o600, agent_conf_file.stat().st_mode & 0o777)
        agent_conf = plugin.read_ini(agent_conf_file)
        self.assertEqual(VHOST_URL, agent_conf['DEFAULT']['transport_url'])
        self.assertEqual('compute-1',
                         agent_conf['agent']['resource_provider_name'])
        self.assertIn(('run_process', 'cyborg-agent',
                       self.agent_command(self.conf_file)), calls)
        # The API and the conductor stay on devstack's virtual host.
        self.assertEqual(
            'rabbit://stackrabbit:service-secret@192.0.2.10:5672/',
            conf.transport_url)

    def test_controller_makes_every_compute_host_its_own(self):
        self.env.update(ENABLED_SERVICES=plugin.CONTROLLER +
                        ',cyborg-api,cyborg-cond',
                        CYBORG_AGENT_HOSTS='compute-1 compute-2')
        calls = self.stack()
        self.assertEqual(
            ['cyborg-compute-1', 'cyborg-compute-2'],
            [call[1] for call in plugin.named(calls,
                                              'rpc_backend_add_vhost')])
        self.assertFalse((self.conf_dir / 'cyborg-agent.conf').exists())
        self.assertTrue(self.load_cyborg_conf().conductor.agent_transport_url)

    def test_compute_node_without_the_broker(self):
        self.env.update(ENABLED_SERVICES='n-cpu,cyborg-agent')
        calls = self.stack()
        self.assertEqual([], plugin.named(calls, 'rpc_backend_add_vhost',
                                          'rabbitmqctl'))
        self.assertEqual(VHOST_URL, plugin.read_ini(
            self.conf_dir / 'cyborg-agent.conf')['DEFAULT']['transport_url'])

    def test_turned_off(self):
        self.env.update(CYBORG_AGENT_VHOSTS='False')
        calls = self.stack()
        self.assertEqual([], plugin.named(calls, 'rpc_backend_add_vhost',
                                          'rabbitmqctl'))
        self.assertIsNone(self.load_cyborg_conf().conductor.
                          agent_transport_url)
        self.assertIn(('run_process', 'cyborg-agent',
                       '%s/cyborg-agent --config-file %s' % (
                           plugin.STUB_BIN, self.conf_file)), calls)
