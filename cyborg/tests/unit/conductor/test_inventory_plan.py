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
"""The plan of a host's report, without a database.

Each test describes the host's rows as rows of the models, in no session
(:func:`rows_of` makes the rows a report would have left), and checks
what the plan writes.
"""

import dataclasses
import datetime
import itertools

import testtools

from cyborg.common import host_inventory as ip
from cyborg.common import pci_address
from cyborg.conductor.inventory_plan import matching
from cyborg.conductor.inventory_plan import report
from cyborg.db import inventory as inventory_db
from cyborg.db import models
from cyborg import exception

HOST = 'host1'
CARD = '0000:5e:00.0'
GPU = '0000:af:00.0'
VF1, VF2 = (pci_address.offset(CARD, n) for n in (1, 2))
THEN = datetime.datetime(2026, 1, 1)


def handle(address, in_use=False, attach_type='PCI', **extra):
    return {'attach_type': attach_type, 'in_use': in_use,
            'attach_info': dict(pci_address.parse(address), **extra)}


def mdev(address):
    return handle(address, attach_type='MDEV', asked_type='nvidia-222')


def deployable(name, handles=(), parent=None, num=1, rc='FPGA'):
    return {'name': name, 'parent_name': parent, 'num_accelerators': num,
            'driver_name': 'drv', 'bitstream_id': None,
            'attributes': [('rc', rc)], 'attach_handles': list(handles)}


def device(address, deployables, model='PAC'):
    return {'type': 'FPGA', 'vendor': '8086', 'model': model,
            'std_board_info': None, 'vendor_board_info': None,
            'cpid_type': 'PCI', 'cpid_info': pci_address.parse(address),
            'deployables': list(deployables)}


def card(*handles, **kwargs):
    return device(CARD, [deployable(CARD, handles, **kwargs)])


def gpu(mdevs=4):
    return device(GPU, [deployable(GPU, rc='PGPU'), deployable(
        'vgpu', [mdev(GPU) for _ in range(mdevs)], GPU, num=mdevs,
        rc='VGPU')], model='T4')


def rows_of(*devices):
    """The rows that applying ``devices`` to an empty host leaves.

    Ids count from 1 in each table, in the order of the report.
    """
    ids = {table: itertools.count(1) for table in (
        'device', 'cpid', 'deployable', 'attribute', 'handle')}
    rows = {table: [] for table in ids}
    for address, (dev, deps) in report.wanted(HOST, devices).items():
        device_id = next(ids['device'])
        rows['device'].append(models.Device(
            id=device_id, uuid='uuid-' + address, type=dev['type'],
            vendor=dev['vendor'], model=dev['model'], std_board_info=None,
            vendor_board_info=None, vanished_at=None))
        cpid = models.ControlpathID(id=next(ids['cpid']), device_id=device_id,
                                    cpid_type='PCI',
                                    cpid_info=dev['cpid_info'])
        rows['cpid'].append(cpid)
        placed = {}
        for dep in deps:
            parent = placed.get(dep['parent_name'])
            row = models.Deployable(
                id=next(ids['deployable']), name=dep['name'],
                device_id=device_id, parent_id=parent and parent.id,
                root_id=parent and (parent.root_id or parent.id),
                num_accelerators=dep['num_accelerators'],
                driver_name=dep['driver_name'],
                bitstream_id=dep['bitstream_id'])
            placed[row.name] = row
            rows['deployable'].append(row)
            rows['attribute'].extend(
                models.Attribute(id=next(ids['attribute']),
                                 deployable_id=row.id, key=key, value=value)
                for key, value in dep['attributes'])
            for values in dep['attach_handles']:
                handle_id = next(ids['handle'])
                rows['handle'].append(models.AttachHandle(
                    id=handle_id, uuid='handle-%d' % handle_id,
                    deployable_id=row.id, cpid_id=cpid.id,
                    attach_type=values['attach_type'],
                    attach_info=values['attach_info'],
                    in_use=values['in_use']))
    return inventory_db.HostRows(
        tuple(rows['device']), tuple(rows['cpid']),
        tuple(rows['deployable']), tuple(rows['attribute']),
        tuple(rows['handle']))


