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
"""The conductor's inventory reconciliation, on SQLite."""

import datetime

import fixtures
from oslo_utils import uuidutils

from cyborg.common import pci_address
from cyborg.conductor import inventory
from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg.db import host as host_db
from cyborg.drivers import report
from cyborg import exception
from cyborg.objects import driver_report
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils

HOST = 'host1'
OWNER = 'conductor-a'
GPU = '0000:af:00.0'
MDEV = GPU + '_nvidia-222'


def fpga(address, vfs=2, traits=('CUSTOM_FPGA_INTEL',), model='PAC',
         in_use=()):
    handles = [report.pci_handle(pci_address.offset(address, vf + 1),
                                 in_use=vf in in_use)
               for vf in range(vfs)]
    return report.device(
        'FPGA', '8086', model, address,
        [report.deployable(address, 'intel_fpga', 'FPGA', traits, handles)],
        std_board_info={'product_id': '09c4'})


def gpu(mdevs=4):
    """A GPU whose vGPU type is a child of the physical GPU's deployable."""
    parent = report.deployable(GPU, 'nvidia_gpu', 'PGPU', [], [])
    child = report.deployable(
        MDEV, 'nvidia_gpu', 'VGPU', ['CUSTOM_NVIDIA_222'],
        [report.mdev_handle(GPU, 'nvidia-222') for _ in range(mdevs)],
        parent_name=GPU)
    return report.device('GPU', '10de', 'T4', GPU, [parent, child])


