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
"""Accelerator requests in the database: every state change conditional.

A state change is an UPDATE that only matches while the ARQ is in a state
the transition table (:mod:`cyborg.states`) allows it to leave for the
target, so of two concurrent callers exactly one wins. An ARQ's attach
handle is claimed and released in the same transaction as the ARQ row
that holds it.
"""

import typing

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg.common import profile_group
from cyborg.db import api
from cyborg.db.api import main_context_manager
from cyborg.db import attach_handle
from cyborg.db import device_profile
from cyborg.db import models
from cyborg.db import nova_event
from cyborg import exception
from cyborg import states

_MODEL = models.AcceleratorRequest
_NOUN = 'accelerator_request'


@main_context_manager.writer
def create_many(context, values_list):
    """Insert several ARQs in one transaction and return them."""
    rows = []
    for values in values_list:
        values = dict(values)
        values.setdefault('uuid', uuidutils.generate_uuid())
        values.setdefault('state', states.INITIAL)
        rows.append(_MODEL(**values))
    context.session.add_all(rows)
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.DuplicateEntry(
            kind=_NOUN, field='uuid', value=', '.join(r.uuid for r in rows))
    except db_exc.DBReferenceError:
        raise exception.DeviceProfileNotFound(
            name=', '.join(sorted({str(r.device_profile_id) for r in rows})))
    # Read them back so the profile and handle joins are loaded.
    return context.session.query(_MODEL).filter(
        _MODEL.uuid.in_([r.uuid for r in rows])).order_by(_MODEL.id).all()


@main_context_manager.writer
def create_for_profile(context, device_profile_name, project_id, limit):
    """Insert one ARQ per requested unit of every group of a profile.

    The profile is found and the ARQs inserted in one transaction. Each
    ARQ is one plain INSERT rather than a flush of the session's unit of
    work (a third of the conductor's CPU for a create), and the rows are
    returned as inserted, without reading them back: their profile is the
    row just found, and a new ARQ has no attach handle.

    :param limit: the most ARQs one profile may make.
    :raises DeviceProfileNotFound: no profile has that name.
    :raises DeviceProfileDisabled: the profile makes no new ARQs.
    :raises TooManyAccelerators: the profile asks for more than ``limit``.
    """
    profile = device_profile.get_by_name(context, device_profile_name)
    if not profile.enabled:
        raise exception.DeviceProfileDisabled(name=profile.name)
    units = [profile_group.parse(group).units for group in profile.groups]
    if sum(units) > limit:
        raise exception.TooManyAccelerators(name=profile.name,
                                            count=sum(units), limit=limit)
    rows = []
    for group_id, group in enumerate(profile.groups):
        for _unit in range(units[group_id]):
            values = {'uuid': uuidutils.generate_uuid(),
                      'state': states.INITIAL,
                      'device_profile_id': profile.id,
                      'device_profile_group_id': group_id,
                      'device_profile_group': group,
                      'project_id': project_id,
                      'created_at': timeutils.utcnow()}
            try:
                row_id, = context.session.execute(
                    sa.insert(_MODEL.__table__).values(values)
                ).inserted_primary_key
            except db_exc.DBReferenceError:
                # Deleted by another transaction since it was found.
                raise exception.DeviceProfileNotFound(
                    name=device_profile_name)
            rows.append(_MODEL(id=row_id, device_profile=profile,
                               attach_handle=None, **values))
    return rows


def _refused(context, uuid, target):
    row = api.get(context, _NOUN, uuid)
    return exception.AcceleratorRequestInvalidState(
        uuid=uuid, state=row.state,
        allowed=', '.join(sorted(states.sources_of(target))))