def held(rows, *holds):
    """``rows`` with ARQs holding (uuid, handle id, deployable id)."""
    return dataclasses.replace(rows, holds=tuple(
        models.AcceleratorRequest(uuid=uuid, attach_handle_id=handle_id,
                                  deployable_id=deployable_id)
        for uuid, handle_id, deployable_id in holds))


def plan(rows, *devices):
    return matching.plan(rows, report.wanted(HOST, devices))


def _copy(row, **changes):
    """A copy of a model's row, with ``changes``."""
    values = {column.key: getattr(row, column.key)
              for column in row.__table__.columns}
    return type(row)(**dict(values, **changes))


def with_rows(rows, table, **changes):
    """``rows`` with the row of ``table`` whose id is ``id`` changed."""
    row_id = changes.pop('id')
    return dataclasses.replace(rows, **{table: tuple(
        _copy(row, **changes) if row.id == row_id else row
        for row in getattr(rows, table))})


class TestNewRows(testtools.TestCase):

    def test_new_host_inserts_everything_by_key(self):
        result = plan(inventory_db.HostRows(), card(handle(VF1)), gpu(mdevs=2))

        dev, cpid = ip.Ref('devices', CARD), ip.Ref('controlpath_ids', CARD)
        self.assertEqual(((ip.New(dev, {
            'type': 'FPGA', 'vendor': '8086', 'model': 'PAC',
            'std_board_info': None, 'vendor_board_info': None}),
            ip.New(ip.Ref('devices', GPU), {
                'type': 'FPGA', 'vendor': '8086', 'model': 'T4',
                'std_board_info': None, 'vendor_board_info': None})),),
            result.devices.insert)
        self.assertEqual(ip.New(cpid, {
            'cpid_type': 'PCI', 'cpid_info': pci_address.parse(CARD),
            'device_id': dev}), result.control_paths.insert[0][0])
        # The vGPU type waits for the INSERT that gives its GPU an id.
        roots, children = result.deployables.insert
        self.assertEqual([CARD, GPU], [new.ref.key for new in roots])
        self.assertEqual(ip.New(ip.Ref('deployables', 'vgpu'), {
            'name': 'vgpu', 'num_accelerators': 2, 'driver_name': 'drv',
            'bitstream_id': None, 'device_id': ip.Ref('devices', GPU),
            'parent_id': ip.Ref('deployables', GPU),
            'root_id': ip.Ref('deployables', GPU)}), children[0])
        self.assertEqual((None, None), (roots[0].values['parent_id'],
                                        roots[0].values['root_id']))
        self.assertEqual(ip.New(None, {
            'deployable_id': ip.Ref('deployables', CARD), 'cpid_id': cpid,
            'in_use': False, 'attach_type': 'PCI',
            'attach_info': pci_address.parse(VF1)}),
            result.attach_handles.insert[0][0])
        self.assertEqual(3, len(result.attach_handles.insert[0]))
        self.assertEqual(
            [(ip.Ref('deployables', name), 'rc', rc) for name, rc in (
                (CARD, 'FPGA'), (GPU, 'PGPU'), ('vgpu', 'VGPU'))],
            [(new.values['deployable_id'], new.values['key'],
              new.values['value']) for new in result.attributes.insert[0]])
        self.assertEqual(ip.InventoryDiff(added=(CARD, GPU, 'vgpu')),
                         result.diff)

    def test_one_insert_per_level_of_the_deepest_tree(self):
        result = plan(inventory_db.HostRows(), device(CARD, [
            deployable('a'), deployable('b', parent='a'),
            deployable('c', parent='b')]))
        self.assertEqual(
            [[('a', None, None)],
             [('b', ip.Ref('deployables', 'a'), ip.Ref('deployables', 'a'))],
             [('c', ip.Ref('deployables', 'b'),
               ip.Ref('deployables', 'a'))]],
            [[(new.ref.key, new.values['parent_id'], new.values['root_id'])
              for new in level] for level in result.deployables.insert])

    def test_new_parent_of_a_known_tree(self):
        rows = rows_of(device(CARD, [deployable('p'),
                                     deployable('c', parent='p')]))
        result = plan(rows, device(CARD, [
            deployable('g'), deployable('p', parent='g'),
            deployable('c', parent='p')]))
        new = ip.Ref('deployables', 'g')
        self.assertEqual(((ip.New(new, dict(
            name='g', num_accelerators=1, driver_name='drv',
            bitstream_id=None, device_id=1, parent_id=None,
            root_id=None)),),), result.deployables.insert)
        self.assertEqual((ip.Update(1, {'parent_id': new, 'root_id': new}),
                          ip.Update(2, {'root_id': new})),
                         result.deployables.update)
        self.assertEqual(('c', 'p'), result.diff.changed)


