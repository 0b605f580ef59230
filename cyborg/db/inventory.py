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
"""The inventory a host reports, applied to its rows as a keyed diff.

A host's agent reports its whole inventory (devices, their control path,
deployables, attributes and attach handles); :func:`apply` makes the
host's rows equal to it in one transaction, writing only what differs.
"""

import collections
import dataclasses
import itertools
import json

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg.common import pci_address
from cyborg.db import api
from cyborg.db.api import main_context_manager
from cyborg.db import host_names
from cyborg.db import models
from cyborg import exception

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class InventoryDiff:
    """What :func:`apply` did, by deployable name.

    ``changed`` lists deployables whose row, attributes, attach handles or
    device changed; ``vanished`` those no longer reported but kept because
    accelerator requests hold them.
    """

    added: tuple = ()
    removed: tuple = ()
    changed: tuple = ()
    vanished: tuple = ()

    def __bool__(self):
        return bool(self.added or self.removed or self.changed)

    def __str__(self):
        return ('%d added, %d removed, %d changed, %d vanished deployable(s)'
                % (len(self.added), len(self.removed), len(self.changed),
                   len(self.vanished)))


@api.retry_on_deadlock
@main_context_manager.writer
def apply(context, hostname, devices, compute_node=None):
    """Make the host's rows equal to its agent's report, in one transaction.

    The report is applied as a keyed diff: a device is known by its
    control path PCI address, a deployable by its name on the host, an
    attribute by its deployable and key, an attach handle by its
    deployable, type and attach info. Rows that did not change are not
    written, so they keep their ids and uuids and their handles keep
    ``in_use``; operators' device ``status`` is never touched. Rows that
    accelerator requests hold are never deleted: a device that is no
    longer reported but holds one is kept with its whole tree and marked
    ``vanished_at`` until a later report finds it free; a handle reported
    for the function of a held handle that is no longer reported (under
    another deployable, or with other attach info) is in use meanwhile.

    A root deployable has no ``parent_id`` nor ``root_id``; a child points
    at its parent and at the root of its tree.

    :param devices: one dict per reported device: ``type``, ``vendor``,
        ``model``, ``std_board_info``, ``vendor_board_info``,
        ``cpid_type``, ``cpid_info`` and ``deployables``, each a dict of
        ``name``, ``parent_name``, ``num_accelerators``, ``driver_name``,
        ``bitstream_id``, ``attributes`` (a list of (key, value)) and
        ``attach_handles`` (dicts of ``attach_type``, ``attach_info``,
        ``in_use``).
    :param compute_node: given when the report may add a device: see
        :func:`cyborg.db.host_names.check`.
    :returns: an :class:`InventoryDiff`.
    :raises InvalidHostReport: the report contradicts itself; nothing
        was written.
    :raises HostNameConflict: see ``compute_node``; nothing was written.
    :raises InventoryChanged: a concurrent bind took a handle being
        removed; nothing was written.
    """
    wanted = _wanted(hostname, devices)
    if compute_node is not None:
        host_names.check(context.session, hostname, set(wanted), compute_node)
    applier = _Applier(context.session, hostname)
    try:
        return applier.apply(wanted)
    except db_exc.DBReferenceError as e:
        raise exception.InventoryChanged(
            host=hostname, reason='%s still refers to a removed row'
            % e.table)


_DEVICE_FIELDS = ('type', 'vendor', 'model', 'std_board_info',
                  'vendor_board_info')
_DEPLOYABLE_FIELDS = ('num_accelerators', 'driver_name', 'bitstream_id')


def _handle_key(attach_type, attach_info):
    return attach_type, json.dumps(attach_info, sort_keys=True)


def _function_key(attach_type, attach_info):
    """What a handle hands out: its type, function and mdev type.

    Handles of one function may differ in other attach info (a physical
    network that the configuration added).
    """
    return (attach_type, pci_address.address_of(attach_info),
            attach_info.get('asked_type'))


