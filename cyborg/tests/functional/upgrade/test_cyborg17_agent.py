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
"""A rolling upgrade's mixed hours, with real processes over RabbitMQ.

The controllers run this release; a compute host still runs the real
``cyborg-agent`` of openstack-cyborg 17.0.0 (from its virtualenv, its
fake driver): its device is recorded, placed and bound by our conductor.
The other way round, our agent on a host upgraded too early meets a
conductor that answers ``NoSuchMethod``, as 17.0.0's does: it keeps
running, says what to upgrade, and reports once our conductor answers.
"""

from oslo_messaging import target as messaging_target
import pytest

from cyborg.common import service
from cyborg.conductor import rpcapi
from cyborg.objects import base as objects_base
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.objects import device_profile
from cyborg.objects import host as host_obj
from cyborg import states
from cyborg.tests import functional
from cyborg.tests.functional.db import test_cyborg17
from cyborg.tests.functional import services

VENV = test_cyborg17.VENV
#: 17.0.0's agent reports every [DEFAULT] periodic_interval seconds.
INTERVAL = 2
#: What 17.0.0's fake driver offers, and its device's deployable name.
PROFILE = {'resources:FPGA': '1', 'trait:CUSTOM_FAKE_DEVICE': 'required'}


class _OlderConductor:
    """17.0.0's conductor, as far as our agent can tell: no method of ours."""

    target = messaging_target.Target(version='1.0')

    def report_data(self, context, hostname, driver_device_list):
        pass


@pytest.mark.long(minutes=3)
class TestMixedReleases(services.ServicesTestCase):

    def setUp(self):
        super().setUp()
        self.use_vhost()
        self.host = self.host_names(1)[0]
        self.add_host(self.host)

    def _devices(self):
        return device_obj.Device.list(self.ctx,
                                      filters={'hostname': self.host})

    def _deployables_now(self):
        return [dep for dev in self._devices()
                for dep in deployable_obj.Deployable.list(
                    self.ctx, filters={'device_id': dev.id})]

    def test_cyborg17_agent_reports_and_binds(self):
        if not (VENV / 'bin' / 'cyborg-agent').exists():
            self.skipTest('needs %s: run tools/setup-client-venvs.sh' % VENV)
        self.start_conductor(0)
        agent = self.start_service([str(VENV / 'bin' / 'cyborg-agent')],
                                   'agent-17', {
            'DEFAULT': {'host': self.host, 'transport_url': self.rabbit,
                        'debug': 'true', 'periodic_interval': INTERVAL},
            'agent': {'enabled_drivers': 'fake_driver',
                      'resource_provider_name': self.nodes[self.host]},
            'placement': dict(self.placement.conf,
                              endpoint_override=self.placement.url),
        })
        # Within one report interval once the agent has started.
        functional.wait('the device of 17.0.0 in Placement',
                        lambda: self.children(self.host), timeout=60)
        self.rpc.device_profile_create(self.ctx, device_profile.DeviceProfile(
            self.ctx, name='fake', groups=[PROFILE]))
        (device,) = self._devices()
        self.start_api()
        self.assertEqual([device.uuid], [
            d['uuid'] for d in self.request('GET', '/devices').json()[
                'devices'] if d['hostname'] == self.host])
        self.assertEqual((states.DEVICE_FPGA, '0xABCD'),
                         (device.type, device.vendor))
        self.assertEqual(self.host, host_obj.Host.get_by_hostname(
            self.ctx, self.host).cyborg17_server)
        (rp_uuid,) = self.children(self.host).values()
        self.assertIn('CUSTOM_FAKE_DEVICE', self.rp.get(
            '/resource_providers/%s/traits' % rp_uuid).json()['traits'])
        arq, _rp = self.boot(self.host, rp_uuid, profile='fake')
        self.assertEqual('TEST_PCI', arq.attach_handle_type)
        # Its next reports change nothing and keep the handle in use.
        agent_log = agent.log()
        functional.wait('another report', lambda: agent.log().count(
            'report_data') > agent_log.count('report_data') or
            len(agent.log()) > len(agent_log) + 2000, timeout=30)
        self.assertEqual(states.BOUND, self.reload_arq(arq).state)
        self.assertIsNone(agent.proc.poll())
        # The host's turn: our agent takes over the same device and
        # provider, and the bound ARQ keeps its handle.
        self.assertEqual(0, agent.stop())
        ours = self.start_agent(self.host,
                                agent={'enabled_drivers': 'fake_driver'})
        functional.wait('our agent in charge', lambda: host_obj.Host.
                        get_by_hostname(self.ctx, self.host).
                        cyborg17_server is None, timeout=60)
        functional.wait('its report', lambda: 'Reported 1 device(s)' in
                        ours.log(), timeout=60)
        self.assertEqual(['FakeDevice'],
                         [d.name for d in self._deployables_now()])
        self.assertEqual([device.uuid], [d.uuid for d in self._devices()])
        self.assertEqual({rp_uuid}, set(self.children(self.host).values()))
        arq_now = self.reload_arq(arq)
        self.assertEqual((states.BOUND, arq.attach_handle_id),
                         (arq_now.state, arq_now.attach_handle_id))

    def test_our_agent_waits_for_an_upgraded_conductor(self):
        older = service.RPCService(
            _OlderConductor(), rpcapi.TOPIC,
            objects_base.CyborgObjectSerializer(), host='conductor-17')
        older.start()
        self.addCleanup(older.stop)
        agent = self.start_agent(self.host)
        notice = 'it is older than this cyborg-agent'
        functional.wait('the agent saying so',
                        lambda: notice in agent.log(), timeout=60)
        self.assertIsNone(agent.proc.poll())
        self.assertIn('Upgrade cyborg-conductor on the controllers',
                      agent.log())
        older.stop()
        self.start_conductor(0)
        functional.wait('the agent reporting', self._devices, timeout=60)
        self.wait_for_placement()
        self.assertIsNone(agent.proc.poll())
        self.assertEqual(1, agent.log().count(notice))
        self.assertNotIn('Traceback', agent.log())
        self.assertIsNone(host_obj.Host.get_by_hostname(
            self.ctx, self.host).cyborg17_server)