def _move(context, uuid, target, values=None, expected=None, row=None):
    """Move one ARQ to ``target`` in the caller's transaction.

    An ARQ of an instance that becomes Bound or BindFailed gets the event
    that tells Nova, in the same transaction (:mod:`cyborg.db.nova_event`).

    :param row: the ARQ's row, locked by the caller: its instance is the
        event's, unless ``values`` changes it (otherwise it is read).
    :raises AcceleratorRequestInvalidState: the UPDATE matched nothing.
    """
    sources = states.sources_of(target)
    if expected is not None:
        sources = sources & frozenset(expected)
    changes = dict(values or {}, state=target)
    count = context.session.query(_MODEL).filter(
        _MODEL.uuid == uuid, _MODEL.state.in_(sorted(sources))).update(
            changes, synchronize_session=False)
    if not count:
        raise _refused(context, uuid, target)
    if target in states.NOVA_EVENT_STATUS:
        if row is None:
            instance_uuid = context.session.query(
                _MODEL.instance_uuid).filter(_MODEL.uuid == uuid).scalar()
        else:
            instance_uuid = changes.get('instance_uuid', row.instance_uuid)
        if instance_uuid:
            nova_event.record(context, instance_uuid, uuid, target)


@api.retry_on_deadlock
@main_context_manager.writer
def update_state(context, uuid, target, values=None, expected=None):
    """Move an ARQ to ``target`` with a conditional UPDATE.

    The UPDATE only matches while the ARQ is in a state the transition
    table allows (narrowed to ``expected`` when given).

    :raises AcceleratorRequestNotFound: no such ARQ.
    :raises AcceleratorRequestInvalidState: the ARQ is in another state.
    """
    _move(context, uuid, target, values, expected)
    context.session.expire_all()
    return api.get(context, _NOUN, uuid)


@api.retry_on_deadlock
@main_context_manager.writer
def start_binds(context, binds):
    """Move several ARQs to BindStarted in one transaction: all, or none.

    Each ARQ moves only from the state its caller saw when it checked the
    bind, so a concurrent change of any of them between that check and
    this move refuses the whole batch and leaves every ARQ as it was.

    :param binds: {uuid: (state seen, values to set)}.
    :returns: the BindStarted rows, in ``binds``' order.
    :raises AcceleratorRequestInvalidState: one of them changed meanwhile.
    """
    # One order for every caller: two batches sharing ARQs lock them in
    # the same order and so never wait on each other in a cycle.
    for uuid in sorted(binds):
        seen, values = binds[uuid]
        _move(context, uuid, states.BIND_STARTED, values, expected=[seen])
    context.session.expire_all()
    rows = {row.uuid: row for row in context.session.query(_MODEL).filter(
        _MODEL.uuid.in_(list(binds)))}
    return [rows[uuid] for uuid in binds]


def _for_update(context, uuid):
    """The ARQ row, locked until the transaction ends (where supported)."""
    # Lock by a bare column: PostgreSQL refuses FOR UPDATE on the outer
    # joins that loading the whole row brings.
    locked = context.session.query(_MODEL.id).filter_by(
        uuid=uuid).with_for_update().first()
    if locked is None:
        raise api.not_found(_NOUN, uuid)
    return context.session.query(_MODEL).filter_by(id=locked.id).one()


_UNBIND_VALUES = {'hostname': None, 'device_rp_uuid': None,
                  'instance_uuid': None}


def _let_go(context, uuid, target, values=None, expected=None):
    """Move the ARQ to ``target`` and release the handle it holds.

    The row is locked first, so a handle that a bind claims meanwhile is
    the one released and never leaks.
    """
    row = _for_update(context, uuid)
    handle_id = row.attach_handle_id
    values = dict(values or {}, attach_handle_id=None, deployable_id=None)
    _move(context, uuid, target, values=values,
          expected=expected or [row.state], row=row)
    attach_handle.release(context, [handle_id])
    context.session.expire_all()
    return api.get(context, _NOUN, uuid)


@api.retry_on_deadlock
@main_context_manager.writer
def unbind(context, uuid):
    """Release the ARQ's handle and forget its host, RP and instance."""
    return _let_go(context, uuid, states.UNBOUND, values=_UNBIND_VALUES)


class Claim(typing.NamedTuple):
    """What :func:`claim_handle` did."""

    #: The ARQ's row after the claim.
    arq: models.AcceleratorRequest
    #: Whether the claim also bound the ARQ (Bound, its event recorded).
    bound: bool