def _wanted(hostname, devices):
    """Index the report by key, checking that its keys are unique.

    :returns: {PCI address: (device, [deployable, ...] parents first)}.
    """
    def invalid(reason, **kwargs):
        return exception.InvalidHostReport(host=hostname,
                                           reason=reason % kwargs)

    wanted = {}
    names = set()
    for device in devices:
        address = pci_address.address_of(device['cpid_info'])
        if address is None:
            raise invalid('control path %(info)s is not a PCI address',
                          info=device['cpid_info'])
        if address in wanted:
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
        wanted[address] = (device, _parents_first(by_name, invalid))
    return wanted


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


class _Applier:
    """One application of a report to the rows of one host.

    It loads the host's whole tree in a few SELECTs, matches it against
    the report by key, lets the session write what differs, and deletes
    what is gone with one DELETE per table.
    """

    def __init__(self, session, hostname):
        self.session = session
        self.hostname = hostname
        self.added, self.removed, self.changed = set(), set(), set()
        self.vanished = set()
        self.dirty_devices = set()
        self.new_leaves = []
        self.in_use = {True: [], False: []}
        self.doomed = {model: set() for model in (
            models.AttachHandle, models.Attribute, models.Deployable,
            models.ControlpathID, models.Device)}

    def apply(self, wanted):
        self._load()
        devices = self._apply_devices(wanted)
        deployables = self._apply_deployables(wanted, devices)
        self.busy = self._held_elsewhere(deployables)
        for name, (device, cpid, dep) in deployables.items():
            row = self.deployables[name]
            self._apply_attributes(row, dep['attributes'])
            self._apply_handles(row, cpid, dep['attach_handles'])
        self._keep_or_remove(wanted)
        self.session.flush()
        for model in (models.Attribute, models.AttachHandle):
            self._insert(model, [row for row in self.new_leaves
                                 if isinstance(row, model)], ids=False)
        self._write_in_use()
        self._delete()
        return InventoryDiff(*(tuple(sorted(names)) for names in (
            self.added, self.removed, self.changed - self.added,
            self.vanished)))

    # --- loading -----------------------------------------------------------

    def _load(self):
        device, deployable = models.Device, models.Deployable
        handle, arq = models.AttachHandle, models.AcceleratorRequest
        on_host = device.hostname == self.hostname

        def of_host(query, model):
            """Rows of ``model``, a table below deployables, on the host."""
            return query.join(
                deployable, model.deployable_id == deployable.id).join(
                    device, deployable.device_id == device.id).filter(on_host)

        rows = self.session.query(device).filter(on_host).order_by(
            device.id).all()
        cpids = self.session.query(models.ControlpathID).join(
            device, models.ControlpathID.device_id == device.id).filter(
                on_host).order_by(models.ControlpathID.id).all()
        deps = self.session.query(deployable).join(
            device, deployable.device_id == device.id).filter(on_host).all()
        attributes = of_host(self.session.query(models.Attribute),
                             models.Attribute).all()
        handles = of_host(self.session.query(handle), handle).order_by(
            handle.id).all()
        arqs = self.session.query(
            arq.uuid, arq.attach_handle_id, arq.deployable_id).filter(
                sa.or_(arq.deployable_id.in_(sa.select(deployable.id).join(
                           device, deployable.device_id == device.id).where(
                               on_host)),
                       arq.attach_handle_id.in_(of_host(
                           sa.select(handle.id), handle)))).all()

        self.cpid_of = {}
        for cpid in cpids:
            self.cpid_of.setdefault(cpid.device_id, cpid)
        self.unreported = {}
        self.stale = []
        for row in rows:
            cpid = self.cpid_of.get(row.id)
            address = cpid and pci_address.address_of(cpid.cpid_info)
            if address is None or address in self.unreported:
                self.stale.append(row)
            else:
                self.unreported[address] = row
        self.deployables = {}
        self.unmatched = {dep.name: dep for dep in deps}
        self.attributes = {}
        for attr in attributes:
            self.attributes.setdefault(attr.deployable_id, {})[
                attr.key] = attr
        self.handles = {}
        for row in handles:
            self.handles.setdefault(row.deployable_id, []).append(row)
        # An ARQ holds its handle and the handle's deployable, or the
        # deployable it is being bound to.
        handle_deployable = {row.id: row.deployable_id for row in handles}
        self.held_handles = {}
        self.held_deployables = {}
        for uuid, handle_id, deployable_id in arqs:
            if handle_id in handle_deployable:
                self.held_handles[handle_id] = uuid
                deployable_id = handle_deployable[handle_id]
            self.held_deployables.setdefault(deployable_id, set()).add(uuid)

    def _insert(self, model, rows, ids=True):
        """INSERT new rows in one statement where the database allows.

        The ORM's unit of work inserts row by row when it needs the new
        ids back and the database cannot tell which id went to which row;
        a bulk INSERT that returns each row's uuid with its id can.

        :param rows: transient model instances; they get their ids.
        """
        if not rows:
            return
        columns = [c.key for c in model.__table__.columns]
        values = [{key: getattr(row, key) for key in columns
                   if getattr(row, key) is not None} for row in rows]
        if not ids:
            self.session.execute(sa.insert(model), values)
            return
        if self.session.get_bind().dialect.insert_executemany_returning:
            found = dict(self.session.execute(
                sa.insert(model).returning(model.uuid, model.id),
                values).all())
        else:
            self.session.execute(sa.insert(model), values)
            found = dict(self.session.query(model.uuid, model.id).filter(
                model.uuid.in_([row.uuid for row in rows])).all())
        for row in rows:
            row.id = found[row.uuid]

    # --- matching ------------------------------------------------------------

    @staticmethod
    def _update(row, values):
        changed = False
        for key, value in values.items():
            if getattr(row, key) != value:
                setattr(row, key, value)
                changed = True
        return changed

    def _touched(self, row):
        self.changed.add(row.name)

    def _apply_devices(self, wanted):
        """Match, update and add devices and their control path ids.

        :returns: {address: (device row, control path row)}.
        """
        rows, new = {}, []
        for address, (device, _deps) in wanted.items():
            values = {field: device[field] for field in _DEVICE_FIELDS}
            row = self.unreported.pop(address, None)
            if row is None:
                row = models.Device(uuid=uuidutils.generate_uuid(),
                                    hostname=self.hostname, **values)
                new.append(row)
            else:
                if self._update(row, values):
                    self.dirty_devices.add(row.id)
                if row.vanished_at is not None:
                    LOG.info('Device %(device)s (%(address)s) of host '
                             '%(host)s is reported again',
                             {'device': row.uuid, 'address': address,
                              'host': self.hostname})
                    row.vanished_at = None
                    self.dirty_devices.add(row.id)
            rows[address] = row
        self._insert(models.Device, new)
        new = []
        result = {}
        for address, row in rows.items():
            device = wanted[address][0]
            values = {'cpid_type': device['cpid_type'],
                      'cpid_info': dict(device['cpid_info'])}
            cpid = self.cpid_of.get(row.id)
            if cpid is None:
                cpid = models.ControlpathID(uuid=uuidutils.generate_uuid(),
                                            device_id=row.id, **values)
                new.append(cpid)
            elif self._update(cpid, values):
                self.dirty_devices.add(row.id)
            result[address] = (row, cpid)
        self._insert(models.ControlpathID, new)
        return result

    def _apply_deployables(self, wanted, devices):
        """Match, update and add deployables, parents before children.

        A child whose parent is new waits for the INSERT that gives the
        parent its id: one INSERT per level of the deepest tree.

        :returns: {name: (device row, control path row, reported dict)}.
        """
        reported = {}
        pending = [(address, dep) for address, (_device, deps)
                   in wanted.items() for dep in deps]
        while pending:
            later, new = [], []
            for address, dep in pending:
                parent = self.deployables.get(dep['parent_name'])
                if dep['parent_name'] is not None and parent.id is None:
                    later.append((address, dep))
                    continue
                device, cpid = devices[address]
                row = self._apply_deployable(device, parent, dep)
                if row.id is None:
                    new.append(row)
                reported[dep['name']] = (device, cpid, dep)
            self._insert(models.Deployable, new)
            pending = later
        return reported

    def _apply_deployable(self, device, parent, dep):
        values = {field: dep[field] for field in _DEPLOYABLE_FIELDS}
        values.update(device_id=device.id, parent_id=None, root_id=None)
        if parent is not None:
            values.update(parent_id=parent.id,
                          root_id=parent.root_id or parent.id)
        row = self.unmatched.pop(dep['name'], None)
        if row is None:
            row = models.Deployable(uuid=uuidutils.generate_uuid(),
                                    name=dep['name'], **values)
            self.added.add(row.name)
        elif self._update(row, values) or device.id in self.dirty_devices:
            self._touched(row)
        self.deployables[row.name] = row
        return row

    def _apply_attributes(self, row, reported):
        current = self.attributes.pop(row.id, {})
        for key, value in reported:
            attr = current.pop(key, None)
            if attr is None:
                self.new_leaves.append(models.Attribute(
                    uuid=uuidutils.generate_uuid(), deployable_id=row.id,
                    key=key, value=value))
                self._touched(row)
            elif self._update(attr, {'value': value}):
                self._touched(row)
        if current:
            self.doomed[models.Attribute].update(
                attr.id for attr in current.values())
            self._touched(row)

    def _held_elsewhere(self, reported):
        """Held handles their deployable no longer reports, by function.

        Such a handle is kept while its ARQ holds it, but the host may
        report its function under another deployable (a driver grouping
        functions otherwise, as openstack-cyborg 17.0.0's drivers did
        with one deployable per virtual function) or with other attach
        info: a handle reported for the same function (see
        :func:`_function_key`) is in use until then, so no other ARQ gets
        it.

        :param reported: {name: (device, control path, reported dict)}.
        """
        busy = collections.Counter()
        names = {row.id: name for name, row in itertools.chain(
            self.deployables.items(), self.unmatched.items())}
        for deployable_id, rows in self.handles.items():
            kept = collections.Counter()
            name = names.get(deployable_id)
            if name in reported:
                kept.update(_handle_key(h['attach_type'], h['attach_info'])
                            for h in reported[name][2]['attach_handles'])
            for row in rows:
                if row.id in self.held_handles:
                    key = _handle_key(row.attach_type, row.attach_info)
                    if kept[key]:
                        kept[key] -= 1
                    else:
                        busy[_function_key(row.attach_type,
                                           row.attach_info)] += 1
        return busy

    def _apply_handles(self, row, cpid, reported):
        """Match handles as a multiset: equal keys are interchangeable.

        Several MDEV handles of one type share their attach info, so a key
        counts its handles. Where rows outnumber the report, the ones that
        ARQs hold or the host uses are matched first and so kept. A handle
        of a function that an unreported held handle makes busy (see
        :meth:`_held_elsewhere`) is in use.
        """
        current, wanted = {}, {}
        for handle in self.handles.pop(row.id, []):
            key = _handle_key(handle.attach_type, handle.attach_info)
            current.setdefault(key, []).append(handle)
        for handle in reported:
            key = _handle_key(handle['attach_type'], handle['attach_info'])
            function = _function_key(handle['attach_type'],
                                     handle['attach_info'])
            if self.busy[function] and not handle['in_use']:
                self.busy[function] -= 1
                handle = dict(handle, in_use=True)
            wanted.setdefault(key, []).append(handle)
        for key, handles in wanted.items():
            handles.sort(key=lambda handle: not handle['in_use'])
            rows = sorted(current.pop(key, []), key=lambda handle: (
                handle.id not in self.held_handles, not handle.in_use))
            for handle, values in zip(rows, handles):
                if self._update(handle, {'cpid_id': cpid.id}):
                    self._touched(row)
                if (handle.in_use != bool(values['in_use']) and
                        handle.id not in self.held_handles):
                    self.in_use[bool(values['in_use'])].append(handle.id)
                    self._touched(row)
            for values in handles[len(rows):]:
                self.new_leaves.append(models.AttachHandle(
                    uuid=uuidutils.generate_uuid(), deployable_id=row.id,
                    cpid_id=cpid.id, in_use=bool(values['in_use']),
                    attach_type=values['attach_type'],
                    attach_info=dict(values['attach_info'])))
                self._touched(row)
            current[key] = rows[len(handles):]
        for handle in itertools.chain.from_iterable(current.values()):
            if handle.id in self.held_handles:
                LOG.warning('Host %(host)s no longer reports attach handle '
                            '%(handle)s of %(dep)s, but accelerator request '
                            '%(arq)s holds it; it is kept until released',
                            {'host': self.hostname, 'handle': handle.uuid,
                             'dep': row.name,
                             'arq': self.held_handles[handle.id]})
                self.vanished.add(row.name)
            else:
                self.doomed[models.AttachHandle].add(handle.id)
                self._touched(row)

    # --- what is gone ------------------------------------------------------

    def _keep_or_remove(self, wanted):
        """Delete unreported rows unless ARQs hold them.

        A held deployable keeps its ancestors; an unreported device keeps
        its whole tree while any of its deployables is held, and is marked
        vanished.
        """
        by_id = {dep.id: dep for dep in self.unmatched.values()}
        held_devices = {}
        kept = set()
        for dep in self.unmatched.values():
            arqs = self.held_deployables.get(dep.id)
            if arqs:
                held_devices.setdefault(dep.device_id, set()).update(arqs)
                while dep is not None and dep.id not in kept:
                    kept.add(dep.id)
                    dep = by_id.get(dep.parent_id)
        vanishing = set()
        for device in list(self.unreported.values()) + self.stale:
            if device.id in held_devices:
                vanishing.add(device.id)
                self._vanish(device, held_devices[device.id])
            else:
                self.doomed[models.Device].add(device.id)
                cpid = self.cpid_of.get(device.id)
                if cpid is not None:
                    self.doomed[models.ControlpathID].add(cpid.id)
        for dep in self.unmatched.values():
            if dep.id in kept or dep.device_id in vanishing:
                self.vanished.add(dep.name)
                if dep.device_id in self.dirty_devices:
                    self._touched(dep)
                continue
            self.removed.add(dep.name)
            self.doomed[models.Deployable].add(dep.id)
            self.doomed[models.Attribute].update(
                attr.id for attr in self.attributes.get(dep.id, {}).values())
            self.doomed[models.AttachHandle].update(
                handle.id for handle in self.handles.get(dep.id, ()))

    def _vanish(self, device, arqs):
        LOG.warning('Device %(device)s of host %(host)s is no longer '
                    'reported, but accelerator requests %(arqs)s hold it; '
                    'it is kept until they are released',
                    {'device': device.uuid, 'host': self.hostname,
                     'arqs': ', '.join(sorted(arqs))})
        if device.vanished_at is None:
            device.vanished_at = timeutils.utcnow()
            self.dirty_devices.add(device.id)

    def _write_in_use(self):
        """Follow the host's own use of handles that no ARQ holds.

        The UPDATE re-checks that no ARQ holds the handle, in case a bind
        claimed it since the tree was loaded.
        """
        model, arq = models.AttachHandle, models.AcceleratorRequest
        for in_use, ids in self.in_use.items():
            if ids:
                self.session.query(model).filter(
                    model.id.in_(ids), model.in_use != in_use,
                    ~sa.exists().where(arq.attach_handle_id == model.id),
                ).update({'in_use': in_use}, synchronize_session=False)

    def _delete(self):
        deps = self.doomed[models.Deployable]
        if deps:
            # MySQL checks foreign keys row by row: unlink the tree first.
            self.session.query(models.Deployable).filter(
                models.Deployable.id.in_(deps),
                sa.or_(models.Deployable.parent_id.isnot(None),
                       models.Deployable.root_id.isnot(None))).update(
                {'parent_id': None, 'root_id': None},
                synchronize_session=False)
        for model, ids in self.doomed.items():
            if ids:
                self.session.query(model).filter(model.id.in_(ids)).delete(
                    synchronize_session=False)
