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
:mod:`cyborg.db.inventory_plan` says what differs; this module loads the
rows and writes the plan.
"""

import dataclasses

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg.db import api
from cyborg.db.api import main_context_manager
from cyborg.db import host_names
from cyborg.db import inventory_functions
from cyborg.db import inventory_plan
from cyborg.db import models
from cyborg import exception

LOG = logging.getLogger(__name__)

#: What :func:`apply` returns (defined beside the plan that holds it).
InventoryDiff = inventory_plan.InventoryDiff


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
    A PCI function that two devices report is given to one of them only
    (see :mod:`cyborg.db.inventory_functions`).

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
    wanted = inventory_plan.wanted(hostname, devices)
    if compute_node is not None:
        host_names.check(context.session, hostname, set(wanted), compute_node)
    rows, loaded = _load(context.session, hostname)
    wanted = inventory_functions.one_owner(hostname, wanted, rows)
    plan = inventory_plan.plan(rows, wanted)
    _log(hostname, plan)
    try:
        _write(context.session, hostname, plan, loaded)
    except db_exc.DBReferenceError as e:
        raise exception.InventoryChanged(
            host=hostname, reason='%s still refers to a removed row'
            % e.table)
    return dataclasses.replace(
        plan.diff,
        devices_added=_inserted_devices(context.session, hostname, plan,
                                        loaded[models.Device]),
        devices_removed=tuple(
            _frozen(inventory_plan.Device, loaded[models.Device][device_id],
                    control_path=None)
            for device_id in plan.devices.delete))


# --- loading -----------------------------------------------------------------

def _load(session, hostname):
    """The host's whole tree in a few SELECTs.

    :returns: an :class:`inventory_plan.HostRows`, and the loaded rows by
        model and id, which the plan's updates change.
    """
    device, deployable = models.Device, models.Deployable
    handle, arq = models.AttachHandle, models.AcceleratorRequest
    on_host = device.hostname == hostname

    def of_host(query, model):
        """Rows of ``model``, a table below deployables, on the host."""
        return query.join(
            deployable, model.deployable_id == deployable.id).join(
                device, deployable.device_id == device.id).filter(on_host)

    devices = session.query(device).filter(on_host).order_by(
        device.id).all()
    cpids = session.query(models.ControlpathID).join(
        device, models.ControlpathID.device_id == device.id).filter(
            on_host).order_by(models.ControlpathID.id).all()
    deps = session.query(deployable).join(
        device, deployable.device_id == device.id).filter(on_host).all()
    attributes = of_host(session.query(models.Attribute),
                         models.Attribute).all()
    handles = of_host(session.query(handle), handle).order_by(
        handle.id).all()
    holds = session.query(
        arq.uuid, arq.attach_handle_id, arq.deployable_id).filter(
            sa.or_(arq.deployable_id.in_(sa.select(deployable.id).join(
                       device, deployable.device_id == device.id).where(
                           on_host)),
                   arq.attach_handle_id.in_(of_host(
                       sa.select(handle.id), handle)))).all()

    control_path = {}
    for cpid in cpids:
        control_path.setdefault(cpid.device_id, _frozen(
            inventory_plan.ControlPath, cpid))
    rows = inventory_plan.HostRows(
        devices=tuple(_frozen(inventory_plan.Device, row,
                              control_path=control_path.get(row.id))
                      for row in devices),
        deployables=tuple(_frozen(inventory_plan.Deployable, row)
                          for row in deps),
        attributes=tuple(_frozen(inventory_plan.Attribute, row)
                         for row in attributes),
        attach_handles=tuple(_frozen(inventory_plan.AttachHandle, row)
                             for row in handles),
        holds=tuple(inventory_plan.Hold(*hold) for hold in holds))
    loaded = {model: {row.id: row for row in found} for model, found in (
        (models.Device, devices), (models.ControlpathID, cpids),
        (models.Deployable, deps), (models.Attribute, attributes),
        (models.AttachHandle, handles))}
    return rows, loaded


def _frozen(cls, row, **given):
    """A plan's namedtuple ``cls`` of a model row's columns."""
    return cls(*(given[field] if field in given else getattr(row, field)
                 for field in cls._fields))


def _inserted_devices(session, hostname, plan, loaded):
    """The host's devices that the plan inserted (not among ``loaded``)."""
    if not plan.devices.insert:
        return ()
    rows = session.query(models.Device).filter(
        models.Device.hostname == hostname,
        models.Device.id.notin_(list(loaded))).order_by(models.Device.id)
    return tuple(_frozen(inventory_plan.Device, row, control_path=None)
                 for row in rows)


# --- writing -----------------------------------------------------------------

