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
"""Database access: plain module functions in enginefacade transactions.

Every function takes a :class:`cyborg.context.RequestContext` first and
returns model rows. Filtering, sorting and paging happen in SQL. Bad input
raises a domain exception from :mod:`cyborg.exception` and changes nothing.

Only the conductor (and ``cyborg-dbsync``) may call the writers; the API
reads through objects.
"""

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import utils as sqlalchemyutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg.db import models
from cyborg import exception
from cyborg.i18n import _
from cyborg import states

main_context_manager = enginefacade.transaction_context()


def configure(conf):
    """Point the engine facade at ``[database]`` of ``conf``."""
    main_context_manager.configure(**dict(conf.database.items()))


def get_engine():
    return main_context_manager.writer.get_engine()


# Per noun: the model and the exception raised when a uuid is unknown.
_NOUNS = {
    'device': (models.Device, exception.DeviceNotFound),
    'deployable': (models.Deployable, exception.DeployableNotFound),
    'attribute': (models.Attribute, exception.AttributeNotFound),
    'controlpath_id': (models.ControlpathID,
                       exception.ControlpathIDNotFound),
    'attach_handle': (models.AttachHandle, exception.AttachHandleNotFound),
    'device_profile': (models.DeviceProfile,
                       exception.DeviceProfileNotFound),
    'accelerator_request': (models.AcceleratorRequest,
                            exception.AcceleratorRequestNotFound),
}

_retry_on_deadlock = oslo_db_api.wrap_db_retry(max_retries=5,
                                               retry_on_deadlock=True)


def _model(noun):
    return _NOUNS[noun][0]


def _not_found(noun, key):
    exc = _NOUNS[noun][1]
    return exc(uuid=key, name=key)


def _filtered(query, model, filters):
    """Exact-match filters; a list or tuple value matches any member."""
    for key, value in (filters or {}).items():
        column = getattr(model, key, None)
        if column is None or key not in model.__table__.columns:
            raise exception.InvalidParameterValue(
                name=key, reason=_('not a filterable field'))
        if isinstance(value, (list, tuple, set, frozenset)):
            query = query.filter(column.in_(list(value)))
        else:
            query = query.filter(column == value)
    return query


def _paged(context, query, model, limit=None, marker=None, sort_key=None,
           sort_dir=None):
    sort_key = sort_key or 'id'
    if sort_key not in model.__table__.columns:
        raise exception.InvalidParameterValue(
            name='sort_key', reason=_('%s is not a sortable field')
            % sort_key)
    sort_keys = [sort_key] if sort_key == 'id' else [sort_key, 'id']
    marker_row = None
    if marker is not None:
        marker_row = context.session.query(model).filter_by(
            uuid=marker).first()
        if marker_row is None:
            raise exception.InvalidParameterValue(
                name='marker', reason=_('%s was not found') % marker)
    try:
        return sqlalchemyutils.paginate_query(
            query, model, limit, sort_keys, marker=marker_row,
            sort_dir=sort_dir or 'asc')
    except db_exc.InvalidSortKey as e:
        raise exception.InvalidParameterValue(name='sort_key',
                                              reason=str(e))


# --- generic access by noun ------------------------------------------------

