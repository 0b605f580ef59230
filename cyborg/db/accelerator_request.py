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
from sqlalchemy import orm

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


@api.retry_on_deadlock
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


def _move(context, uuid, target, values=None, expected=None,
          instance_uuid=None, hold=0):
    """Move one ARQ to ``target`` in the caller's transaction.

    An ARQ of an instance that becomes Bound or BindFailed gets the event
    that tells Nova, in the same transaction (:mod:`cyborg.db.nova_event`).

    :param instance_uuid: the ARQ's instance, as the caller knows it: the
        event's, unless ``values`` changes it (otherwise it is read).
    :param hold: seconds the event is held for the caller to send (see
        :func:`cyborg.db.nova_event.record`).
    :returns: the event's row, or None.
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
    if target not in states.NOVA_EVENT_STATUS:
        return None
    if 'instance_uuid' in changes:
        instance_uuid = changes['instance_uuid']
    elif instance_uuid is None:
        instance_uuid = context.session.query(
            _MODEL.instance_uuid).filter(_MODEL.uuid == uuid).scalar()
    if not instance_uuid:
        return None
    return nova_event.record(context, instance_uuid, uuid, target, hold=hold)


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


class BindTarget(typing.NamedTuple):
    """What the checks of a bind need of a resource provider's deployable."""

    #: The deployable's row; its ``programming_since`` is its mark.
    deployable: models.Deployable
    #: The row of its device.
    device: models.Device
    #: (key, value) of its attributes.
    attributes: list
    #: Whether a handle of it is an MDEV one.
    mdev: bool


@main_context_manager.reader
def bind_targets(context, rp_uuids):
    """{rp_uuid: :class:`BindTarget`} of the deployables of those RPs.

    One statement. Of two deployables of one resource provider, the first
    created counts.
    """
    deployable, device = models.Deployable, models.Device
    attribute, handle = models.Attribute, models.AttachHandle
    mdev = sa.exists().where(handle.deployable_id == deployable.id,
                             handle.attach_type == states.ATTACH_MDEV)
    rows = context.session.query(
        deployable, device, attribute.key, attribute.value, mdev).join(
            device, deployable.device_id == device.id).outerjoin(
                attribute, attribute.deployable_id == deployable.id).filter(
                    deployable.rp_uuid.in_(sorted(rp_uuids))).order_by(
                        deployable.id, attribute.id)
    targets = {}
    for found, its_device, key, value, has_mdev in rows:
        target = targets.setdefault(found.rp_uuid, BindTarget(
            found, its_device, [], bool(has_mdev)))
        if target.deployable is found and key is not None:
            target.attributes.append((key, value))
    return targets


@main_context_manager.reader
def owners(context, uuids, project_id=None):
    """(uuid, project_id, instance_uuid) of the ARQs of ``uuids`` found.

    With ``project_id``, of that project's only. One statement, of the
    three columns alone: the API's check of a caller's ARQs before it asks
    the conductor to change them.
    """
    query = sa.select(_MODEL.uuid, _MODEL.project_id,
                      _MODEL.instance_uuid).where(
                          _MODEL.uuid.in_(sorted(uuids)))
    if project_id is not None:
        query = query.where(_MODEL.project_id == project_id)
    return context.session.execute(query).all()


@main_context_manager.reader
def load_patch(context, uuids, rp_uuids):
    """The ARQs of a bind/unbind patch and the targets of its binds.

    One transaction of two statements at most.

    :returns: ({uuid: row} of the ARQs found, {rp_uuid: BindTarget}).
    """
    rows = context.session.query(_MODEL).filter(
        _MODEL.uuid.in_(sorted(uuids)))
    arqs = {row.uuid: row for row in rows}
    return arqs, (bind_targets(context, rp_uuids) if rp_uuids else {})