class TestChanges(testtools.TestCase):

    def test_unchanged_report_plans_nothing(self):
        report = (card(handle(VF1), handle(VF2, in_use=True)), gpu())
        self.assertEqual(ip.Plan(), plan(rows_of(*report), *report))

    def test_changed_fields_update_only_them(self):
        rows = rows_of(card(handle(VF1)))
        result = plan(rows, device(CARD, [deployable(
            CARD, [handle(VF1)], num=2, rc='OTHER')], model='N3000'))
        self.assertEqual((ip.Update(1, {'model': 'N3000'}),),
                         result.devices.update)
        self.assertEqual((ip.Update(1, {'num_accelerators': 2}),),
                         result.deployables.update)
        self.assertEqual((ip.Update(1, {'value': 'OTHER'}),),
                         result.attributes.update)
        self.assertEqual(ip.Plan(
            devices=result.devices, deployables=result.deployables,
            attributes=result.attributes,
            diff=ip.InventoryDiff(changed=(CARD,))), result)

    def test_unreported_attribute_is_deleted(self):
        dep = deployable(CARD)
        rows = rows_of(device(CARD, [dict(dep, attributes=[
            ('rc', 'FPGA'), ('trait0', 'CUSTOM_A')])]))
        result = plan(rows, device(CARD, [dep]))
        self.assertEqual(ip.Changes(delete=(2,)), result.attributes)
        self.assertEqual((CARD,), result.diff.changed)

    def test_changed_device_changes_its_deployables(self):
        rows = rows_of(gpu())
        result = plan(rows, dict(gpu(), model='A100'))
        self.assertEqual((), result.deployables.update)
        self.assertEqual((GPU, 'vgpu'), result.diff.changed)

    def test_changed_control_path(self):
        rows = rows_of(card())
        info = dict(pci_address.parse(CARD), extra='x')
        result = plan(rows, dict(card(), cpid_info=info))
        self.assertEqual((ip.Update(1, {'cpid_info': info}),),
                         result.control_paths.update)
        self.assertEqual((CARD,), result.diff.changed)

    def test_deployable_moved_to_a_new_device(self):
        rows = rows_of(card(handle(VF1)))
        other = '0000:6e:00.0'
        result = plan(rows, device(other, [deployable(CARD,
                                                      [handle(VF1)])]))
        self.assertEqual(
            (ip.Update(1, {'device_id': ip.Ref('devices', other)}),),
            result.deployables.update)
        self.assertEqual(
            (ip.Update(1, {'cpid_id': ip.Ref('controlpath_ids', other)}),),
            result.attach_handles.update)
        self.assertEqual(((1,), (1,)), (result.devices.delete,
                                        result.control_paths.delete))
        self.assertEqual(ip.InventoryDiff(changed=(CARD,)), result.diff)

    def test_removed_deployable_and_its_rows(self):
        rows = rows_of(gpu(mdevs=2))
        result = plan(rows, device(GPU, [deployable(GPU, rc='PGPU')],
                                   model='T4'))
        self.assertEqual((2,), result.deployables.delete)
        self.assertEqual((2,), result.attributes.delete)
        self.assertEqual((1, 2), result.attach_handles.delete)
        self.assertEqual(((), ()), (result.devices.delete,
                                    result.deployables.update))
        self.assertEqual(ip.InventoryDiff(removed=('vgpu',)), result.diff)

    def test_removed_device(self):
        result = plan(rows_of(card(), gpu()), card())
        self.assertEqual((2,), result.devices.delete)
        self.assertEqual((2,), result.control_paths.delete)
        self.assertEqual((2, 3), result.deployables.delete)
        self.assertEqual((GPU, 'vgpu'), result.diff.removed)

    def test_second_device_at_an_address_is_removed(self):
        rows = rows_of(card(), gpu())
        rows = with_rows(rows, 'control_paths', id=2,
                         cpid_info=rows.control_paths[0].cpid_info)
        result = plan(rows, card(), gpu())
        self.assertEqual((2,), result.devices.delete)
        self.assertEqual(ip.Ref('devices', GPU),
                         result.devices.insert[0][0].ref)

    def test_in_use_follows_the_host(self):
        rows = rows_of(card(handle(VF1), handle(VF2, in_use=True)))
        result = plan(rows, card(handle(VF1, in_use=True), handle(VF2)))
        self.assertEqual(((1, True), (2, False)), result.in_use)
        self.assertEqual((CARD,), result.diff.changed)

    def test_in_use_of_a_held_handle_is_not_the_host_s(self):
        rows = held(rows_of(card(handle(VF1, in_use=True))),
                    ('arq', 1, None))
        self.assertEqual(ip.Plan(), plan(rows, card(handle(VF1))))


