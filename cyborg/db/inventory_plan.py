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
"""What a host's report changes in its rows, as plain data.

:func:`plan` matches the rows of one host (:class:`HostRows`, a frozen
copy of what :mod:`cyborg.db.inventory` loads) against its agent's
report (:func:`wanted`) and says what to write: a :class:`Plan`. It
reads no database: rows the plan adds are referred to by key
(:class:`Ref`) until they are written and have their ids. The rules of
the matching are those of :func:`cyborg.db.inventory.apply`.
"""

import collections
import dataclasses
import itertools
import json
import typing

from cyborg.common import pci_address
from cyborg import exception

_DEVICE_FIELDS = ('type', 'vendor', 'model', 'std_board_info',
                  'vendor_board_info')
_DEPLOYABLE_FIELDS = ('num_accelerators', 'driver_name', 'bitstream_id')


# --- the rows of the host ----------------------------------------------------

# One type per table, with the columns the matching reads; a device has
# its first control path (or None) and a hold is an accelerator request
# that holds a handle and so its deployable, or a deployable it is being
# bound to.
ControlPath = collections.namedtuple('ControlPath',
                                     'id cpid_type cpid_info')
Device = collections.namedtuple(
    'Device', 'id uuid type vendor model std_board_info vendor_board_info '
    'vanished_at control_path')
Deployable = collections.namedtuple(
    'Deployable', 'id name device_id parent_id root_id num_accelerators '
    'driver_name bitstream_id')
Attribute = collections.namedtuple('Attribute', 'id deployable_id key value')
AttachHandle = collections.namedtuple(
    'AttachHandle',
    'id uuid deployable_id cpid_id attach_type attach_info in_use')
Hold = collections.namedtuple('Hold',
                              'arq_uuid attach_handle_id deployable_id')


@dataclasses.dataclass(frozen=True)
class HostRows:
    """The rows of one host; devices and handles in the order of their ids.

    ``holds`` are the accelerator requests that hold a handle or a
    deployable of the host.
    """

    devices: tuple = ()
    deployables: tuple = ()
    attributes: tuple = ()
    attach_handles: tuple = ()
    holds: tuple = ()


# --- the plan ----------------------------------------------------------------

class Ref(typing.NamedTuple):
    """The id of a row that the plan adds, by table and key.

    ``key`` is a device's PCI address in ``devices`` and
    ``controlpath_ids``, a deployable's name in ``deployables``.
    """

    table: str
    key: str


class New(typing.NamedTuple):
    """A row to insert; ``ref`` names it for rows that refer to it.

    ``values`` are its columns but its uuid (and a device's host name);
    a :class:`Ref` stands for the id of another new row.
    """

    ref: typing.Optional[Ref]
    values: dict


class Update(typing.NamedTuple):
    """The columns of row ``id`` that change, with their new values."""

    id: int
    values: dict


@dataclasses.dataclass(frozen=True)
class Changes:
    """What to write to one table.

    ``insert`` holds one tuple of :class:`New` rows per INSERT statement,
    in order: a deployable is inserted after its parent, which gives it
    its id. ``delete`` holds the ids of rows to delete.
    """

    insert: tuple = ()
    update: tuple = ()
    delete: tuple = ()


#: A held handle no longer reported, kept until its ARQ releases it.
KeptHandle = collections.namedtuple('KeptHandle', 'uuid deployable arq_uuid')
#: A device no longer reported, kept while ARQs hold it; ``mark`` says
#: whether to set its ``vanished_at`` (it is not set yet).
Vanishing = collections.namedtuple('Vanishing', 'id uuid arq_uuids mark')


@dataclasses.dataclass(frozen=True)
class InventoryDiff:
    """What :func:`cyborg.db.inventory.apply` did, by deployable name.

    ``changed`` lists deployables whose row, attributes, attach handles or
    device changed; ``vanished`` those no longer reported but kept because
    accelerator requests hold them. ``devices_added`` and
    ``devices_removed`` hold the :class:`Device` rows that were inserted
    and deleted (set by the executor, which gives new rows their uuids).
    """

    added: tuple = ()
    removed: tuple = ()
    changed: tuple = ()
    vanished: tuple = ()
    devices_added: tuple = ()
    devices_removed: tuple = ()

    def __bool__(self):
        return bool(self.added or self.removed or self.changed)

    def __str__(self):
        return ('%d added, %d removed, %d changed, %d vanished deployable(s)'
                % (len(self.added), len(self.removed), len(self.changed),
                   len(self.vanished)))


