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
"""A host's rows, loaded for the plan of its report and written as it says.

:func:`apply` loads the rows of one host, hands them to the conductor's
plan (:mod:`cyborg.conductor.inventory_plan`), and writes the
:class:`~cyborg.common.host_inventory.Plan` it gets back, all in one
transaction. Nothing here decides what to write.
"""

import dataclasses

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg.common import host_inventory
from cyborg.db import api
from cyborg.db.api import main_context_manager
from cyborg.db import host_names
from cyborg.db import models
from cyborg import exception


@dataclasses.dataclass(frozen=True)
class HostRows:
    """The rows of one host, as loaded; each table in the order of its ids.

    ``control_paths`` are those of the host's devices; ``holds`` the
    accelerator requests that hold a handle or a deployable of the host,
    each with its ``uuid``, ``attach_handle_id`` and ``deployable_id``.
    """

    devices: tuple = ()
    control_paths: tuple = ()
    deployables: tuple = ()
    attributes: tuple = ()
    attach_handles: tuple = ()
    holds: tuple = ()


@api.retry_on_deadlock
@main_context_manager.writer
def apply(context, hostname, plan, addresses=(), compute_node=None):
    """Write what ``plan`` says of the host's rows, in one transaction.

    :param plan: a callable that takes the host's :class:`HostRows` and
        returns the :class:`~cyborg.common.host_inventory.Plan` to write
        (:func:`cyborg.conductor.inventory_plan.apply` gives it).
    :param addresses: the PCI addresses of the devices the report holds.
    :param compute_node: given when the report may add a device: see
        :func:`cyborg.db.host_names.check`.
    :returns: the plan's :class:`~cyborg.common.host_inventory.
        InventoryDiff`, its ``devices_added`` and ``devices_removed`` the
        device rows inserted and deleted.
    :raises HostNameConflict: see ``compute_node``; nothing was written.
    :raises InventoryChanged: a concurrent bind took a handle being
        removed; nothing was written.
    """
    if compute_node is not None:
        host_names.check(context.session, hostname, set(addresses),
                         compute_node)
    rows, loaded = _load(context.session, hostname)
    result = plan(rows)
    try:
        _write(context.session, hostname, result, loaded)
    except db_exc.DBReferenceError as e:
        raise exception.InventoryChanged(
            host=hostname, reason='%s still refers to a removed row'
            % e.table)
    return dataclasses.replace(
        result.diff,
        devices_added=_inserted_devices(context.session, hostname, result,
                                        loaded[models.Device]),
        devices_removed=tuple(loaded[models.Device][device_id]
                              for device_id in result.devices.delete))


# --- loading -----------------------------------------------------------------

def _load(session, hostname):
    """The host's whole tree in a few SELECTs.

    :returns: a :class:`HostRows`, and the loaded rows by model and id,
        which the plan's updates change.
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

    rows = HostRows(devices=tuple(devices), control_paths=tuple(cpids),
                    deployables=tuple(deps), attributes=tuple(attributes),
                    attach_handles=tuple(handles), holds=tuple(holds))
    loaded = {model: {row.id: row for row in found} for model, found in (
        (models.Device, devices), (models.ControlpathID, cpids),
        (models.Deployable, deps), (models.Attribute, attributes),
        (models.AttachHandle, handles))}
    return rows, loaded


def _inserted_devices(session, hostname, plan, loaded):
    """The host's devices that the plan inserted (not among ``loaded``)."""
    if not plan.devices.insert:
        return ()
    rows = session.query(models.Device).filter(
        models.Device.hostname == hostname,
        models.Device.id.notin_(list(loaded))).order_by(models.Device.id)
    return tuple(rows)


# --- writing -----------------------------------------------------------------

def _write(session, hostname, plan, loaded):
    """Write the plan: the session flushes the loaded rows it changes.

    New rows are inserted parents first, each table in one statement
    (deployables in one per level of their trees), and get their ids;
    the attributes and handles of new deployables after them.
    """
    ids = {}  # {host_inventory.Ref: id} of the rows inserted so far
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
    return {key: ids[value] if isinstance(value, host_inventory.Ref)
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

    :param rows: :class:`~cyborg.common.host_inventory.New` rows; those
        with a ``ref`` have their ids recorded in ``ids`` under it.
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
