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
"""The agent service: waiting for Placement, serving, reporting."""

import threading

import fixtures
import oslo_messaging as messaging

from cyborg.agent import cyborg17_rpcapi
from cyborg.agent import older_conductor
from cyborg.agent import rpcapi
from cyborg.agent import service
from cyborg.common import service as common_service
from cyborg.conductor import rpcapi as conductor_rpcapi
from cyborg.drivers import base as drivers_base
from cyborg.drivers import fake
from cyborg import exception
from cyborg.objects import base as objects_base
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import stand_ins
from cyborg.tests import sysfs_tree

GPU = '0000:3b:00.0'
MDEV = 'b1d7d1f2-5a9e-4d8e-9f0a-1c2b3d4e5f60'


class _Conductor:
    """A conductor RPC client whose Placement fails for one name."""

    def __init__(self, failing):
        self.failing = failing
        self.lookups = []

    def compute_node_rp(self, context, hostname, rp_name, timeout=None):
        self.lookups.append(rp_name)
        if rp_name == self.failing:
            raise exception.PlacementUnavailable(reason='HTTP 503')
        return 'rp-' + rp_name


class _OlderConductor:
    """openstack-cyborg 17.0.0's conductor: none of this release's methods."""

    target = messaging.Target(version='1.0')

    def report_data(self, context, hostname, driver_device_list):
        pass