class TestInventory(base.TestCase):

    USES_DB = True

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger())

    def apply(self, *devices):
        return inventory.apply_report(
            self.admin_context,
            driver_report.HostReport(hostname=HOST, devices=list(devices)),
            OWNER)

    def rows(self, noun):
        return {row.id: row for row in db_api.get_all(self.admin_context,
                                                      noun)}

    def deployable(self, name):
        return db_api.get_all(self.admin_context, 'deployable',
                              filters={'name': name})[0]

    def handles(self, name):
        return db_api.get_all(self.admin_context, 'attach_handle', filters={
            'deployable_id': self.deployable(name).id})

    def bind(self, name):
        """An ARQ bound to a handle of deployable ``name``."""
        profile = db_utils.create_profile(self.admin_context,
                                          name=uuidutils.generate_uuid())
        arq = db_utils.create_arqs(self.admin_context, profile)[0]
        arq_db.update_state(self.admin_context, arq.uuid,
                            states.BIND_STARTED,
                            values={'hostname': HOST})
        return db_utils.bind_arq(self.admin_context, arq.uuid,
                                 self.deployable(name).id)

    def test_first_report_adds_everything(self):
        diff = self.apply(fpga('0000:5e:00.0', vfs=3), gpu())
        self.assertEqual(('0000:5e:00.0', GPU, MDEV), diff.added)
        self.assertEqual(((), (), ()),
                         (diff.removed, diff.changed, diff.vanished))
        devices = self.rows('device')
        self.assertEqual({HOST}, {d.hostname for d in devices.values()})
        self.assertEqual({None}, {d.vanished_at for d in devices.values()})
        # The new devices as they were stored, for their notifications.
        self.assertEqual(
            [(d.uuid, d.type, d.model) for d in devices.values()],
            [(d.uuid, d.type, d.model) for d in diff.devices_added])
        self.assertEqual((), diff.devices_removed)
        self.assertEqual(2, len(self.rows('controlpath_id')))
        self.assertEqual(3, len(self.handles('0000:5e:00.0')))
        self.assertEqual(
            [{'domain': '0000', 'bus': '5e', 'device': '00',
              'function': str(vf)} for vf in (1, 2, 3)],
            [h.attach_info for h in self.handles('0000:5e:00.0')])
        attributes = db_api.get_all(self.admin_context, 'attribute', filters={
            'deployable_id': self.deployable('0000:5e:00.0').id})
        self.assertEqual({'rc': 'FPGA', 'trait0': 'CUSTOM_FPGA_INTEL'},
                         {a.key: a.value for a in attributes})
        self.assertIn('3 added', self.log.output)

    def test_lease_released_after_apply(self):
        self.apply(fpga('0000:5e:00.0'))
        host = host_db.get(self.admin_context, HOST)
        self.assertIsNone(host.lease_owner)
        self.assertIsNone(host.lease_expires_at)

    def test_mdev_type_deployable_under_its_gpu(self):
        self.apply(gpu(mdevs=4))
        parent, child = self.deployable(GPU), self.deployable(MDEV)
        self.assertEqual((None, None), (parent.parent_id, parent.root_id))
        self.assertEqual((parent.id, parent.id),
                         (child.parent_id, child.root_id))
        kept = [h.id for h in self.handles(MDEV)][:2]

        diff = self.apply(gpu(mdevs=2))

        self.assertEqual((MDEV,), diff.changed)
        self.assertEqual(kept, [h.id for h in self.handles(MDEV)])
        self.assertEqual(child.uuid, self.deployable(MDEV).uuid)

    def test_no_change_writes_nothing(self):
        self.apply(fpga('0000:5e:00.0'), gpu())
        with db_utils.recorded_statements() as small:
            diff = self.apply(fpga('0000:5e:00.0'), gpu())
        self.assertFalse(diff)
        self.assertEqual(((), ()), (diff.devices_added, diff.devices_removed))
        self.assertEqual([], db_utils.writes(small, ignore_table='hosts'))

        self.apply(*[fpga('0000:%02x:00.0' % bus, vfs=8)
                     for bus in range(0x10, 0x30)])
        with db_utils.recorded_statements() as large:
            self.apply(*[fpga('0000:%02x:00.0' % bus, vfs=8)
                         for bus in range(0x10, 0x30)])
        self.assertEqual([], db_utils.writes(large, ignore_table='hosts'))
        # The tree is read in a fixed number of queries, whatever its size.
        self.assertEqual(len(small), len(large))

    def test_changes_keep_ids_and_status(self):
        self.apply(fpga('0000:5e:00.0', vfs=3), gpu())
        device = db_api.get_all(self.admin_context, 'device',
                                filters={'model': 'PAC'})[0]
        db_api.update(self.admin_context, 'device', device.uuid,
                      {'status': states.DEVICE_MAINTAINING})
        before = {noun: self.rows(noun) for noun in (
            'device', 'deployable', 'attach_handle', 'attribute')}

        diff = self.apply(
            fpga('0000:5e:00.0', vfs=2, model='PAC N3000',
                 traits=('CUSTOM_FPGA_INTEL', 'CUSTOM_FPGA_REGION_1')),
            gpu())

        self.assertEqual(('0000:5e:00.0',), diff.changed)
        self.assertEqual(((), ()), (diff.added, diff.removed))
        device = db_api.get(self.admin_context, 'device', device.uuid)
        self.assertEqual('PAC N3000', device.model)
        self.assertEqual(states.DEVICE_MAINTAINING, device.status)
        dep = self.deployable('0000:5e:00.0')
        self.assertEqual(2, dep.num_accelerators)
        handles = self.rows('attach_handle')
        self.assertLessEqual(set(handles), set(before['attach_handle']))
        self.assertEqual(len(before['attach_handle']) - 1, len(handles))
        for noun in ('device', 'deployable', 'attach_handle'):
            for row_id, row in self.rows(noun).items():
                self.assertEqual(before[noun][row_id].uuid, row.uuid)
        attributes = self.rows('attribute')
        self.assertLessEqual(set(before['attribute']), set(attributes))
        self.assertEqual(len(before['attribute']) + 1, len(attributes))

    def test_removed_device_is_deleted(self):
        self.apply(fpga('0000:5e:00.0'), gpu())
        diff = self.apply(gpu())
        self.assertEqual(('0000:5e:00.0',), diff.removed)
        self.assertEqual(1, len(self.rows('device')))
        self.assertEqual(1, len(self.rows('controlpath_id')))
        self.assertEqual({GPU, MDEV},
                         {d.name for d in self.rows('deployable').values()})
        self.assertEqual(4, len(self.rows('attach_handle')))
        self.assertEqual(
            {'rc', 'trait0'},
            {a.key for a in self.rows('attribute').values()})

    def test_removed_parent_and_child(self):
        self.apply(fpga('0000:5e:00.0'), gpu())
        diff = self.apply(fpga('0000:5e:00.0'))
        self.assertEqual((GPU, MDEV), diff.removed)
        self.assertEqual(1, len(self.rows('device')))

    def test_vanished_device_kept_until_released(self):
        self.apply(fpga('0000:5e:00.0'), gpu())
        arq = self.bind(MDEV)
        handles = {h.id for h in self.handles(MDEV)}

        diff = self.apply(fpga('0000:5e:00.0'))

        self.assertEqual((GPU, MDEV), diff.vanished)
        self.assertEqual((GPU, MDEV), diff.changed)
        self.assertEqual(((), ()), (diff.removed, diff.devices_removed))
        gpu_row = db_api.get_all(self.admin_context, 'device',
                                 filters={'type': 'GPU'})[0]
        self.assertIsNotNone(gpu_row.vanished_at)
        self.assertEqual(handles, {h.id for h in self.handles(MDEV)})
        self.assertIn(gpu_row.uuid, self.log.output)
        self.assertIn(arq.uuid, self.log.output)
        # Still gone and still held: nothing more changes.
        diff = self.apply(fpga('0000:5e:00.0'))
        self.assertEqual(((), (GPU, MDEV)), (diff.changed, diff.vanished))

        arq_db.unbind(self.admin_context, arq.uuid)
        diff = self.apply(fpga('0000:5e:00.0'))

        self.assertEqual((GPU, MDEV), diff.removed)
        self.assertEqual((), diff.vanished)
        # Deleted now, and only now.
        self.assertEqual([(gpu_row.uuid, 'GPU', 'T4')],
                         [(d.uuid, d.type, d.model)
                          for d in diff.devices_removed])
        self.assertEqual(['FPGA'],
                         [d.type for d in self.rows('device').values()])

    def test_vanished_device_reappears(self):
        self.apply(fpga('0000:5e:00.0'), gpu())
        arq = self.bind(MDEV)
        self.apply(fpga('0000:5e:00.0'))

        diff = self.apply(fpga('0000:5e:00.0'), gpu())

        self.assertEqual((GPU, MDEV), diff.changed)
        self.assertEqual(((), (), ()),
                         (diff.added, diff.removed, diff.vanished))
        self.assertEqual(((), ()), (diff.devices_added, diff.devices_removed))
        self.assertEqual({None}, {d.vanished_at
                                  for d in self.rows('device').values()})
        handle = db_api.get(self.admin_context, 'accelerator_request',
                            arq.uuid).attach_handle
        self.assertTrue(handle.in_use)
        self.assertEqual(MDEV, db_api.get_by_id(
            self.admin_context, 'deployable', handle.deployable_id).name)

    def test_held_handle_of_reported_device_kept(self):
        self.apply(fpga('0000:5e:00.0', vfs=1))
        arq = self.bind('0000:5e:00.0')

        diff = self.apply(fpga('0000:5e:00.0', vfs=0))

        self.assertEqual(('0000:5e:00.0',), diff.vanished)
        self.assertEqual([arq.attach_handle_id],
                         [h.id for h in self.handles('0000:5e:00.0')])

    def test_function_held_under_another_deployable_is_busy(self):
        # As openstack-cyborg 17.0.0 reported a card with SR-IOV on: one
        # deployable per VF. An instance holds the first VF.
        card = '0000:5e:00.0'
        vfs = [pci_address.offset(card, n) for n in (1, 2)]
        self.apply(report.device('QAT', '8086', 'QAT', card, [
            report.deployable(vf, 'intel_qat', 'CUSTOM_QAT', [],
                              [report.pci_handle(vf)]) for vf in vfs]))
        arq = self.bind(vfs[0])

        # Now one deployable for the card offers both VFs.
        diff = self.apply(fpga(card, vfs=2))

        self.assertEqual((vfs[0],), diff.vanished)
        self.assertEqual((vfs[1],), diff.removed)
        self.assertEqual([True, False],
                         [h.in_use for h in self.handles(card)])
        self.assertEqual(arq.attach_handle_id,
                         self.handles(vfs[0])[0].id)
        self.assertEqual(self.handles(card)[1].id,
                         self.bind(card).attach_handle_id)
        self.assertRaises(exception.AttachHandleUnavailable,
                          self.bind, card)

        arq_db.unbind(self.admin_context, arq.uuid)
        diff = self.apply(fpga(card, vfs=2))
        self.assertEqual((vfs[0],), diff.removed)
        self.assertEqual([False, True],
                         [h.in_use for h in self.handles(card)])

    def test_function_held_with_other_attach_info_is_busy(self):
        # A physical network added to the configuration changes the
        # attach info of a function an instance holds.
        card = '0000:5e:00.0'

        def nic(**extra):
            return report.device('NIC', '8086', 'E810', card, [
                report.deployable(card, 'generic_pci', 'CUSTOM_NIC', [],
                                  [report.pci_handle(card, **extra)])])

        self.apply(nic())
        arq = self.bind(card)
        diff = self.apply(nic(physical_network='physnet1'))

        self.assertEqual((card,), diff.vanished)
        handles = {h.id: h for h in self.handles(card)}
        self.assertTrue(handles.pop(arq.attach_handle_id).in_use)
        [new] = handles.values()
        self.assertEqual((True, 'physnet1'),
                         (new.in_use, new.attach_info['physical_network']))
        self.assertRaises(exception.AttachHandleUnavailable,
                          self.bind, card)

    def test_in_use_follows_the_host_not_arqs(self):
        self.apply(fpga('0000:5e:00.0', vfs=2, in_use=(0,)))
        first, second = self.handles('0000:5e:00.0')
        self.assertEqual((True, False), (first.in_use, second.in_use))
        arq = self.bind('0000:5e:00.0')
        self.assertEqual(second.id, arq.attach_handle_id)

        diff = self.apply(fpga('0000:5e:00.0', vfs=2))

        self.assertEqual(('0000:5e:00.0',), diff.changed)
        first, second = self.handles('0000:5e:00.0')
        self.assertEqual((False, True), (first.in_use, second.in_use))

    def test_invalid_report_writes_nothing(self):
        bad = fpga('0000:5e:00.0')
        bad.deployables.append(bad.deployables[0])
        self.assertRaises(exception.InvalidHostReport, self.apply,
                          fpga('0000:5f:00.0'), bad)
        self.assertEqual({}, self.rows('device'))

    def test_unknown_parent_is_invalid(self):
        device = gpu()
        device.deployables = device.deployables[1:]
        self.assertRaises(exception.InvalidHostReport, self.apply, device)


