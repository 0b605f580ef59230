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
"""FPGA regions being programmed: no bind meanwhile, one programming at once.

Loading a bitstream changes what every accelerator of the region does:
those of the deployables below it (its functions) too. So :func:`start`
marks the region and every deployable below it (``programming_since``) in
the transaction that found none of their attach handles in use, and
:func:`cyborg.db.attach_handle.claim` refuses a handle of a marked
deployable. Both lock the root of the deployable tree first (:func:`lock`):
of a claim and a start racing on one tree, the second waits for the
first and then sees what it wrote, on every engine. The decisive reads
are locking reads, which see the latest committed rows even where the
transaction's snapshot is older (MySQL's repeatable read).

The traits that say what the region holds (its function and region type,
:func:`cyborg.common.placement_names.names_loaded`) are untrue from then
on: :func:`start` deletes them with the mark, and its host's report after
programming brings them back. :func:`finish` clears the mark once the
agent answered; :func:`expire` clears those a conductor left behind.
"""

import collections

from oslo_utils import timeutils
import sqlalchemy as sa
from sqlalchemy import orm

from cyborg.common import attributes
from cyborg.common import placement_names
from cyborg.db import api
from cyborg.db.api import main_context_manager
from cyborg.db import models
from cyborg import exception
from cyborg.i18n import _

_DEPLOYABLE = models.Deployable


def lock(session, deployable_id):
    """Lock the root of the deployable's tree until the transaction ends.

    One statement: the root is found by a subquery, which a locking read
    does not lock (MySQL and PostgreSQL lock the outer query's rows only),
    so the root's row alone is locked, as a programming locks it.

    :returns: the root's id and its mark, as the lock found it; None and
        None when the deployable does not exist.
    """
    tree = orm.aliased(_DEPLOYABLE)
    root_id = sa.select(sa.func.coalesce(tree.root_id, tree.id)).where(
        tree.id == deployable_id).scalar_subquery()
    root = session.query(_DEPLOYABLE.id, _DEPLOYABLE.programming_since).filter(
        _DEPLOYABLE.id == root_id).with_for_update().first()
    return (None, None) if root is None else tuple(root)


def _refusal(session, deployable_id, since):
    name, uuid = session.query(_DEPLOYABLE.name, _DEPLOYABLE.uuid).filter(
        _DEPLOYABLE.id == deployable_id).one()
    return exception.DeployableProgramming(name=name, uuid=uuid,
                                           since=since.isoformat())


def check_free(session, deployable_id):
    """Lock the deployable's tree and refuse it if it is being programmed.

    :raises DeployableProgramming: it, or a region above it, is being
        programmed.
    """
    root_id, since = lock(session, deployable_id)
    if root_id is not None and root_id != deployable_id:
        # A locking read: the mark as committed, whatever the snapshot.
        since = session.query(_DEPLOYABLE.programming_since).filter(
            _DEPLOYABLE.id == deployable_id).with_for_update(
                read=True).scalar()
    if since is not None:
        raise _refusal(session, deployable_id, since)


def _subtree(session, deployable_id, root_id, locking=False):
    """The deployable and every deployable below it: {id: programming_since}.

    :param locking: a locking read, which sees the marks committed before
        :func:`lock` returned, whatever the transaction's snapshot.
    """
    children, marks = collections.defaultdict(list), {}
    query = session.query(
        _DEPLOYABLE.id, _DEPLOYABLE.parent_id,
        _DEPLOYABLE.programming_since).filter(sa.or_(
            _DEPLOYABLE.id == root_id, _DEPLOYABLE.root_id == root_id))
    if locking:
        query = query.with_for_update(read=True)
    for row_id, parent_id, since in query.order_by(_DEPLOYABLE.id):
        children[parent_id].append(row_id)
        marks[row_id] = since
    tree, pending = {}, [deployable_id]
    while pending:
        row_id = pending.pop()
        tree[row_id] = marks.get(row_id)
        pending.extend(children.get(row_id, ()))
    return tree


def _in_use(session, ids, keep):
    handle = models.AttachHandle
    query = session.query(handle.id).filter(
        handle.deployable_id.in_(ids), handle.in_use.is_(True))
    if keep is not None:
        query = query.filter(handle.id != keep)
    return len(query.with_for_update(read=True).all())


def _holds(session, keep, tree):
    """Whether ``keep`` is a handle of the tree in use: the mark is its own.

    Only the bind holding a handle of a tree can have marked it while the
    handle was in use, and no handle of a marked tree is claimed: the bind
    is resumed (its conductor died while the agent programmed), and takes
    the programming over.
    """
    handle = models.AttachHandle
    return keep is not None and session.query(handle.id).filter(
        handle.id == keep, handle.deployable_id.in_(list(tree)),
        handle.in_use.is_(True)).with_for_update(read=True).first() is not None


