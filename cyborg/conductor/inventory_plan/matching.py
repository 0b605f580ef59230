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
"""What a host's report changes in its rows: the plan of a report.

:func:`plan` matches the rows of one host (as
:class:`cyborg.db.inventory.HostRows` loads them) against its agent's
report (:func:`.report.wanted`) and says what to write: a
:class:`~cyborg.common.host_inventory.Plan`. It writes nothing: rows the
plan adds are referred to by key (:class:`~cyborg.common.host_inventory.
Ref`) until they are written and have their ids. The rules of the
matching are those of :func:`cyborg.conductor.inventory_plan.apply`.
"""

import dataclasses
import typing

from cyborg.common import host_inventory
from cyborg.common import pci_address
from cyborg.conductor.inventory_plan import handles as handles_plan

Ref = host_inventory.Ref
New = host_inventory.New
Update = host_inventory.Update

_DEVICE_FIELDS = ('type', 'vendor', 'model', 'std_board_info',
                  'vendor_board_info')
_DEPLOYABLE_FIELDS = ('num_accelerators', 'driver_name', 'bitstream_id')


class _Host(typing.NamedTuple):
    """The rows of the host, indexed by what the matching looks up."""

    devices: dict        # {PCI address: device row}, the first by id
    stale: list          # devices without a PCI address, or a second one
    control_paths: dict  # {device id: its first control path row}
    deployables: dict    # {name: deployable row}
    attributes: dict     # {deployable id: {key: attribute row}}
    handles: dict        # {deployable id: [attach handle row, ...]} by id
    held_handles: dict   # {handle id: ARQ uuid}
    held_deployables: dict  # {deployable id: {ARQ uuid, ...}}


def _index(rows):
    control_paths = {}
    for cpid in rows.control_paths:
        control_paths.setdefault(cpid.device_id, cpid)
    devices, stale = {}, []
    for row in rows.devices:
        cpid = control_paths.get(row.id)
        address = cpid and pci_address.address_of(cpid.cpid_info)
        if address is None or address in devices:
            stale.append(row)
        else:
            devices[address] = row
    attributes, handles = {}, {}
    for attr in rows.attributes:
        attributes.setdefault(attr.deployable_id, {})[attr.key] = attr
    for row in rows.attach_handles:
        handles.setdefault(row.deployable_id, []).append(row)
    handle_deployable = {row.id: row.deployable_id
                         for row in rows.attach_handles}
    held_handles, held_deployables = {}, {}
    for hold in rows.holds:
        deployable_id = hold.deployable_id
        if hold.attach_handle_id in handle_deployable:
            held_handles[hold.attach_handle_id] = hold.uuid
            deployable_id = handle_deployable[hold.attach_handle_id]
        held_deployables.setdefault(deployable_id, set()).add(hold.uuid)
    return _Host(devices, stale, control_paths,
                 {dep.name: dep for dep in rows.deployables},
                 attributes, handles, held_handles, held_deployables)


def _changed(row, values):
    """The values that differ from the row's (a :class:`Ref` always does)."""
    return {key: value for key, value in values.items()
            if getattr(row, key) != value}


class _Table:
    """The rows to write to one table, gathered while matching."""

    def __init__(self):
        self.new, self.update, self.delete = [], [], []

    def changes(self):
        return host_inventory.Changes(
            insert=(tuple(self.new),) if self.new else (),
            update=tuple(self.update), delete=tuple(sorted(self.delete)))


class _Devices(typing.NamedTuple):
    ids: dict        # {PCI address: device id or Ref}
    cpid_ids: dict   # {PCI address: control path id or Ref}
    dirty: set       # ids of devices whose row changes
    reappeared: tuple


def _plan_devices(host, report, devices, control_paths):
    """Match, update and add devices and their control path ids."""
    ids, cpid_ids, dirty, reappeared = {}, {}, set(), []
    for address, (device, _deps) in report.items():
        values = {field: device[field] for field in _DEVICE_FIELDS}
        cpid_values = {'cpid_type': device['cpid_type'],
                       'cpid_info': dict(device['cpid_info'])}
        row = host.devices.get(address)
        if row is None:
            ids[address] = Ref('devices', address)
            cpid_ids[address] = Ref('controlpath_ids', address)
            devices.new.append(New(ids[address], values))
            control_paths.new.append(New(cpid_ids[address], dict(
                cpid_values, device_id=ids[address])))
            continue
        ids[address] = row.id
        control_path = host.control_paths[row.id]
        cpid_ids[address] = control_path.id
        values = _changed(row, values)
        if row.vanished_at is not None:
            reappeared.append((row.uuid, address))
            values['vanished_at'] = None
        if values:
            devices.update.append(Update(row.id, values))
            dirty.add(row.id)
        cpid_values = _changed(control_path, cpid_values)
        if cpid_values:
            control_paths.update.append(Update(control_path.id,
                                               cpid_values))
            dirty.add(row.id)
    return _Devices(ids, cpid_ids, dirty, tuple(reappeared))


