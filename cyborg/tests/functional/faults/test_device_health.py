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
"""A card turns unhealthy, or disappears, under a running server.

The simulated host has one Intel FPGA with two VFs; a server holds one VF
(its accelerator request Bound, its allocation in the real Placement). The
agent's resource tracker reads the host and reports over RPC to the
conductor on fake://; notifications are heard by a real listener. Each
test drives the host as a failing card would and checks, after one report
pass, what the scheduler sees (Placement's inventory and allocation
candidates), what the server keeps, and what the API and the
notifications say.
"""

import datetime

import fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils

from cyborg.agent import resource_tracker
from cyborg.common import rpc
from cyborg.conductor import rpcapi
from cyborg.db import api as db_api
from cyborg.drivers import base as drivers_base
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests.functional.conductor import test_notifications
from cyborg.tests import openstack_fixtures
from cyborg.tests import sysfs_tree

CARD = '0000:5e:00.0'
QUIET = 60


class TestDeviceHealth(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(openstack_fixtures.Placement())
        self.useFixture(openstack_fixtures.NovaEvents())
        self.host = self.placement.hostname
        self.rp = self.placement.adapter()
        self.conf.config(driver=['messagingv2'], transport_url='fake://',
                         group='oslo_messaging_notifications')
        rpc.init_notifier(self.conf.conf, url='fake://')
        self.addCleanup(rpc.cleanup_notifier)
        self.listener = self.useFixture(
            test_notifications.Listener(self.conf.conf, 'fake://'))
        self.log = self.useFixture(fixtures.FakeLogger())
        self.conf.config(quarantine_quiet_period=QUIET, group='conductor')
        self.sysfs = self.useFixture(sysfs_tree.SimulatedHost(
            self.conf, [('intel_fpga', CARD, dict(vfs=2))])).tree
        self.sysfs.aer_errors(CARD)
        self.sysfs.write(CARD, 'current_link_width', '16')
        self.tracker = resource_tracker.ResourceTracker(
            self.host, drivers_base.load(['intel_fpga_driver']), self.api)
        response = self.rp.post('/resource_providers',
                                json={'name': self.host})
        self.assertEqual(200, response.status_code, response.text)
        self.compute = response.json()['uuid']
        self.api.compute_node_rp(self.admin_context, hostname=self.host,
                                 rp_name=self.host)
        self.assertTrue(self.tracker.report())
        self.device = device_obj.Device.list(
            self.admin_context, filters={'hostname': self.host})[0]
        self.rp_uuid = deployable_obj.Deployable.list(
            self.admin_context,
            filters={'device_id': self.device.id})[0].rp_uuid
        self.assertEqual(states.DEVICE_HEALTHY, self.device.health)
        self.arq, self.instance = self._running_server()

    def _running_server(self):
        """An instance holding one VF: its ARQ Bound, its allocation."""
        profile = db_utils.create_profile(
            self.admin_context, groups=[{'resources:FPGA': '1'}])
        arq = db_utils.create_arqs(self.admin_context, profile)[0]
        instance = uuidutils.generate_uuid()
        response = self.rp.put('/allocations/%s' % instance, json={
            'allocations': {self.rp_uuid: {'resources': {'FPGA': 1}}},
            'project_id': 'p1', 'user_id': 'u1',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})
        self.assertEqual(204, response.status_code, response.text)
        self.api.arq_apply_patch(self.admin_context, {arq.uuid: {
            'hostname': self.host, 'device_rp_uuid': self.rp_uuid,
            'instance_uuid': instance}})
        self.assertEqual(states.BOUND, self._arq(arq).state)
        return arq, instance

    def _arq(self, arq=None):
        return arq_obj.AcceleratorRequest.get_by_uuid(
            self.admin_context, (arq or self.arq).uuid)

    def _device(self):
        return device_obj.Device.get_by_uuid(self.admin_context,
                                             self.device.uuid)

    def _inventory(self):
        response = self.rp.get('/resource_providers/%s/inventories'
                               % self.rp_uuid)
        return response.json()['inventories']['FPGA']

    def _schedulable(self):
        """Whether a new server asking for an FPGA could land on the card."""
        response = self.rp.get('/allocation_candidates', params={
            'resources': 'FPGA:1', 'in_tree': self.compute})
        self.assertEqual(200, response.status_code, response.text)
        return self.rp_uuid in response.json()['provider_summaries']

    def _allocation(self):
        return self.rp.get('/allocations/%s' % self.instance).json()[
            'allocations']

    def _health_notifications(self, count):
        """The first ``count`` device.health.update payloads.

        setUp's report and bind sent device.create and bind.end first.
        """
        heard = [n for n in self.listener.wait_for(2 + count)
                 if n['event_type'] == 'device.health.update']
        return [n['payload']['cyborg_object.data'] for n in heard]

    def _assert_quarantined(self):
        self.assertEqual(2, self._inventory()['reserved'])
        self.assertEqual(2, self._inventory()['total'])
        self.assertFalse(self._schedulable())
        # The running server keeps its accelerator.
        self.assertEqual(states.BOUND, self._arq().state)
        self.assertIn(self.rp_uuid, self._allocation())

    def test_error_counter_rises_then_stops(self):
        self.assertTrue(self._schedulable())
        self.sysfs.aer_errors(CARD, fatal=3)
        self.assertTrue(self.tracker.report())

        device = self._device()
        self.assertEqual(states.DEVICE_UNHEALTHY, device.health)
        self.assertEqual(['%s: 3 new fatal AER error(s), 3 in all' % CARD],
                         device.health_reasons)
        self.assertIsNotNone(device.quarantined_at)
        self._assert_quarantined()
        self.assertIn(self.arq.uuid, self.log.output)
        self.assertIn(self.instance, self.log.output)
        (quarantined,) = self._health_notifications(1)
        self.assertEqual({
            'uuid': self.device.uuid, 'hostname': self.host,
            'health': 'unhealthy', 'health_reasons': device.health_reasons,
            'quarantined': True,
            'accelerator_requests': [{'uuid': self.arq.uuid,
                                      'state': states.BOUND,
                                      'instance_uuid': self.instance}],
        }, quarantined)

        # The counter stays: healthy again, still quarantined for the
        # quiet period, which the periodic pass then sees out.
        self.assertTrue(self.tracker.report())
        device = self._device()
        self.assertEqual((states.DEVICE_HEALTHY, []),
                         (device.health, device.health_reasons))
        self.assertIsNotNone(device.quarantined_at)
        self.conductor.manager.reconciler.release_recovered(
            self.admin_context)
        self._assert_quarantined()

        # The quiet period passes (its start moved back rather than the
        # clock forward).
        db_api.update(self.admin_context, 'device', self.device.uuid, {
            'health_changed_at': timeutils.utcnow() - datetime.timedelta(
                seconds=QUIET)})
        self.conductor.manager.reconciler.release_recovered(
            self.admin_context)
        self.conductor.manager.reconciler.run(self.admin_context)
        self.assertIsNone(self._device().quarantined_at)
        self.assertEqual(0, self._inventory()['reserved'])
        self.assertTrue(self._schedulable())
        _, recovered, released = self._health_notifications(3)
        self.assertEqual(('healthy', True), (recovered['health'],
                                             recovered['quarantined']))
        self.assertEqual(('healthy', False), (released['health'],
                                              released['quarantined']))

    def test_recovered_on_report_after_quiet_period(self):
        self.conf.config(quarantine_quiet_period=0, group='conductor')
        self.sysfs.aer_errors(CARD, fatal=1)
        self.tracker.report()
        self._assert_quarantined()
        self.tracker.report()
        self.assertIsNone(self._device().quarantined_at)
        self.assertEqual(0, self._inventory()['reserved'])

    def test_operator_release(self):
        self.sysfs.write(CARD, 'current_link_width', '0')
        self.tracker.report()
        self.assertEqual(['%s: PCI link down (width 0, speed None)' % CARD],
                         self._device().health_reasons)
        self._assert_quarantined()

        self.api.device_release(self.admin_context, self.device.uuid)
        self.assertIsNone(self._device().quarantined_at)
        self.assertEqual(0, self._inventory()['reserved'])
        # Still unhealthy for the same reason: not quarantined again...
        self.tracker.report(force=True)
        self.assertIsNone(self._device().quarantined_at)
        # ...until the host shows something new.
        self.sysfs.bind(CARD, 'vfio-pci')
        self.tracker.report()
        self.assertIsNotNone(self._device().quarantined_at)
        self.assertIn('%s: kernel driver vfio-pci bound, needs dfl-pci or '
                      'intel-fpga-pci' % CARD, self._device().health_reasons)

    def test_card_disappears_under_running_server(self):
        self.sysfs.remove_pci(CARD)
        self.assertTrue(self.tracker.report())
        # Kept while the server holds it, marked, and closed to new ones.
        device = self._device()
        self.assertIsNotNone(device.vanished_at)
        self._assert_quarantined()

        self.api.arq_delete(self.admin_context, uuids=[self.arq.uuid])
        self.assertEqual(204, self.rp.delete(
            '/allocations/%s' % self.instance).status_code)
        self.tracker.report(force=True)
        self.assertEqual([], device_obj.Device.list(
            self.admin_context, filters={'hostname': self.host}))

    def test_an_agent_that_says_nothing_quarantines_nothing(self):
        self.sysfs.aer_errors(CARD, fatal=5)
        report = self.tracker.discover()
        for device in report.devices:
            # As an agent sending DeviceReport 1.0 leaves them.
            del device.health
            del device.health_reasons
        self.api.report_host(self.admin_context, report)
        self.assertEqual(states.DEVICE_HEALTHY, self._device().health)
        self.assertIsNone(self._device().quarantined_at)

    def test_an_agent_capped_below_1_3_sends_no_health(self):
        # Conductors of the release before know no DeviceReport 1.1.
        self.conf.config(conductor='1.2', group='upgrade_levels')
        capped = resource_tracker.ResourceTracker(
            self.host, drivers_base.load(['intel_fpga_driver']),
            rpcapi.ConductorAPI())
        capped.report()
        self.sysfs.aer_errors(CARD, fatal=5)
        self.assertTrue(capped.report())
        self.assertEqual(states.DEVICE_HEALTHY, self._device().health)
        self.assertIsNone(self._device().quarantined_at)
        # setUp's tracker, uncapped, read the baseline: it sends the rise.
        self.assertTrue(self.tracker.report())
        self.assertIsNotNone(self._device().quarantined_at)
