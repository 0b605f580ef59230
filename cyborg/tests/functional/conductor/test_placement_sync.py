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
"""Placement sync and reconcile of a host against the real Placement.

Providers made, updated and deleted as the host's deployables change,
what an operator changed by hand repaired, and the traits Cyborg put
there told from those others did. Adoption of openstack-cyborg's
providers is in ``test_placement_sync_adoption``, Placement's conflicts
and outages in ``test_placement_sync_faults``.
"""

import fixtures
from oslo_db import exception as db_exc
from oslo_utils import timeutils

from cyborg.clients import placement
from cyborg.conductor import placement_sync
from cyborg.db import api as db_api
from cyborg.db import host as host_db
from cyborg import exception
from cyborg.objects import deployable as deployable_obj
from cyborg import states
from cyborg.tests import db_utils
from cyborg.tests.functional.conductor import placement_sync_case as case


class PlacementSyncTest(case.PlacementSyncTestCase):

    def test_compute_node_rp(self):
        self.assertEqual(self.compute_rp, placement_sync.compute_node_rp(
            self.client, self.hostname))
        self.assertRaises(exception.ResourceProviderNotFound,
                          placement_sync.compute_node_rp, self.client,
                          'no-such-' + self.hostname)

    def test_only_deployables_that_offer_become_providers(self):
        fpga = self._add_deployable('0000:5e:00.0', handles=4)
        self._add_deployable('0000:5f:00.0', rc=None)
        self._add_deployable('0000:60:00.0', handles=0)
        db_utils.create_device_tree(self.admin_context, hostname='other-host',
                                    resource_class='FPGA')
        self.assertEqual(1, self._sync()['created'])
        tree = self._get('/resource_providers?in_tree=%s' % self.compute_rp)
        self.assertEqual(
            [(self._name('0000:5e:00.0'), self._uuid('0000:5e:00.0'))],
            [(rp['name'], rp['uuid']) for rp in tree['resource_providers']
             if rp['uuid'] != self.compute_rp])
        rp_uuid = self._uuid('0000:5e:00.0')
        self.assertEqual({'FPGA': case.inventory(4)},
                         self._inventories(rp_uuid))
        self.assertEqual(self._expected_traits(), self._traits(rp_uuid))
        self.assertEqual(rp_uuid, deployable_obj.Deployable.get_by_uuid(
            self.admin_context, fpga.uuid).rp_uuid)

    def test_first_sync_creates_then_unchanged_pass_writes_nothing(self):
        fpga = self._add_deployable('0000:5e:00.0')
        custom = self._add_deployable('0000:5f:00.0', handles=2,
                                      rc=case.CUSTOM_RC,
                                      traits=('CUSTOM_ACCEL_TEST_FUNC',))
        summary = self._sync()
        self.assertEqual({'created': 2, 'updated': 0, 'deleted': 0,
                          'unchanged': 0, 'failed': 0}, summary)

        tree = self._get('/resource_providers?in_tree=%s' % self.compute_rp)
        children = {rp['name']: rp for rp in tree['resource_providers']
                    if rp['uuid'] != self.compute_rp}
        self.assertEqual({self._name('0000:5e:00.0'),
                          self._name('0000:5f:00.0')}, set(children))
        for pci, deployable in (('0000:5e:00.0', fpga),
                                ('0000:5f:00.0', custom)):
            rp = children[self._name(pci)]
            self.assertEqual(self._uuid(pci), rp['uuid'])
            self.assertEqual(self.compute_rp, rp['parent_provider_uuid'])
            self.assertEqual(rp['uuid'], deployable_obj.Deployable.get_by_uuid(
                self.admin_context, deployable.uuid).rp_uuid)
        fpga_rp, custom_rp = self._uuid('0000:5e:00.0'), self._uuid(
            '0000:5f:00.0')
        self.assertEqual(self._expected_traits(), self._traits(fpga_rp))
        self.assertEqual({'FPGA': case.inventory(8)},
                         self._inventories(fpga_rp))
        self.assertEqual({'CUSTOM_ACCEL_TEST_FUNC', 'OWNER_CYBORG'},
                         self._traits(custom_rp))
        self.assertEqual({case.CUSTOM_RC: case.inventory(2)},
                         self._inventories(custom_rp))
        self._get('/resource_classes/%s' % case.CUSTOM_RC)
        self.assertEqual(204, self.direct.get(
            '/traits/CUSTOM_ACCEL_TEST_FUNC').status_code)
        # Nova's provider is left as it was.
        self.assertEqual(set(), self._traits(self.compute_rp))
        self.assertEqual({}, self._inventories(self.compute_rp))

        self._assert_unchanged_pass()
        self.assertEqual(1, self.client.reads)

    def test_maintaining_reserves_total_across_later_syncs(self):
        deployable = self._add_deployable(
            '0000:5e:00.0', status=states.DEVICE_MAINTAINING)
        rp_uuid = self._uuid('0000:5e:00.0')
        self._sync()
        self.assertEqual({'FPGA': case.inventory(8, reserved=8)},
                         self._inventories(rp_uuid))

        # A later report changes the traits and the handles: still reserved.
        db_api.create(self.admin_context, 'attribute', {
            'deployable_id': deployable.id, 'key': 'trait9',
            'value': 'CUSTOM_FPGA_REGION_X'})
        db_api.update(self.admin_context, 'deployable', deployable.uuid,
                      {'num_accelerators': 6})
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual({'FPGA': case.inventory(6, reserved=6)},
                         self._inventories(rp_uuid))
        self.assertEqual(self._expected_traits('CUSTOM_FPGA_REGION_X'),
                         self._traits(rp_uuid))
        self._assert_unchanged_pass()

        device = db_api.get_by_id(self.admin_context, 'device',
                                  deployable.device_id)
        db_api.update(self.admin_context, 'device', device.uuid,
                      {'status': states.DEVICE_ENABLED})
        self._sync()
        self.assertEqual({'FPGA': case.inventory(6)},
                         self._inventories(rp_uuid))

    def test_device_gone_but_in_use_takes_no_new_allocations(self):
        deployable = self._add_deployable('0000:5e:00.0')
        device = db_api.get_by_id(self.admin_context, 'device',
                                  deployable.device_id)
        db_api.update(self.admin_context, 'device', device.uuid,
                      {'vanished_at': timeutils.utcnow()})
        self._sync()
        self.assertEqual({'FPGA': case.inventory(8, reserved=8)},
                         self._inventories(self._uuid('0000:5e:00.0')))

    def test_vanished_deployable_provider_deleted(self):
        keep = self._add_deployable('0000:5e:00.0')
        gone = self._add_deployable('0000:5f:00.0')
        self._sync()
        self._remove_deployable(gone)
        summary = self._sync()
        self.assertEqual(1, summary['deleted'])
        self.assertEqual(1, summary['unchanged'])
        self.assertEqual(404, self.direct.get(
            '/resource_providers/%s' % self._uuid('0000:5f:00.0')
        ).status_code)
        self.assertEqual(self._uuid('0000:5e:00.0'),
                         deployable_obj.Deployable.get_by_uuid(
                             self.admin_context, keep.uuid).rp_uuid)
        self._assert_unchanged_pass()

    def test_provider_without_resource_class_deleted_and_forgotten(self):
        deployable = self._add_deployable('0000:5e:00.0')
        self._sync()
        rc = db_api.get_all(self.admin_context, 'attribute', filters={
            'deployable_id': deployable.id, 'key': 'rc'})[0]
        db_api.delete(self.admin_context, 'attribute', rc.uuid)
        self.assertEqual(1, self._sync()['deleted'])
        self.assertIsNone(deployable_obj.Deployable.get_by_uuid(
            self.admin_context, deployable.uuid).rp_uuid)

    def test_provider_with_allocations_kept_until_released(self):
        gone = self._add_deployable('0000:5e:00.0')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        consumer = self._allocate(rp_uuid)
        self._remove_deployable(gone)
        summary = self._sync()
        self.assertEqual({'created': 0, 'updated': 0, 'deleted': 0,
                          'unchanged': 0, 'failed': 1}, summary)
        self._get('/resource_providers/%s' % rp_uuid)

        self.assertEqual(204, self.direct.delete(
            '/allocations/%s' % consumer).status_code)
        self.assertEqual(1, self._sync()['deleted'])
        self.assertEqual(404, self.direct.get(
            '/resource_providers/%s' % rp_uuid).status_code)

    def test_repairs_provider_deleted_by_hand(self):
        self._add_deployable('0000:5e:00.0')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        self.assertEqual(204, self.direct.delete(
            '/resource_providers/%s' % rp_uuid).status_code)
        self.assertEqual(1, self._sync()['created'])
        self.assertEqual(self._expected_traits(), self._traits(rp_uuid))
        self.assertEqual({'FPGA': case.inventory(8)},
                         self._inventories(rp_uuid))
        self._assert_unchanged_pass()

    def test_repairs_traits_removed_by_hand_keeps_added_ones(self):
        self._add_deployable('0000:5e:00.0')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        self._put('/resource_providers/%s/traits' % rp_uuid,
                  traits=['OWNER_CYBORG', 'HW_CPU_X86_AVX2'])
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual(self._expected_traits('HW_CPU_X86_AVX2'),
                         self._traits(rp_uuid))
        self._assert_unchanged_pass()

    def _set_function(self, deployable, function):
        for row in db_api.get_all(self.admin_context, 'attribute', filters={
                'deployable_id': deployable.id, 'key': 'trait9'}):
            db_api.delete(self.admin_context, 'attribute', row.uuid)
        db_api.create(self.admin_context, 'attribute', {
            'deployable_id': deployable.id, 'key': 'trait9',
            'value': function})

    def test_takes_off_only_traits_it_put_there(self):
        deployable = self._add_deployable('0000:5e:00.0')
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_A')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        # An operator's trait, and one a flavor of the earlier service
        # asks for, put there by hand.
        for trait in ('CUSTOM_RACK_7', 'CUSTOM_NVIDIA_1EB8'):
            self.direct.put('/traits/%s' % trait)
        self._put('/resource_providers/%s/traits' % rp_uuid,
                  traits=sorted(self._expected_traits(
                      'CUSTOM_FPGA_FUNCTION_ID_A', 'CUSTOM_RACK_7',
                      'CUSTOM_NVIDIA_1EB8')))

        # Reprogrammed: the function Cyborg put there goes, the new one
        # comes, and what others put there stays, through every update.
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_B')
        self.assertEqual(1, self._sync()['updated'])
        others = ('CUSTOM_RACK_7', 'CUSTOM_NVIDIA_1EB8')
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_B', *others),
            self._traits(rp_uuid))
        db_api.update(self.admin_context, 'deployable', deployable.uuid,
                      {'num_accelerators': 6})
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_B', *others),
            self._traits(rp_uuid))
        self._assert_unchanged_pass()

        # A trait Cyborg reports that was there already is not Cyborg's
        # to take off; one it reported once and stopped reporting is.
        self._set_function(deployable, 'CUSTOM_RACK_7')
        self._sync()
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_C')
        self._sync()
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_C', *others),
            self._traits(rp_uuid))

    def test_what_it_put_there_outlives_a_restart(self):
        deployable = self._add_deployable('0000:5e:00.0')
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_A')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        self.direct.put('/traits/CUSTOM_RACK_7')
        self._put('/resource_providers/%s/traits' % rp_uuid,
                  traits=sorted(self._expected_traits(
                      'CUSTOM_FPGA_FUNCTION_ID_A', 'CUSTOM_RACK_7')))

        # A conductor started afresh syncs the reprogrammed region: it
        # knows nothing but what the database holds.
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_B')
        self.client = placement.PlacementClient(retry_delay=0.01)
        placement.forget_known_names()
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_B',
                                  'CUSTOM_RACK_7'), self._traits(rp_uuid))

    def test_what_it_puts_there_is_recorded_before(self):
        deployable = self._add_deployable('0000:5e:00.0')
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_A')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        # The database is lost after the pass recorded what it is about
        # to put on the provider: the pass stops once Placement has it.
        write = host_db.set_placement_providers
        writes = []

        def write_once(*args):
            writes.append(args)
            if len(writes) > 1:
                raise db_exc.DBConnectionError()
            write(*args)

        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_B')
        with fixtures.MockPatchObject(host_db, 'set_placement_providers',
                                      write_once):
            self.assertRaises(db_exc.DBConnectionError, self._sync)
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_B'),
            self._traits(rp_uuid))

        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_C')
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_C'),
            self._traits(rp_uuid))
        self._assert_unchanged_pass()

    def test_repairs_inventory_changed_by_hand(self):
        self._add_deployable('0000:5e:00.0')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        self._put('/resource_providers/%s/inventories' % rp_uuid,
                  inventories={'FPGA': case.inventory(4, reserved=1)})
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual({'FPGA': case.inventory(8)},
                         self._inventories(rp_uuid))
        self._assert_unchanged_pass()

    def test_finishes_provider_whose_creation_was_cut_short(self):
        self._add_deployable('0000:5e:00.0')
        rp_uuid = self._uuid('0000:5e:00.0')
        self._post_provider(self._name('0000:5e:00.0'), uuid=rp_uuid,
                            parent=self.compute_rp)
        # An earlier build's create cut short, no deployable wanting it.
        former = self._former_uuid('0000:5f:00.0')
        self._post_provider(self._name('0000:5f:00.0'), uuid=former,
                            parent=self.compute_rp)
        self.assertEqual({'created': 0, 'updated': 1, 'deleted': 1,
                          'unchanged': 0, 'failed': 0}, self._sync())
        self.assertEqual(self._expected_traits(), self._traits(rp_uuid))
        self.assertEqual({'FPGA': case.inventory(8)},
                         self._inventories(rp_uuid))
        self.assertEqual({self._name('0000:5e:00.0'): rp_uuid},
                         self._children())

    def test_foreign_providers_untouched(self):
        deployable = self._add_deployable('0000:5e:00.0')
        # Someone else took the name Cyborg wants, under the compute node.
        taken = self._post_provider(self._name('0000:5e:00.0'),
                                    parent=self.compute_rp)['uuid']
        # Nova's own child provider, e.g. a vGPU, with traits and inventory.
        nova_child = self._post_provider(self.hostname + '_pci_0000_81_00_0',
                                         parent=self.compute_rp)['uuid']
        self._put('/resource_providers/%s/inventories' % nova_child,
                  inventories={'VGPU': case.inventory(4)})
        self._put('/resource_providers/%s/traits' % nova_child,
                  traits=['HW_CPU_X86_AVX2'])
        with self.assertLogs(placement_sync.LOG.logger, 'ERROR') as logs:
            summary = self._sync()
        self.assertIn(taken, logs.output[0])
        self.assertEqual({'created': 0, 'updated': 0, 'deleted': 0,
                          'unchanged': 0, 'failed': 1}, summary)
        self.assertEqual(set(), self._traits(taken))
        self.assertEqual({}, self._inventories(taken))
        self.assertEqual({'HW_CPU_X86_AVX2'}, self._traits(nova_child))
        self.assertEqual({'VGPU': case.inventory(4)},
                         self._inventories(nova_child))
        self.assertIsNone(deployable_obj.Deployable.get_by_uuid(
            self.admin_context, deployable.uuid).rp_uuid)
        # What the foreign providers look like is remembered too.
        self.client.requests.clear()
        self._sync()
        self.assertEqual(0, self.client.writes)
        self.assertEqual(1, self.client.reads)