@dataclasses.dataclass(frozen=True)
class Plan:
    """What to write, table by table, and what to tell.

    ``in_use`` holds (handle id, in use) for handles no ARQ holds whose
    use follows the host's; ``reappeared`` (device uuid, PCI address) for
    vanished devices reported again.
    """

    devices: Changes = Changes()
    control_paths: Changes = Changes()
    deployables: Changes = Changes()
    attributes: Changes = Changes()
    attach_handles: Changes = Changes()
    in_use: tuple = ()
    reappeared: tuple = ()
    kept_handles: tuple = ()
    vanishing: tuple = ()
    diff: InventoryDiff = InventoryDiff()


# --- the report --------------------------------------------------------------

def _handle_key(attach_type, attach_info):
    return attach_type, json.dumps(attach_info, sort_keys=True)


def _function_key(attach_type, attach_info):
    """What a handle hands out: its type, function and mdev type.

    Handles of one function may differ in other attach info (a physical
    network that the configuration added).
    """
    return (attach_type, pci_address.address_of(attach_info),
            attach_info.get('asked_type'))


def wanted(hostname, devices):
    """Index the report by key, checking that its keys are unique.

    :param devices: see :func:`cyborg.db.inventory.apply`.
    :returns: {PCI address: (device, [deployable, ...] parents first)}.
    :raises InvalidHostReport: the report contradicts itself.
    """
    def invalid(reason, **kwargs):
        return exception.InvalidHostReport(host=hostname,
                                           reason=reason % kwargs)

    result = {}
    names = set()
    for device in devices:
        address = pci_address.address_of(device['cpid_info'])
        if address is None:
            raise invalid('control path %(info)s is not a PCI address',
                          info=device['cpid_info'])
        if address in result:
            raise invalid('device %(address)s reported twice',
                          address=address)
        by_name = {}
        for dep in device['deployables']:
            if dep['name'] in names:
                raise invalid('deployable %(name)s reported twice',
                              name=dep['name'])
            names.add(dep['name'])
            by_name[dep['name']] = dep
            keys = [key for key, _value in dep['attributes']]
            if len(set(keys)) != len(keys):
                raise invalid('deployable %(name)s repeats an attribute',
                              name=dep['name'])
        result[address] = (device, _parents_first(by_name, invalid))
    return result


def _parents_first(by_name, invalid):
    """The deployables of a device sorted so that parents come first."""
    depth = {}

    def depth_of(name, descendants):
        if name not in depth:
            parent = by_name[name]['parent_name']
            if parent is None:
                depth[name] = 0
            elif parent not in by_name:
                raise invalid('the parent %(parent)s of %(name)s is not a '
                              'deployable of its device', parent=parent,
                              name=name)
            elif parent in descendants:
                raise invalid('deployable %(name)s is its own ancestor',
                              name=parent)
            else:
                depth[name] = depth_of(parent, descendants | {name}) + 1
        return depth[name]

    return sorted(by_name.values(),
                  key=lambda dep: depth_of(dep['name'], {dep['name']}))


# --- matching ----------------------------------------------------------------

class _Host(typing.NamedTuple):
    """The rows of the host, indexed by what the matching looks up."""

    devices: dict        # {PCI address: Device}, the first by id
    stale: list          # devices without a PCI address, or a second one
    deployables: dict    # {name: Deployable}
    attributes: dict     # {deployable id: {key: Attribute}}
    handles: dict        # {deployable id: [AttachHandle, ...]} by id
    held_handles: dict   # {handle id: ARQ uuid}
    held_deployables: dict  # {deployable id: {ARQ uuid, ...}}