class TestHandleMultiset(testtools.TestCase):

    def test_held_and_used_handles_are_kept(self):
        rows = with_rows(rows_of(gpu(mdevs=4)), 'attach_handles', id=2,
                         in_use=True)
        rows = held(rows, ('arq', 4, None))
        result = plan(rows, gpu(mdevs=2))
        self.assertEqual((1, 3), result.attach_handles.delete)
        self.assertEqual((), result.attach_handles.insert)
        self.assertEqual(('vgpu',), result.diff.changed)

    def test_more_reported_inserts_the_rest(self):
        result = plan(rows_of(gpu(mdevs=2)), gpu(mdevs=3))
        self.assertEqual(1, len(result.attach_handles.insert[0]))
        self.assertEqual(1, result.attach_handles.insert[0][0].values[
            'cpid_id'])
        self.assertEqual((ip.Update(2, {'num_accelerators': 3}),),
                         result.deployables.update)


class TestHeld(testtools.TestCase):

    def test_held_handle_not_reported_is_kept(self):
        rows = held(rows_of(card(handle(VF1))), ('arq', 1, None))
        result = plan(rows, card())
        self.assertEqual((ip.KeptHandle('handle-1', CARD, 'arq'),),
                         result.kept_handles)
        self.assertEqual((), result.attach_handles.delete)
        self.assertEqual(ip.InventoryDiff(vanished=(CARD,)), result.diff)

    def test_function_held_with_other_attach_info_is_busy(self):
        rows = held(rows_of(card(handle(VF1))), ('arq', 1, None))
        result = plan(rows, card(handle(VF1, physical_network='net')))
        self.assertEqual(1, len(result.kept_handles))
        self.assertTrue(result.attach_handles.insert[0][0].values['in_use'])

    def test_function_held_under_another_deployable_is_busy(self):
        rows = held(rows_of(device(CARD, [
            deployable(VF1, [handle(VF1)]),
            deployable(VF2, [handle(VF2)])])), ('arq', 1, None))
        result = plan(rows, card(handle(VF1), handle(VF2)))
        self.assertEqual(
            [(VF1, True), (VF2, False)],
            [(pci_address.address_of(new.values['attach_info']),
              new.values['in_use'])
             for new in result.attach_handles.insert[0]])
        self.assertEqual(ip.InventoryDiff(
            added=(CARD,), removed=(VF2,), vanished=(VF1,)), result.diff)
        self.assertEqual((2,), result.deployables.delete)
        self.assertEqual((2,), result.attach_handles.delete)

    def test_held_deployable_keeps_its_ancestors(self):
        rows = held(rows_of(device(CARD, [
            deployable('r'), deployable('c', parent='r'),
            deployable('g', [handle(VF1)], parent='c'),
            deployable('other')])), ('arq', 1, None))
        result = plan(rows, device(CARD, []))
        # Parents first, the ids are r, other, c, g.
        self.assertEqual((2,), result.deployables.delete)
        self.assertEqual((2,), result.attributes.delete)
        self.assertEqual(ip.InventoryDiff(removed=('other',),
                                          vanished=('c', 'g', 'r')),
                         result.diff)
        self.assertEqual((), result.vanishing)

    def test_deployable_being_bound_is_held(self):
        rows = held(rows_of(gpu()), ('arq', None, 2))
        result = plan(rows, device(GPU, [deployable(GPU, rc='PGPU')],
                                   model='T4'))
        self.assertEqual(ip.Changes(), result.deployables)
        self.assertEqual(ip.Changes(), result.attach_handles)
        self.assertEqual(ip.InventoryDiff(vanished=('vgpu',)), result.diff)

    def test_vanished_device_keeps_its_tree(self):
        rows = held(rows_of(card(), device(GPU, [
            deployable('a', [handle(GPU)]), deployable('b')])),
            ('arq-2', 1, None), ('arq-1', None, 2))
        result = plan(rows, card())
        self.assertEqual((ip.Vanishing(2, 'uuid-' + GPU, ('arq-1', 'arq-2'),
                                       True),), result.vanishing)
        self.assertEqual(ip.Changes(), result.devices)
        self.assertEqual(ip.Changes(), result.deployables)
        self.assertEqual(ip.InventoryDiff(changed=('a', 'b'),
                                          vanished=('a', 'b')),
                         result.diff)
        # Marked once: a later report changes nothing.
        rows = with_rows(rows, 'devices', id=2, vanished_at=THEN)
        result = plan(rows, card())
        self.assertFalse(result.vanishing[0].mark)
        self.assertEqual(ip.InventoryDiff(vanished=('a', 'b')), result.diff)

    def test_vanished_device_reappears(self):
        rows = with_rows(rows_of(gpu()), 'devices', id=1, vanished_at=THEN)
        result = plan(rows, gpu())
        self.assertEqual((ip.Update(1, {'vanished_at': None}),),
                         result.devices.update)
        self.assertEqual((('uuid-' + GPU, GPU),), result.reappeared)
        self.assertEqual((GPU, 'vgpu'), result.diff.changed)


class TestWanted(testtools.TestCase):

    def assertInvalid(self, reason, *devices):
        e = self.assertRaises(exception.InvalidHostReport, report.wanted, HOST,
                              devices)
        self.assertIn(reason, str(e))

    def test_parents_first(self):
        dev = device(CARD, [deployable('c', parent='b'),
                            deployable('b', parent='a'), deployable('a')])
        self.assertEqual(['a', 'b', 'c'], [
            dep['name'] for dep in report.wanted(HOST, [dev])[CARD][1]])

    def test_invalid_reports(self):
        self.assertInvalid('device %s reported twice' % CARD, card(), card())
        self.assertInvalid('deployable %s reported twice' % CARD,
                           card(), device(GPU, [deployable(CARD)]))
        self.assertInvalid('is not a PCI address',
                           dict(card(), cpid_info={'name': 'x'}))
        self.assertInvalid('repeats an attribute', device(CARD, [dict(
            deployable('a'), attributes=[('rc', 'A'), ('rc', 'B')])]))
        self.assertInvalid('the parent x of a is not a deployable',
                           device(CARD, [deployable('a', parent='x')]))
        self.assertInvalid('deployable a is its own ancestor', device(CARD, [
            deployable('a', parent='b'), deployable('b', parent='a')]))