@api.retry_on_deadlock
@main_context_manager.writer
def claim_handle(context, uuid, deployable_id, finish=False):
    """Claim a free handle of a deployable for a BindStarted ARQ.

    The ARQ stays BindStarted (programming or an mdev may still be needed);
    :func:`update_state` to Bound or :func:`bind_failed` ends the bind. A
    claim already made for this ARQ on this deployable is returned again,
    so a resumed bind carries on with the handle it had.

    :param finish: nothing but the handle is needed: unless it is an MDEV
        handle (whose mdev is still to be made), the ARQ becomes Bound in
        the same transaction, with its event for Nova.
    :returns: a :class:`Claim`: the ARQ's row, and whether the claim also
        bound it.
    :raises AttachHandleUnavailable: every handle of the deployable is used.
    :raises AcceleratorRequestInvalidState: the ARQ is no longer binding.
    """
    row = _for_update(context, uuid)
    if row.state != states.BIND_STARTED:
        raise _refused(context, uuid, states.BOUND)
    handle_type = None
    if row.attach_handle_id is None or row.deployable_id != deployable_id:
        # Resumed towards another deployable: give the old handle back.
        attach_handle.release(context, [row.attach_handle_id])
        row.attach_handle_id, handle_type = attach_handle.claim(
            context, deployable_id)
        row.deployable_id = deployable_id
        context.session.flush()
    if not finish:
        return Claim(row, bound=False)
    if handle_type is None:
        # Resumed with the handle it had claimed.
        handle_type = attach_handle.attach_type(context, row.attach_handle_id)
    if handle_type == states.ATTACH_MDEV:
        return Claim(row, bound=False)
    _move(context, uuid, states.BOUND, expected=[states.BIND_STARTED],
          row=row)
    context.session.expire_all()
    return Claim(api.get(context, _NOUN, uuid), bound=True)


@api.retry_on_deadlock
@main_context_manager.writer
def bind_failed(context, uuid):
    """Move a BindStarted ARQ to BindFailed and release its handle.

    Host, resource provider and instance stay, so Nova still finds the
    failed ARQ by instance.

    :raises AcceleratorRequestInvalidState: the ARQ is no longer binding
        (bound elsewhere, unbound or being deleted): nothing is changed.
    """
    return _let_go(context, uuid, states.BIND_FAILED,
                   expected=[states.BIND_STARTED])


@main_context_manager.reader
def list_bind_started(context, updated_before=None):
    """BindStarted ARQs, optionally only those unchanged since a time."""
    query = context.session.query(_MODEL).filter(
        _MODEL.state == states.BIND_STARTED)
    if updated_before is not None:
        query = query.filter(sa.func.coalesce(
            _MODEL.updated_at, _MODEL.created_at) < updated_before)
    return query.order_by(_MODEL.id).all()


@api.retry_on_deadlock
@main_context_manager.writer
def delete_many(context, uuids=None, instance_uuid=None):
    """Delete ARQs by uuid (all or nothing) or by instance (idempotent).

    Their attach handles are released in the same transaction.

    :returns: the deleted rows, as they were.
    """
    # Lock the rows (by a bare column, as _for_update does) so that a
    # handle claimed by a bind running meanwhile is the one released.
    locked = context.session.query(_MODEL.id)
    if uuids is not None:
        locked = locked.filter(_MODEL.uuid.in_(list(uuids)))
    else:
        locked = locked.filter(_MODEL.instance_uuid == instance_uuid)
    ids = [row_id for (row_id,) in locked.with_for_update().all()]
    rows = context.session.query(_MODEL).filter(_MODEL.id.in_(ids)).all()
    if uuids is not None:
        missing = set(uuids) - {r.uuid for r in rows}
        if missing:
            raise exception.AcceleratorRequestNotFound(
                uuid=', '.join(sorted(missing)))
    if not ids:
        return []
    context.session.query(_MODEL).filter(_MODEL.id.in_(ids)).update(
        {'state': states.DELETING, 'attach_handle_id': None},
        synchronize_session=False)
    attach_handle.release(context, [r.attach_handle_id for r in rows])
    context.session.query(_MODEL).filter(_MODEL.id.in_(ids)).delete(
        synchronize_session=False)
    return rows