def _log(hostname, plan):
    """Tell what the plan keeps for accelerator requests, or finds again."""
    for uuid, address in plan.reappeared:
        LOG.info('Device %(device)s (%(address)s) of host %(host)s is '
                 'reported again',
                 {'device': uuid, 'address': address, 'host': hostname})
    for kept in plan.kept_handles:
        LOG.warning('Host %(host)s no longer reports attach handle '
                    '%(handle)s of %(dep)s, but accelerator request '
                    '%(arq)s holds it; it is kept until released',
                    {'host': hostname, 'handle': kept.uuid,
                     'dep': kept.deployable, 'arq': kept.arq_uuid})
    for device in plan.vanishing:
        LOG.warning('Device %(device)s of host %(host)s is no longer '
                    'reported, but accelerator requests %(arqs)s hold it; '
                    'it is kept until they are released',
                    {'device': device.uuid, 'host': hostname,
                     'arqs': ', '.join(device.arq_uuids)})


def _write(session, hostname, plan, loaded):
    """Write the plan: the session flushes the loaded rows it changes.

    New rows are inserted parents first, each table in one statement
    (deployables in one per level of their trees), and get their ids;
    the attributes and handles of new deployables after them.
    """
    ids = {}  # {inventory_plan.Ref: id} of the rows inserted so far
    _update(loaded[models.Device], plan.devices.update, ids)
    for rows in plan.devices.insert:
        _insert(session, models.Device, rows, ids, hostname=hostname)
    _update(loaded[models.ControlpathID], plan.control_paths.update, ids)
    for rows in plan.control_paths.insert:
        _insert(session, models.ControlpathID, rows, ids)
    for rows in plan.deployables.insert:
        _insert(session, models.Deployable, rows, ids)
    for model, changes in ((models.Deployable, plan.deployables),
                           (models.Attribute, plan.attributes),
                           (models.AttachHandle, plan.attach_handles)):
        _update(loaded[model], changes.update, ids)
    for device in plan.vanishing:
        if device.mark:
            loaded[models.Device][device.id].vanished_at = timeutils.utcnow()
    session.flush()
    for changes, model in ((plan.attributes, models.Attribute),
                           (plan.attach_handles, models.AttachHandle)):
        for rows in changes.insert:
            _insert(session, model, rows, ids)
    _write_in_use(session, plan.in_use)
    _delete(session, plan)


def _resolved(values, ids):
    """``values`` with the ids of the new rows their Refs stand for."""
    return {key: ids[value] if isinstance(value, inventory_plan.Ref)
            else value for key, value in values.items()}


def _update(rows, updates, ids):
    """Change loaded ``rows`` (by id); the session flushes them."""
    for update in updates:
        row = rows[update.id]
        for key, value in _resolved(update.values, ids).items():
            setattr(row, key, value)


def _insert(session, model, rows, ids, **extra):
    """INSERT new rows in one statement where the database allows.

    The ORM's unit of work inserts row by row when it needs the new
    ids back and the database cannot tell which id went to which row;
    a bulk INSERT that returns each row's uuid with its id can.

    :param rows: :class:`inventory_plan.New` rows; those with a ``ref``
        have their ids recorded in ``ids`` under it.
    """
    values = [{key: value for key, value in dict(
        _resolved(row.values, ids), uuid=uuidutils.generate_uuid(),
        **extra).items() if value is not None} for row in rows]
    if rows[0].ref is None:
        session.execute(sa.insert(model), values)
        return
    if session.get_bind().dialect.insert_executemany_returning:
        found = dict(session.execute(
            sa.insert(model).returning(model.uuid, model.id),
            values).all())
    else:
        session.execute(sa.insert(model), values)
        found = dict(session.query(model.uuid, model.id).filter(
            model.uuid.in_([row['uuid'] for row in values])).all())
    for row, row_values in zip(rows, values):
        ids[row.ref] = found[row_values['uuid']]


def _write_in_use(session, in_use):
    """Follow the host's own use of handles that no ARQ holds.

    The UPDATE re-checks that no ARQ holds the handle, in case a bind
    claimed it since the tree was loaded.
    """
    model, arq = models.AttachHandle, models.AcceleratorRequest
    for value in (True, False):
        ids = [handle_id for handle_id, used in in_use if used == value]
        if ids:
            session.query(model).filter(
                model.id.in_(ids), model.in_use != value,
                ~sa.exists().where(arq.attach_handle_id == model.id),
            ).update({'in_use': value}, synchronize_session=False)


def _delete(session, plan):
    """Unlink the deployables to delete, then DELETE per table."""
    deps = plan.deployables.delete
    if deps:
        # MySQL checks foreign keys row by row: unlink the tree first.
        session.query(models.Deployable).filter(
            models.Deployable.id.in_(deps),
            sa.or_(models.Deployable.parent_id.isnot(None),
                   models.Deployable.root_id.isnot(None))).update(
            {'parent_id': None, 'root_id': None},
            synchronize_session=False)
    for model, changes in ((models.AttachHandle, plan.attach_handles),
                           (models.Attribute, plan.attributes),
                           (models.Deployable, plan.deployables),
                           (models.ControlpathID, plan.control_paths),
                           (models.Device, plan.devices)):
        if changes.delete:
            session.query(model).filter(model.id.in_(changes.delete)).delete(
                synchronize_session=False)