def _index(rows):
    devices, stale = {}, []
    for row in rows.devices:
        cpid = row.control_path
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
            held_handles[hold.attach_handle_id] = hold.arq_uuid
            deployable_id = handle_deployable[hold.attach_handle_id]
        held_deployables.setdefault(deployable_id, set()).add(hold.arq_uuid)
    return _Host(devices, stale, {dep.name: dep for dep in rows.deployables},
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
        return Changes(insert=(tuple(self.new),) if self.new else (),
                       update=tuple(self.update),
                       delete=tuple(sorted(self.delete)))


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
        cpid_ids[address] = row.control_path.id
        values = _changed(row, values)
        if row.vanished_at is not None:
            reappeared.append((row.uuid, address))
            values['vanished_at'] = None
        if values:
            devices.update.append(Update(row.id, values))
            dirty.add(row.id)
        cpid_values = _changed(row.control_path, cpid_values)
        if cpid_values:
            control_paths.update.append(Update(row.control_path.id,
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
    return Changes(insert=tuple(levels), update=tuple(updates)), reported


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


def _held_elsewhere(host, reported):
    """Held handles their deployable no longer reports, by function.

    Such a handle is kept while its ARQ holds it, but the host may
    report its function under another deployable (a driver grouping
    functions otherwise, as openstack-cyborg 17.0.0's drivers did
    with one deployable per virtual function) or with other attach
    info: a handle reported for the same function (see
    :func:`_function_key`) is in use until then, so no other ARQ gets
    it.

    :param reported: {name: (id or Ref, PCI address, reported dict)}.
    """
    busy = collections.Counter()
    names = {row.id: name for name, row in host.deployables.items()}
    for deployable_id, rows in host.handles.items():
        kept = collections.Counter()
        name = names.get(deployable_id)
        if name in reported:
            kept.update(_handle_key(h['attach_type'], h['attach_info'])
                        for h in reported[name][2]['attach_handles'])
        for row in rows:
            if row.id in host.held_handles:
                key = _handle_key(row.attach_type, row.attach_info)
                if kept[key]:
                    kept[key] -= 1
                else:
                    busy[_function_key(row.attach_type,
                                       row.attach_info)] += 1
    return busy


def _plan_handles(host, name, deployable_id, cpid_id, reported, busy,
                  handles, in_use, kept):
    """Match handles as a multiset: equal keys are interchangeable.

    Several MDEV handles of one type share their attach info, so a key
    counts its handles. Where rows outnumber the report, the ones that
    ARQs hold or the host uses are matched first and so kept. A handle
    of a function that an unreported held handle makes ``busy`` (see
    :func:`_held_elsewhere`) is in use; each such handle takes one off.

    :returns: whether a handle changed.
    """
    held = host.held_handles
    current, asked = {}, {}
    for handle in host.handles.get(deployable_id, ()):
        key = _handle_key(handle.attach_type, handle.attach_info)
        current.setdefault(key, []).append(handle)
    for handle in reported:
        key = _handle_key(handle['attach_type'], handle['attach_info'])
        function = _function_key(handle['attach_type'],
                                 handle['attach_info'])
        if busy[function] and not handle['in_use']:
            busy[function] -= 1
            handle = dict(handle, in_use=True)
        asked.setdefault(key, []).append(handle)
    touched = False
    for key, values in asked.items():
        values.sort(key=lambda handle: not handle['in_use'])
        rows = sorted(current.pop(key, []), key=lambda handle: (
            handle.id not in held, not handle.in_use))
        for row, handle in zip(rows, values):
            if row.cpid_id != cpid_id:
                handles.update.append(Update(row.id, {'cpid_id': cpid_id}))
                touched = True
            if row.in_use != bool(handle['in_use']) and row.id not in held:
                in_use.append((row.id, bool(handle['in_use'])))
                touched = True
        for handle in values[len(rows):]:
            handles.new.append(New(None, {
                'deployable_id': deployable_id, 'cpid_id': cpid_id,
                'in_use': bool(handle['in_use']),
                'attach_type': handle['attach_type'],
                'attach_info': dict(handle['attach_info'])}))
            touched = True
        current[key] = rows[len(values):]
    for row in itertools.chain.from_iterable(current.values()):
        if row.id in held:
            kept.append(KeptHandle(row.uuid, name, held[row.id]))
        else:
            handles.delete.append(row.id)
            touched = True
    return touched


# --- what is gone ------------------------------------------------------------

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
            vanishing.append(Vanishing(device.id, device.uuid, tuple(
                sorted(held_devices[device.id])), mark))
            if mark:
                dirty.add(device.id)
        else:
            tables['devices'].delete.append(device.id)
            if device.control_path is not None:
                tables['control_paths'].delete.append(device.control_path.id)
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

    :param rows: a :class:`HostRows`.
    :param report: the report, as :func:`wanted` indexes it.
    :returns: a :class:`Plan`.
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
    busy = _held_elsewhere(host, reported)
    for name, (deployable_id, address, dep) in reported.items():
        if _plan_attributes(host.attributes.get(deployable_id, {}),
                            deployable_id, dep['attributes'],
                            tables['attributes']):
            changed.add(name)
        before = len(kept)
        if _plan_handles(host, name, deployable_id, devices.cpid_ids[address],
                         dep['attach_handles'], busy,
                         tables['attach_handles'], in_use, kept):
            changed.add(name)
        if len(kept) > before:
            vanished.add(name)
    vanishing, removed, gone, gone_changed = _keep_or_remove(
        host, reported, devices, tables)
    added = {new.ref.key for level in deployables.insert for new in level}
    changes = {name: table.changes() for name, table in tables.items()}
    changes['deployables'] = dataclasses.replace(
        deployables, delete=changes['deployables'].delete)
    return Plan(
        in_use=tuple(in_use), reappeared=devices.reappeared,
        kept_handles=tuple(kept), vanishing=vanishing,
        diff=InventoryDiff(*(tuple(sorted(names)) for names in (
            added, removed, (changed | gone_changed) - added,
            vanished | gone))),
        **changes)