def _strip_loaded_traits(session, ids):
    """Delete the attributes of traits saying what the region holds."""
    attribute = models.Attribute
    doomed = [row.id for row in session.query(
        attribute.id, attribute.key, attribute.value).filter(
            attribute.deployable_id.in_(ids))
        if attributes.is_trait_key(row.key) and
        placement_names.names_loaded(row.value)]
    if doomed:
        session.query(attribute).filter(attribute.id.in_(doomed)).delete(
            synchronize_session=False)
    return len(doomed)


@api.retry_on_deadlock
@main_context_manager.writer
def start(context, deployable_id, keep=None):
    """Mark a region being programmed, if nothing stands in the way.

    In one transaction: no attach handle of the region or of a deployable
    below it is in use, but ``keep``; none of them is being programmed
    already, but by the bind holding ``keep`` (resumed, see
    :func:`_holds`); then all of them are marked and lose their traits
    that say what the region holds, and the region its ``bitstream_id``:
    until the agent answers, what it holds is unknown.

    :param keep: the id of the attach handle that the bind programming
        the region claimed, or None.
    :returns: the ids of the marked deployables.
    :raises DeployableNotFound: no such deployable.
    :raises ObjectInUse: an attach handle of them is in use.
    :raises DeployableProgramming: one of them is being programmed.
    """
    session = context.session
    root_id, _since = lock(session, deployable_id)
    if root_id is None:
        raise exception.DeployableNotFound(uuid=deployable_id)
    tree = _subtree(session, deployable_id, root_id, locking=True)
    busy = sorted((since, row_id) for row_id, since in tree.items()
                  if since is not None)
    if busy and not _holds(session, keep, tree):
        raise _refusal(session, busy[0][1], busy[0][0])
    ids = sorted(tree)
    count = _in_use(session, ids, keep)
    if count:
        name, uuid = session.query(_DEPLOYABLE.name, _DEPLOYABLE.uuid).filter(
            _DEPLOYABLE.id == deployable_id).one()
        raise exception.ObjectInUse(
            kind=_('Deployable'), uuid=uuid,
            reason=_('programming %(name)s would disturb %(count)d '
                     'accelerator(s) attached to it or to its functions')
            % {'name': name, 'count': count})
    session.query(_DEPLOYABLE).filter(_DEPLOYABLE.id.in_(ids)).update(
        {'programming_since': timeutils.utcnow()},
        synchronize_session=False)
    session.query(_DEPLOYABLE).filter(_DEPLOYABLE.id == deployable_id).update(
        {'bitstream_id': None}, synchronize_session=False)
    _strip_loaded_traits(session, ids)
    return ids


@api.retry_on_deadlock
@main_context_manager.writer
def finish(context, deployable_id, bitstream_id=None):
    """Clear the mark of a region and of the deployables below it now.

    :param bitstream_id: what the agent loaded, recorded on the region at
        once; None leaves its ``bitstream_id`` as it is.
    """
    session = context.session
    root_id = session.query(sa.func.coalesce(
        _DEPLOYABLE.root_id, _DEPLOYABLE.id)).filter(
            _DEPLOYABLE.id == deployable_id).scalar()
    if root_id is None:
        return
    if bitstream_id is not None:
        session.query(_DEPLOYABLE).filter(
            _DEPLOYABLE.id == deployable_id).update(
                {'bitstream_id': bitstream_id}, synchronize_session=False)
    session.query(_DEPLOYABLE).filter(_DEPLOYABLE.id.in_(
        list(_subtree(session, deployable_id, root_id)))).update(
            {'programming_since': None}, synchronize_session=False)


@main_context_manager.reader
def being_programmed(context, deployable_ids):
    """{deployable id: since when} of those of ``deployable_ids`` marked."""
    if not deployable_ids:
        return {}
    return dict(context.session.query(
        _DEPLOYABLE.id, _DEPLOYABLE.programming_since).filter(
            _DEPLOYABLE.id.in_(list(deployable_ids)),
            _DEPLOYABLE.programming_since.isnot(None)))


@api.retry_on_deadlock
@main_context_manager.writer
def expire(context, before):
    """Clear the marks set before ``before``, which nobody will clear.

    :returns: the sorted names of the hosts of the deployables cleared.
    """
    session = context.session
    device = models.Device
    rows = session.query(_DEPLOYABLE.id, device.hostname).join(
        device, _DEPLOYABLE.device_id == device.id).filter(
            _DEPLOYABLE.programming_since < before).all()
    if not rows:
        return []
    session.query(_DEPLOYABLE).filter(
        _DEPLOYABLE.id.in_([row.id for row in rows]),
        _DEPLOYABLE.programming_since < before).update(
            {'programming_since': None}, synchronize_session=False)
    return sorted({row.hostname for row in rows})