@main_context_manager.writer
def create(context, noun, values):
    """Insert a row of ``noun``; a uuid is generated when absent."""
    values = dict(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    row = _model(noun)(**values)
    try:
        context.session.add(row)
        context.session.flush()
    except db_exc.DBDuplicateEntry as e:
        field = (e.columns or ['uuid'])[-1]
        raise exception.DuplicateEntry(kind=noun, field=field,
                                       value=values.get(field))
    except db_exc.DBReferenceError as e:
        raise exception.InvalidParameterValue(
            name=e.key or noun, reason=_('refers to a missing row'))
    return row


@main_context_manager.reader
def get(context, noun, uuid):
    row = context.session.query(_model(noun)).filter_by(uuid=uuid).first()
    if row is None:
        raise _not_found(noun, uuid)
    return row


@main_context_manager.reader
def get_by_id(context, noun, row_id):
    row = context.session.query(_model(noun)).filter_by(id=row_id).first()
    if row is None:
        raise _not_found(noun, row_id)
    return row


@main_context_manager.reader
def get_all(context, noun, filters=None, limit=None, marker=None,
            sort_key=None, sort_dir=None):
    """List rows of ``noun`` with exact-match ``filters``, paged."""
    model = _model(noun)
    query = _filtered(context.session.query(model), model, filters)
    return _paged(context, query, model, limit, marker, sort_key,
                  sort_dir).all()


@main_context_manager.writer
def update(context, noun, uuid, values):
    row = get(context, noun, uuid)
    row.update(values)
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry as e:
        field = (e.columns or ['uuid'])[-1]
        raise exception.DuplicateEntry(kind=noun, field=field,
                                       value=values.get(field))
    return row


@main_context_manager.writer
def delete(context, noun, uuid):
    count = context.session.query(_model(noun)).filter_by(
        uuid=uuid).delete(synchronize_session=False)
    if not count:
        raise _not_found(noun, uuid)


# --- device profiles -------------------------------------------------------

@main_context_manager.reader
def device_profile_get_by_name(context, name):
    row = context.session.query(models.DeviceProfile).filter_by(
        name=name).first()
    if row is None:
        raise exception.DeviceProfileNotFound(name=name)
    return row


def _profile_in_use(context, profile):
    count = context.session.query(models.AcceleratorRequest).filter_by(
        device_profile_id=profile.id).count()
    if count:
        raise exception.DeviceProfileInUse(name=profile.name, count=count)


@main_context_manager.writer
def device_profiles_delete(context, uuids=(), names=()):
    """Delete profiles by uuid and by name: all of them, or none.

    :raises DeviceProfileNotFound: one of them does not exist.
    :raises DeviceProfileInUse: accelerator requests still use one.
    """
    model = models.DeviceProfile
    wanted = {('uuid', u) for u in uuids} | {('name', n) for n in names}
    rows = context.session.query(model).filter(sa.or_(
        model.uuid.in_(list(uuids)), model.name.in_(list(names)))).all()
    found = ({('uuid', r.uuid) for r in rows} |
             {('name', r.name) for r in rows})
    missing = sorted(v for k, v in wanted - found)
    if missing:
        raise exception.DeviceProfileNotFound(name=', '.join(missing))
    for row in rows:
        _profile_in_use(context, row)
    context.session.query(model).filter(
        model.id.in_([r.id for r in rows])).delete(
            synchronize_session=False)


# --- accelerator requests --------------------------------------------------

@main_context_manager.writer
def arq_create_many(context, values_list):
    """Insert several ARQs in one transaction and return them."""
    rows = []
    for values in values_list:
        values = dict(values)
        values.setdefault('uuid', uuidutils.generate_uuid())
        values.setdefault('state', states.INITIAL)
        rows.append(models.AcceleratorRequest(**values))
    context.session.add_all(rows)
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.DuplicateEntry(
            kind='accelerator_request', field='uuid',
            value=', '.join(r.uuid for r in rows))
    except db_exc.DBReferenceError:
        raise exception.DeviceProfileNotFound(
            name=', '.join(sorted({str(r.device_profile_id) for r in rows})))
    # Read them back so the profile and handle joins are loaded.
    model = models.AcceleratorRequest
    return context.session.query(model).filter(
        model.uuid.in_([r.uuid for r in rows])).order_by(model.id).all()


def _arq_state_refused(context, uuid, target):
    row = get(context, 'accelerator_request', uuid)
    raise exception.AcceleratorRequestInvalidState(
        uuid=uuid, state=row.state,
        allowed=', '.join(sorted(states.sources_of(target))))


@_retry_on_deadlock
@main_context_manager.writer
def arq_update_state(context, uuid, target, values=None, expected=None):
    """Move an ARQ to ``target`` with a conditional UPDATE.

    The UPDATE only matches while the ARQ is in a state the transition
    table allows (narrowed to ``expected`` when given), so of two
    concurrent callers exactly one wins.

    :raises AcceleratorRequestNotFound: no such ARQ.
    :raises AcceleratorRequestInvalidState: the ARQ is in another state.
    """
    return _arq_update_state(context, uuid, target, values, expected)


def _arq_update_state(context, uuid, target, values=None, expected=None):
    sources = states.sources_of(target)
    if expected is not None:
        sources = sources & frozenset(expected)
    model = models.AcceleratorRequest
    changes = dict(values or {}, state=target)
    count = context.session.query(model).filter(
        model.uuid == uuid, model.state.in_(sorted(sources))).update(
            changes, synchronize_session=False)
    if not count:
        _arq_state_refused(context, uuid, target)
    context.session.expire_all()
    return get(context, 'accelerator_request', uuid)


def _claim_handle(context, deployable_id):
    model = models.AttachHandle
    candidates = context.session.query(model.id).filter_by(
        deployable_id=deployable_id, in_use=False).order_by(model.id)
    for (handle_id,) in candidates.all():
        claimed = context.session.query(model).filter_by(
            id=handle_id, in_use=False).update(
                {'in_use': True}, synchronize_session=False)
        if claimed:
            return handle_id
    raise exception.AttachHandleUnavailable(deployable=deployable_id)


@_retry_on_deadlock
@main_context_manager.writer
def arq_bind(context, uuid, deployable_id, values=None):
    """Claim a free handle of a deployable and mark the ARQ Bound.

    Both happen in one transaction: a handle is claimed with a conditional
    UPDATE (so no two ARQs ever get the same one) and released again if the
    ARQ cannot move to Bound.

    :raises AttachHandleUnavailable: every handle of the deployable is used.
    """
    handle_id = _claim_handle(context, deployable_id)
    values = dict(values or {}, attach_handle_id=handle_id,
                  deployable_id=deployable_id)
    return _arq_update_state(context, uuid, states.BOUND, values=values,
                             expected=[states.BIND_STARTED])


def _release_handles(context, handle_ids):
    handle_ids = [h for h in handle_ids if h is not None]
    if handle_ids:
        context.session.query(models.AttachHandle).filter(
            models.AttachHandle.id.in_(handle_ids)).update(
                {'in_use': False}, synchronize_session=False)


_UNBIND_VALUES = {'hostname': None, 'device_rp_uuid': None,
                  'instance_uuid': None, 'attach_handle_id': None,
                  'deployable_id': None}


@_retry_on_deadlock
@main_context_manager.writer
def arq_unbind(context, uuid):
    """Release the ARQ's handle and forget its host, RP and instance."""
    row = get(context, 'accelerator_request', uuid)
    handle_id = row.attach_handle_id
    row = _arq_update_state(context, uuid, states.UNBOUND,
                            values=_UNBIND_VALUES, expected=[row.state])
    _release_handles(context, [handle_id])
    return row


@_retry_on_deadlock
@main_context_manager.writer
def arqs_delete(context, uuids=None, instance_uuid=None):
    """Delete ARQs by uuid (all or nothing) or by instance (idempotent).

    Their attach handles are released in the same transaction.

    :returns: the deleted rows, as they were.
    """
    model = models.AcceleratorRequest
    query = context.session.query(model)
    if uuids is not None:
        query = query.filter(model.uuid.in_(list(uuids)))
    else:
        query = query.filter(model.instance_uuid == instance_uuid)
    rows = query.all()
    if uuids is not None:
        missing = set(uuids) - {r.uuid for r in rows}
        if missing:
            raise exception.AcceleratorRequestNotFound(
                uuid=', '.join(sorted(missing)))
    ids = [r.id for r in rows]
    if not ids:
        return []
    context.session.query(model).filter(model.id.in_(ids)).update(
        {'state': states.DELETING, 'attach_handle_id': None},
        synchronize_session=False)
    _release_handles(context, [r.attach_handle_id for r in rows])
    context.session.query(model).filter(model.id.in_(ids)).delete(
        synchronize_session=False)
    return rows