@main_context_manager.reader
def holders(context, uuids=None, instance_uuid=None):
    """The ARQs by uuids or of an instance, with the handle each holds.

    One statement of four columns: what deleting them needs first (which
    of them hold an mdev, and where).

    :returns: rows of ``uuid``, ``hostname``, ``attach_handle_id`` and
        ``attach_handle_type`` (the handle's type; None without one).
    """
    handle = models.AttachHandle
    query = sa.select(
        _MODEL.uuid, _MODEL.hostname, _MODEL.attach_handle_id,
        handle.attach_type.label('attach_handle_type')).outerjoin(
            handle, handle.id == _MODEL.attach_handle_id)
    if uuids is not None:
        query = query.where(_MODEL.uuid.in_(sorted(uuids)))
    else:
        query = query.where(_MODEL.instance_uuid == instance_uuid)
    return context.session.execute(query).all()


class Claim(typing.NamedTuple):
    """What a claim of an attach handle did."""

    #: The handle the ARQ holds: its ``id``, ``uuid``, ``attach_type`` and
    #: ``attach_info``.
    handle: typing.Any
    #: Whether the ARQ is Bound now (its event recorded).
    bound: bool


def _hold(context, uuid, instance_uuid, deployable_id, handle, finish,
          hold=0):
    """Give a BindStarted ARQ the handle claimed for it; maybe bind it.

    With ``finish``, a handle that is no MDEV one (whose mdev would still
    be made) binds the ARQ in the same UPDATE.

    :returns: the :class:`Claim` and the event recorded, or None.
    """
    values = {'attach_handle_id': handle.id, 'deployable_id': deployable_id}
    if finish and handle.attach_type != states.ATTACH_MDEV:
        event = _move(context, uuid, states.BOUND, values,
                      expected=[states.BIND_STARTED],
                      instance_uuid=instance_uuid, hold=hold)
        return Claim(handle, bound=True), event
    context.session.query(_MODEL).filter(
        _MODEL.uuid == uuid, _MODEL.state == states.BIND_STARTED).update(
            values, synchronize_session=False)
    return Claim(handle, bound=False), None


@api.retry_on_deadlock
@main_context_manager.writer
def start_binds(context, binds, claims=None, hold=0):
    """Move ARQs to BindStarted together, and bind some of them at once.

    All of them move, or none: each ARQ moves only from the state its
    caller saw when it checked the bind, so a concurrent change of any of
    them between that check and this move refuses the whole batch and
    leaves every ARQ as it was.

    Those of ``claims`` then claim a free handle of their deployable each
    (:func:`cyborg.db.attach_handle.claim`), in the same transaction: with
    a PCI handle an ARQ is Bound, with its event for Nova; with an MDEV
    one it stays BindStarted (its mdev is still to be made). If one of
    them finds no handle it may claim, nothing changes.

    :param binds: {uuid: (state seen, values to set)}; the values name
        the instance.
    :param claims: {uuid: deployable id} of binds to finish now, in the
        order they claim.
    :param hold: seconds the events are held for the caller to send (see
        :func:`cyborg.db.nova_event.record`).
    :returns: ({uuid: its :class:`Claim`} of ``claims``, [the events
        recorded]).
    :raises AcceleratorRequestInvalidState: one of them changed meanwhile.
    :raises AttachHandleUnavailable: a deployable has no handle left for
        one of ``claims``.
    :raises DeployableProgramming: the region of one is being programmed.
    """
    # One order for every caller: two batches sharing ARQs lock them in
    # the same order and so never wait on each other in a cycle.
    for uuid in sorted(binds):
        seen, values = binds[uuid]
        _move(context, uuid, states.BIND_STARTED, values, expected=[seen])
    claims = claims or {}
    outcomes, events = {}, []
    # Deployable after deployable, so that batches lock their trees in one
    # order; the ARQs of one deployable claim in the caller's order.
    for uuid in sorted(claims, key=claims.get):
        handle = attach_handle.claim(context, claims[uuid])
        outcomes[uuid], event = _hold(
            context, uuid, binds[uuid][1]['instance_uuid'], claims[uuid],
            handle, finish=True, hold=hold)
        if event is not None:
            events.append(event)
    return outcomes, events