class TestHostLease(base.TestCase):

    USES_DB = True

    def setUp(self):
        super().setUp()
        self.now = datetime.datetime(2026, 1, 1)
        self.useFixture(fixtures.MockPatch(
            'oslo_utils.timeutils.utcnow', autospec=True,
            side_effect=lambda with_timezone=False: self.now))

    def advance(self, seconds):
        self.now += datetime.timedelta(seconds=seconds)

    def acquire(self, owner, seconds=60):
        return host_db.lease_acquire(self.admin_context, HOST, owner,
                                     seconds)

    def test_one_owner_at_a_time(self):
        self.assertTrue(self.acquire('a'))
        self.assertFalse(self.acquire('b'))
        self.assertTrue(self.acquire('a'))
        self.assertFalse(host_db.lease_release(self.admin_context,
                                               HOST, 'b'))
        self.assertTrue(host_db.lease_release(self.admin_context,
                                              HOST, 'a'))
        self.assertTrue(self.acquire('b'))

    def test_expired_lease_taken_over(self):
        self.assertTrue(self.acquire('a', seconds=60))
        self.advance(59)
        self.assertFalse(self.acquire('b'))
        self.advance(1)
        self.assertTrue(self.acquire('b'))
        self.assertEqual('b', host_db.get(self.admin_context,
                                          HOST).lease_owner)

    def test_busy_host_refuses_report(self):
        self.assertTrue(self.acquire('other-conductor'))
        host_report = driver_report.HostReport(
            hostname=HOST, devices=[fpga('0000:5e:00.0')])
        e = self.assertRaises(exception.HostLeaseHeld,
                              inventory.apply_report, self.admin_context,
                              host_report, OWNER)
        self.assertIn('other-conductor', str(e))
        self.assertEqual({}, {d.id: d for d in db_api.get_all(
            self.admin_context, 'device')})

    def test_lease_reusable_by_other_workflows(self):
        with inventory.host_lease(self.admin_context, HOST, 'a'):
            self.assertFalse(self.acquire('b'))
        self.assertTrue(self.acquire('b'))

    def test_lease_excludes_threads_of_one_conductor(self):
        # The RPC threads and the periodic pass of one process share its
        # owner name; they must not work on a host together all the same.
        with inventory.host_lease(self.admin_context, HOST, OWNER):
            e = self.assertRaises(exception.HostLeaseHeld,
                                  inventory.host_lease(
                                      self.admin_context, HOST,
                                      OWNER).__enter__)
            self.assertIn(OWNER + '/', str(e))
        with inventory.host_lease(self.admin_context, HOST, OWNER):
            pass

    def test_compute_rp(self):
        self.assertRaises(exception.HostNotFound, host_db.get,
                          self.admin_context, HOST)
        host = host_db.set_compute_rp(self.admin_context, HOST, 'rp-1')
        self.assertEqual('rp-1', host.compute_rp_uuid)
        self.assertTrue(self.acquire('a'))
        host = host_db.set_compute_rp(self.admin_context, HOST, 'rp-2')
        self.assertEqual(('rp-2', 'a'),
                         (host.compute_rp_uuid, host.lease_owner))
        self.assertEqual([HOST], [h.hostname for h in host_db.get_all(
            self.admin_context)])
        self.assertEqual(self.now + datetime.timedelta(seconds=60),
                         host.lease_expires_at)