class TestWaitForComputeNode(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(cyborg_fixtures.RPC())
        self.log = self.useFixture(fixtures.FakeLogger())
        self.conf.config(host='compute1')
        self.conf.config(resource_provider_name='compute1.example.org',
                         placement_wait_interval=1, group='agent')

    def test_waits_until_placement_knows_it(self):
        conductor = self.useFixture(stand_ins.StandInConductor(
            not_found=1, known={'compute1.example.org'})).endpoint
        self.assertEqual('compute1.example.org', service.wait_for_compute_node(
            conductor_rpcapi.ConductorAPI()))
        # Each check tries the option, then [DEFAULT] host.
        self.assertEqual(
            [('compute1.example.org', 'compute1.example.org'),
             ('compute1', 'compute1'),
             ('compute1.example.org', 'compute1.example.org')],
            conductor.lookups)
        self.assertIn('Waiting for Placement to know compute node resource '
                      'provider compute1.example.org or compute1 (attempt 1 '
                      'of 31)', self.log.output)
        self.assertNotIn('using compute1', self.log.output)

    def test_falls_back_to_the_host(self):
        conductor = self.useFixture(stand_ins.StandInConductor(
            known={'compute1'})).endpoint
        self.assertEqual('compute1', service.wait_for_compute_node(
            conductor_rpcapi.ConductorAPI()))
        self.assertEqual([('compute1.example.org', 'compute1.example.org'),
                          ('compute1', 'compute1')], conductor.lookups)
        self.assertIn('Placement knows no compute node resource provider '
                      'compute1.example.org; using compute1', self.log.output)

    def test_name_no_conductor_serves_yet_is_passed_over(self):
        # On the agents' topics a name that no conductor serves is
        # refused at once: Placement did not know it at their last pass.
        conductor = self.useFixture(stand_ins.StandInConductor(
            hosts=('compute1',))).endpoint
        self.assertEqual('compute1', service.wait_for_compute_node(
            conductor_rpcapi.AgentConductorAPI()))
        # The shared topic is asked whether its conductors are older; the
        # answer of one of this release leaves the name unserved.
        self.assertEqual([('compute1.example.org', 'compute1.example.org'),
                          ('compute1', 'compute1')], conductor.lookups)

    def test_placement_failing_is_no_reason_to_fall_back(self):
        # Placement could not say whether it has the first name: the host
        # is not taken for another.
        self.conf.config(placement_wait_retries=0, group='agent')
        conductor = _Conductor(failing='compute1.example.org')
        self.assertRaises(exception.ResourceProviderNotFound,
                          service.wait_for_compute_node, conductor)
        self.assertEqual(['compute1.example.org'], conductor.lookups)
        self.assertIn('(attempt 1 of 1): Placement cannot be reached: '
                      'HTTP 503', self.log.output)

    def test_gives_up_after_the_retries(self):
        self.conf.config(placement_wait_retries=0, group='agent')
        self.useFixture(stand_ins.StandInConductor(not_found=5))
        self.assertRaises(exception.ResourceProviderNotFound,
                          service.wait_for_compute_node,
                          conductor_rpcapi.ConductorAPI())
        self.assertIn('Placement knows no compute node resource provider '
                      'named compute1.example.org or compute1. Start '
                      'nova-compute on this host first, or set [agent] '
                      'resource_provider_name', self.log.output)

    def test_asks_again_when_no_conductor_answers(self):
        # No conductor serves yet: each check waits for an answer only as
        # long as the interval (the RPC timeout is a minute).
        self.useFixture(fixtures.Timeout(30, gentle=True))
        self.conf.config(placement_wait_retries=1, group='agent')
        self.assertRaises(exception.ResourceProviderNotFound,
                          service.wait_for_compute_node,
                          conductor_rpcapi.ConductorAPI())
        self.assertIn('(attempt 2 of 2): Service unavailable: no conductor '
                      'answered compute_node_rp', self.log.output)

    def test_waits_for_an_upgraded_conductor(self):
        # No limit: 17.0.0's conductors may run for hours.
        self.conf.config(placement_wait_retries=0, group='agent')
        older = common_service.RPCService(
            _OlderConductor(), conductor_rpcapi.TOPIC,
            objects_base.CyborgObjectSerializer(), host='conductor-17')
        older.start()
        found = []
        waiting = threading.Thread(target=lambda: found.append(
            service.wait_for_compute_node(conductor_rpcapi.ConductorAPI())))
        waiting.start()
        notice = 'it is older than this cyborg-agent'
        for _ in range(100):
            if notice in self.log.output:
                break
            waiting.join(0.1)
        older.stop()
        self.useFixture(stand_ins.StandInConductor(
            known={'compute1.example.org'}))
        waiting.join(30)
        self.assertEqual(['compute1.example.org'], found)
        # Once a minute, however often it asked.
        self.assertEqual(1, self.log.output.count(notice))
        self.assertIn('Upgrade cyborg-conductor on the controllers',
                      self.log.output)

    def test_older_answers(self):
        self.assertTrue(older_conductor.is_older(messaging.RemoteError(
            'NoSuchMethod', 'Endpoint does not support RPC method x')))
        self.assertTrue(older_conductor.is_older(
            messaging.UnsupportedVersion('1.3', method='report_host')))
        self.assertFalse(older_conductor.is_older(messaging.RemoteError(
            'ValueError', 'boom')))

    def test_notice_once_a_minute(self):
        now = [0.0]
        notice = older_conductor.Notice(clock=lambda: now[0])
        error = messaging.RemoteError('NoSuchMethod', 'no report_host')
        for now[0] in (0, 30, 59, 60, 61):
            notice.older('report_host', error)
        notice.answered()
        notice.older('report_host', error)
        self.assertEqual(3, self.log.output.count('older than this'))

    def test_compute_node_names(self):
        self.assertEqual(['compute1.example.org', 'compute1'],
                         service.compute_node_names())
        # Unset, the option is the FQDN, whatever it is.
        self.conf.config(resource_provider_name=None, group='agent')
        self.useFixture(fixtures.MonkeyPatch(
            'socket.getfqdn', lambda: 'localhost.localdomain'))
        self.assertEqual(['localhost.localdomain', 'compute1'],
                         service.compute_node_names())
        # A name is tried once.
        self.conf.config(host='localhost.localdomain')
        self.assertEqual(['localhost.localdomain'],
                         service.compute_node_names())


class TestAgentService(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tree = self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('nvidia_gpu', GPU, dict(mdev_types={'nvidia-222': 4}))])).tree
        self.conf.config(enable_hotplug_monitor=False, group='agent')
        self.conf.config(enabled_vgpu_types=['nvidia-222'],
                         group='gpu_devices')
        self.useFixture(cyborg_fixtures.RPC())
        self.conductor = self.useFixture(
            stand_ins.StandInConductor()).endpoint
        agent = service.AgentService(
            drivers_base.load(['fake_driver', 'nvidia_gpu_driver']),
            host='host1')
        agent.start()
        self.addCleanup(agent.stop)
        self.agent = agent
        self.agent_api = rpcapi.AgentAPI()

    def test_reports_at_start(self):
        (sent,) = self.conductor.wait_for_reports(1)
        self.assertEqual('host1', sent.hostname)
        self.assertEqual(
            [fake.DEPLOYABLE, GPU],
            [dep.name for dev in sent.devices for dep in dev.deployables])

    def test_reset_discovers_again_at_once(self):
        self.conductor.wait_for_reports(1)
        self.tree.nvidia_gpu('0000:af:00.0')
        # SIGHUP; the periodic report is a minute away.
        self.agent.reset()
        sent = self.conductor.wait_for_reports(2, timeout=20)[-1]
        self.assertIn('0000:af:00.0', [
            dep.name for dev in sent.devices for dep in dev.deployables])

    def test_create_and_remove_mdev(self):
        self.agent_api.create_mdev(self.context, 'host1', MDEV,
                                   'nvidia-222', GPU)
        self.assertEqual(MDEV, self.tree.read(
            GPU, 'mdev_supported_types/nvidia-222/create'))
        # The kernel made it; asking again changes nothing.
        self.tree.mdev(MDEV, GPU, 'nvidia-222')
        self.agent_api.create_mdev(self.context, 'host1', MDEV,
                                   'nvidia-222', GPU)
        self.agent_api.remove_mdev(self.context, 'host1', MDEV)
        self.assertEqual('1', self.tree.read(GPU, MDEV + '/remove'))

    def test_mdev_errors_reach_the_caller(self):
        for args, error in (
                ((MDEV, 'nvidia-999', GPU), exception.MdevTypeNotEnabled),
                (('not-a-uuid', 'nvidia-222', GPU),
                 exception.InvalidParameterValue),
                ((MDEV, 'nvidia-222', '3b:00.0'),
                 exception.InvalidParameterValue),
                ((MDEV, 'nvidia-222', '0000:3c:00.0'), exception.MdevFailed)):
            self.assertRaises(error, self.agent_api.create_mdev,
                              self.context, 'host1', *args)
        self.tree.mdev(MDEV, GPU, 'nvidia-222')
        error = self.assertRaises(exception.MdevFailed,
                                  self.agent_api.create_mdev, self.context,
                                  'host1', MDEV, 'nvidia-222',
                                  '0000:3b:00.1')
        self.assertIn('exists on 0000:3b:00.0 as nvidia-222', str(error))

    def test_removing_a_missing_mdev_is_fine(self):
        self.agent_api.remove_mdev(self.context, 'host1', MDEV)

    def test_17_0_0_calls_left_in_the_old_agents_queue(self):
        # This agent replaced 17.0.0's under the same name: the calls a
        # conductor sent that one, in its words, are carried out.
        legacy = cyborg17_rpcapi.AgentAPI()
        legacy.create_vgpu_mdev(self.context, 'host1', pci_addr=GPU,
                                asked_type='nvidia-222', ah_uuid=MDEV)
        self.assertEqual(MDEV, self.tree.read(
            GPU, 'mdev_supported_types/nvidia-222/create'))
        self.tree.mdev(MDEV, GPU, 'nvidia-222')
        legacy.remove_vgpu_mdev(self.context, 'host1', pci_addr=GPU,
                                asked_type='nvidia-222', ah_uuid=MDEV)
        self.assertEqual('1', self.tree.read(GPU, MDEV + '/remove'))
        # Checked as this release's calls are.
        self.assertRaises(exception.MdevTypeNotEnabled,
                          legacy.create_vgpu_mdev, self.context, 'host1',
                          pci_addr=GPU, asked_type='nvidia-999',
                          ah_uuid=MDEV)