def _for_update(context, uuid):
    """The ARQ row, locked until the transaction ends (where supported).

    One statement, of the ARQ's own columns: PostgreSQL refuses FOR UPDATE
    on the outer joins that loading its profile and handle brings.
    """
    row = context.session.query(_MODEL).options(orm.raiseload('*')).filter(
        _MODEL.uuid == uuid).with_for_update().first()
    if row is None:
        raise api.not_found(_NOUN, uuid)
    return row


#: What an unbind clears besides the handle.
UNBIND_VALUES = {'hostname': None, 'device_rp_uuid': None,
                 'instance_uuid': None}


def _let_go(context, uuid, target, values=None, expected=None):
    """Move the ARQ to ``target`` and release the handle it holds.

    The row is locked first, so a handle that a bind claims meanwhile is
    the one released and never leaks. Nothing is read back.

    :returns: the ARQ's new ``updated_at``.
    """
    row = _for_update(context, uuid)
    handle_id = row.attach_handle_id
    now = timeutils.utcnow()
    values = dict(values or {}, attach_handle_id=None, deployable_id=None,
                  updated_at=now)
    _move(context, uuid, target, values=values,
          expected=expected or [row.state], instance_uuid=row.instance_uuid)
    attach_handle.release(context, [handle_id])
    return now


@api.retry_on_deadlock
@main_context_manager.writer
def unbind(context, uuid):
    """Release the ARQ's handle and forget its host, RP and instance.

    :returns: the ARQ's new ``updated_at``.
    """
    return _let_go(context, uuid, states.UNBOUND, values=UNBIND_VALUES)


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
    :returns: a :class:`Claim`.
    :raises AttachHandleUnavailable: every handle of the deployable is used.
    :raises AcceleratorRequestInvalidState: the ARQ is no longer binding.
    """
    row = _for_update(context, uuid)
    if row.state != states.BIND_STARTED:
        raise _refused(context, uuid, states.BOUND)
    if row.attach_handle_id is not None and row.deployable_id == deployable_id:
        # Resumed with the handle it had claimed.
        handle = attach_handle.get(context, row.attach_handle_id)
        if not finish or handle.attach_type == states.ATTACH_MDEV:
            return Claim(handle, bound=False)
    else:
        # Resumed towards another deployable: give the old handle back.
        attach_handle.release(context, [row.attach_handle_id])
        handle = attach_handle.claim(context, deployable_id)
    return _hold(context, uuid, row.instance_uuid, deployable_id, handle,
                 finish)[0]


@api.retry_on_deadlock
@main_context_manager.writer
def bind_failed(context, uuid):
    """Move a BindStarted ARQ to BindFailed and release its handle.

    Host, resource provider and instance stay, so Nova still finds the
    failed ARQ by instance.

    :returns: the ARQ's new ``updated_at``.
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

    :returns: the deleted rows' ``id``, ``uuid`` and ``attach_handle_id``
        as they were.
    """
    # The rows are locked and read in one statement of bare columns (a
    # lock on the ARQ's joined relations would fail on PostgreSQL), so
    # that a handle claimed by a bind running meanwhile is the one
    # released.
    locked = context.session.query(_MODEL.id, _MODEL.uuid,
                                   _MODEL.attach_handle_id)
    if uuids is not None:
        locked = locked.filter(_MODEL.uuid.in_(list(uuids)))
    else:
        locked = locked.filter(_MODEL.instance_uuid == instance_uuid)
    rows = locked.with_for_update().all()
    if uuids is not None:
        missing = set(uuids) - {r.uuid for r in rows}
        if missing:
            raise exception.AcceleratorRequestNotFound(
                uuid=', '.join(sorted(missing)))
    if not rows:
        return []
    ids = [r.id for r in rows]
    context.session.query(_MODEL).filter(_MODEL.id.in_(ids)).update(
        {'state': states.DELETING, 'attach_handle_id': None},
        synchronize_session=False)
    attach_handle.release(context, [r.attach_handle_id for r in rows])
    context.session.query(_MODEL).filter(_MODEL.id.in_(ids)).delete(
        synchronize_session=False)
    return rows
