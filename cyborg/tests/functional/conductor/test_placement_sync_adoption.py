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
"""Providers of openstack-cyborg and of earlier builds, adopted by the sync.

The sync takes over, under the same uuids and with their allocations,
the providers openstack-cyborg 17.0.0 made for the host's deployables,
and only those; providers of earlier builds of Cyborg keep their uuids.
"""

import uuid as uuid_lib

from cyborg.conductor import placement_sync
from cyborg.db import api as db_api
from cyborg.objects import deployable as deployable_obj
from cyborg.tests.functional.conductor import placement_sync_case as case


class TestPlacementSyncAdoption(case.PlacementSyncTestCase):

    def test_adopts_providers_of_openstack_cyborg(self):
        # What openstack-cyborg and Nova left: an FPGA provider without
        # OWNER_CYBORG and a GPU provider with it, each with an instance's
        # allocation, and a provider of a device Cyborg does not report.
        fpga = self._add_deployable('0000:5e:00.0', handles=4)
        gpu = self._add_deployable('0000:3b:00.0', handles=1, rc='PGPU',
                                   traits=('CUSTOM_NVIDIA_1EB8',))
        fpga_rp = self._legacy_provider(
            '0000:5e:00.0', total=4,
            traits=('CUSTOM_FPGA_INTEL', 'CUSTOM_FPGA_INTEL_ARRIA10'))
        gpu_rp = self._legacy_provider(
            '0000:3b:00.0', rc='PGPU', total=1,
            traits=('OWNER_CYBORG', 'CUSTOM_NVIDIA_1EB8'))
        unreported = self._legacy_provider(
            '0000:af:00.0', rc='CUSTOM_ASCEND', total=1,
            traits=('CUSTOM_HUAWEI_ASCEND',))
        fpga_vm = self._allocate(fpga_rp)
        gpu_vm = self._allocate(gpu_rp, rc='PGPU')
        before = self._children()

        with self.assertLogs(placement_sync.LOG.logger, 'INFO') as logs:
            summary = self._sync()
        # The GPU's provider already looked as Cyborg wants it.
        self.assertEqual({'created': 0, 'updated': 1, 'deleted': 0,
                          'unchanged': 1, 'failed': 0}, summary)
        self.assertEqual(1, sum('Adopting' in line and fpga_rp in line
                                for line in logs.output))
        # The same providers under the same uuids, and no new one.
        self.assertEqual(before, self._children())
        self.assertEqual({fpga_rp: {'FPGA': 1}}, self._allocations(fpga_vm))
        self.assertEqual({gpu_rp: {'PGPU': 1}}, self._allocations(gpu_vm))
        # Adopted, it keeps the traits the earlier service put there.
        self.assertEqual(self._expected_traits('CUSTOM_FPGA_INTEL_ARRIA10'),
                         self._traits(fpga_rp))
        self.assertEqual({'FPGA': case.inventory(4)},
                         self._inventories(fpga_rp))
        self.assertEqual({'OWNER_CYBORG', 'CUSTOM_NVIDIA_1EB8'},
                         self._traits(gpu_rp))
        self.assertEqual({'PGPU': case.inventory(1)},
                         self._inventories(gpu_rp))
        for deployable, rp_uuid in ((fpga, fpga_rp), (gpu, gpu_rp)):
            self.assertEqual(rp_uuid, deployable_obj.Deployable.get_by_uuid(
                self.admin_context, deployable.uuid).rp_uuid)
        # Not Cyborg's to delete: it lacks OWNER_CYBORG and no deployable
        # claims it.
        self.assertEqual({'CUSTOM_HUAWEI_ASCEND'}, self._traits(unreported))
        self.assertEqual({'CUSTOM_ASCEND': case.inventory(1)},
                         self._inventories(unreported))
        self._assert_unchanged_pass()

        # Once adopted, a provider is Cyborg's like one it made: the
        # deployable's removal deletes it when its instance has gone.
        self.assertEqual(204, self.direct.delete(
            '/allocations/%s' % fpga_vm).status_code)
        self._remove_deployable(fpga)
        self.assertEqual(1, self._sync()['deleted'])
        self.assertEqual(404, self.direct.get(
            '/resource_providers/%s' % fpga_rp).status_code)

    def test_adopts_provider_the_deployable_records(self):
        # openstack-cyborg named an Intel FPGA with SR-IOV, and its
        # provider, after its last VF; the converted deployable has our
        # name and records that provider. A deployable recording a
        # provider whose uuid its name does not derive gets its own.
        fpga = self._add_deployable('0000:5e:00.0', handles=2)
        old_rp = self._legacy_provider('0000:5e:00.2', total=2,
                                       traits=(case.VENDOR_TRAIT,))
        foreign = self._post_provider('foreign-' + self.hostname,
                                      parent=self.compute_rp)['uuid']
        other = self._add_deployable('0000:af:00.0', handles=1)
        for deployable, rp_uuid in ((fpga, old_rp), (other, foreign)):
            db_api.update(self.admin_context, 'deployable', deployable.uuid,
                          {'rp_uuid': rp_uuid})
        vm = self._allocate(old_rp)

        summary = self._sync()
        self.assertEqual({'created': 1, 'updated': 1, 'deleted': 0,
                          'unchanged': 0, 'failed': 0}, summary)
        self.assertEqual({self._name('0000:5e:00.2'): old_rp,
                          'foreign-' + self.hostname: foreign,
                          self._name('0000:af:00.0'):
                              self._uuid('0000:af:00.0')},
                         self._children())
        self.assertEqual({old_rp: {'FPGA': 1}}, self._allocations(vm))
        self.assertEqual(self._expected_traits(), self._traits(old_rp))
        self.assertEqual({'FPGA': case.inventory(2)},
                         self._inventories(old_rp))
        self.assertEqual(set(), self._traits(foreign))
        for deployable, rp_uuid in ((fpga, old_rp),
                                    (other, self._uuid('0000:af:00.0'))):
            self.assertEqual(rp_uuid, deployable_obj.Deployable.get_by_uuid(
                self.admin_context, deployable.uuid).rp_uuid)
        self._assert_unchanged_pass()

    def test_adopts_only_what_openstack_cyborg_made(self):
        # The name and uuid openstack-cyborg would give the deployable's
        # provider, without OWNER_CYBORG, but not below the compute node.
        # (The name under another uuid: test_foreign_providers_untouched.)
        deployable = self._add_deployable('0000:5e:00.0')
        name = self._name('0000:5e:00.0')
        other = self._post_provider('nic-' + self.hostname,
                                    parent=self.compute_rp)['uuid']
        nested = self._post_provider(
            name, uuid=str(uuid_lib.uuid3(uuid_lib.NAMESPACE_DNS, name)),
            parent=other)['uuid']
        self.direct.put('/traits/CUSTOM_FPGA_INTEL')
        self._put('/resource_providers/%s/traits' % nested,
                  traits=['CUSTOM_FPGA_INTEL'])
        with self.assertLogs(placement_sync.LOG.logger, 'ERROR') as logs:
            summary = self._sync()
        self.assertIn(nested, logs.output[0])
        self.assertEqual(1, summary['failed'])
        self.assertEqual({'CUSTOM_FPGA_INTEL'}, self._traits(nested))
        self.assertEqual({}, self._inventories(nested))
        self.assertIsNone(deployable_obj.Deployable.get_by_uuid(
            self.admin_context, deployable.uuid).rp_uuid)

    def test_providers_of_earlier_builds_kept(self):
        # Earlier builds of Cyborg derived provider uuids as uuid5 in a
        # namespace of their own: such providers keep their uuids.
        fpga = self._add_deployable('0000:5e:00.0')
        former = self._former_uuid('0000:5e:00.0')
        self._legacy_provider('0000:5e:00.0', rp_uuid=former,
                              traits=sorted(self._expected_traits()))
        vm = self._allocate(former)
        self.assertEqual({'created': 0, 'updated': 0, 'deleted': 0,
                          'unchanged': 1, 'failed': 0}, self._sync())
        self.assertEqual({self._name('0000:5e:00.0'): former},
                         self._children())
        self.assertEqual({former: {'FPGA': 1}}, self._allocations(vm))
        self.assertEqual({'FPGA': case.inventory(8)},
                         self._inventories(former))
        self.assertEqual(former, deployable_obj.Deployable.get_by_uuid(
            self.admin_context, fpga.uuid).rp_uuid)
        self._assert_unchanged_pass()