def _plan_deployables(host, report, devices, changed):
    """Match, update and add deployables, parents before children.

    A child whose parent is new waits for the INSERT that gives the
    parent its id: one INSERT per level of the deepest tree.

    :returns: the INSERTs and UPDATEs, and {name: (id or Ref, PCI address,
        reported dict)} in the order of the matching, level by level.
    """
    levels, updates, reported, roots, ready = [], [], {}, {}, set()
    pending = [(address, dep) for address, (_device, deps)
               in report.items() for dep in deps]
    while pending:
        later, new = [], []
        for address, dep in pending:
            name, parent = dep['name'], dep['parent_name']
            if parent is not None and parent not in ready:
                later.append((address, dep))
                continue
            values = {field: dep[field] for field in _DEPLOYABLE_FIELDS}
            values.update(device_id=devices.ids[address], parent_id=None,
                          root_id=None)
            if parent is not None:
                parent_id = reported[parent][0]
                values.update(parent_id=parent_id,
                              root_id=roots[parent] or parent_id)
            roots[name] = values['root_id']
            row = host.deployables.get(name)
            if row is None:
                ref = Ref('deployables', name)
                new.append(New(ref, dict(values, name=name)))
                reported[name] = (ref, address, dep)
                continue
            values = _changed(row, values)
            if values:
                updates.append(Update(row.id, values))
            if values or devices.ids[address] in devices.dirty:
                changed.add(name)
            ready.add(name)
            reported[name] = (row.id, address, dep)
        if new:
            levels.append(tuple(new))
            ready.update(row.ref.key for row in new)
        pending = later
    return host_inventory.Changes(insert=tuple(levels),
                                  update=tuple(updates)), reported


def _plan_attributes(current, deployable_id, reported, attributes):
    """Match attributes by key; whether one changed."""
    current = dict(current)
    touched = False
    for key, value in reported:
        attr = current.pop(key, None)
        if attr is None:
            attributes.new.append(New(None, {
                'deployable_id': deployable_id, 'key': key,
                'value': value}))
            touched = True
        elif attr.value != value:
            attributes.update.append(Update(attr.id, {'value': value}))
            touched = True
    attributes.delete.extend(attr.id for attr in current.values())
    return touched or bool(current)


def _keep_or_remove(host, reported, devices, tables):
    """Delete unreported rows unless ARQs hold them.

    A held deployable keeps its ancestors; an unreported device keeps
    its whole tree while any of its deployables is held, and is marked
    vanished.

    :returns: the vanishing devices, and the names of the removed, the
        vanished and the changed unreported deployables.
    """
    unmatched = [dep for name, dep in host.deployables.items()
                 if name not in reported]
    by_id = {dep.id: dep for dep in unmatched}
    held_devices, kept = {}, set()
    for dep in unmatched:
        arqs = host.held_deployables.get(dep.id)
        if arqs:
            held_devices.setdefault(dep.device_id, set()).update(arqs)
            while dep is not None and dep.id not in kept:
                kept.add(dep.id)
                dep = by_id.get(dep.parent_id)
    vanishing, dirty = [], set(devices.dirty)
    for device in [row for address, row in host.devices.items()
                   if address not in devices.ids] + host.stale:
        if device.id in held_devices:
            mark = device.vanished_at is None
            vanishing.append(host_inventory.Vanishing(
                device.id, device.uuid,
                tuple(sorted(held_devices[device.id])), mark))
            if mark:
                dirty.add(device.id)
        else:
            tables['devices'].delete.append(device.id)
            if device.id in host.control_paths:
                tables['control_paths'].delete.append(
                    host.control_paths[device.id].id)
    removed, vanished, changed = set(), set(), set()
    vanishing_ids = {device.id for device in vanishing}
    for dep in unmatched:
        if dep.id in kept or dep.device_id in vanishing_ids:
            vanished.add(dep.name)
            if dep.device_id in dirty:
                changed.add(dep.name)
            continue
        removed.add(dep.name)
        tables['deployables'].delete.append(dep.id)
        tables['attributes'].delete.extend(
            attr.id for attr in host.attributes.get(dep.id, {}).values())
        tables['attach_handles'].delete.extend(
            handle.id for handle in host.handles.get(dep.id, ()))
    return tuple(vanishing), removed, vanished, changed


def plan(rows, report):
    """What makes the host's rows equal to its report.

    :param rows: a :class:`cyborg.db.inventory.HostRows`.
    :param report: the report, as :func:`.report.wanted` indexes it.
    :returns: a :class:`~cyborg.common.host_inventory.Plan`.
    """
    host = _index(rows)
    tables = {table: _Table() for table in (
        'devices', 'control_paths', 'deployables', 'attributes',
        'attach_handles')}
    devices = _plan_devices(host, report, tables['devices'],
                            tables['control_paths'])
    changed, vanished, in_use, kept = set(), set(), [], []
    deployables, reported = _plan_deployables(host, report, devices,
                                              changed)
    busy = handles_plan.held_elsewhere(host, reported)
    for name, (deployable_id, address, dep) in reported.items():
        if _plan_attributes(host.attributes.get(deployable_id, {}),
                            deployable_id, dep['attributes'],
                            tables['attributes']):
            changed.add(name)
        before = len(kept)
        if handles_plan.plan_handles(
                host, name, deployable_id, devices.cpid_ids[address],
                dep['attach_handles'], busy, tables['attach_handles'],
                in_use, kept):
            changed.add(name)
        if len(kept) > before:
            vanished.add(name)
    vanishing, removed, gone, gone_changed = _keep_or_remove(
        host, reported, devices, tables)
    added = {new.ref.key for level in deployables.insert for new in level}
    changes = {name: table.changes() for name, table in tables.items()}
    changes['deployables'] = dataclasses.replace(
        deployables, delete=changes['deployables'].delete)
    return host_inventory.Plan(
        in_use=tuple(in_use), reappeared=devices.reappeared,
        kept_handles=tuple(kept), vanishing=vanishing,
        diff=host_inventory.InventoryDiff(*(
            tuple(sorted(names)) for names in (
                added, removed, (changed | gone_changed) - added,
                vanished | gone))),
        **changes)
