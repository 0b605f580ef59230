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
"""Hosts in the database: their compute node provider and inventory lease.

A host's row is made by the first lease taken on it or by the first
record of its compute node provider; the lease is what keeps two
conductors from reconciling one host's inventory at once. Beside it, the
host's Placement syncs keep a record of each provider of its tree (see
:mod:`cyborg.conductor.placement_sync`).
"""

import datetime

from oslo_db import exception as db_exc
from oslo_utils import timeutils
import sqlalchemy as sa

from cyborg.db import api
from cyborg.db.api import main_context_manager
from cyborg.db import models
from cyborg import exception


@main_context_manager.reader
def get(context, hostname):
    row = context.session.query(models.Host).filter_by(
        hostname=hostname).first()
    if row is None:
        raise exception.HostNotFound(host=hostname)
    return row


@main_context_manager.reader
def get_all(context):
    return context.session.query(models.Host).order_by(
        models.Host.hostname).all()


@api.retry_on_deadlock
@main_context_manager.writer
def _insert(context, hostname):
    context.session.add(models.Host(hostname=hostname))


def _ensure(context, hostname):
    """Make sure the host has a row, in a transaction of its own.

    When two conductors both find no row, the INSERT of one fails with
    DBDuplicateEntry, which is what it wanted. The row is not made inside
    the caller's transaction: on MariaDB an UPDATE that finds no row locks
    the gap where it would be, so two conductors adding two hosts would
    deadlock on their INSERTs, and a deadlock there ends the transaction,
    savepoints included.
    """
    if _exists(context, hostname):
        return
    try:
        _insert(context, hostname)
    except db_exc.DBDuplicateEntry:
        pass


@main_context_manager.reader
def _exists(context, hostname):
    return context.session.query(sa.exists().where(
        models.Host.hostname == hostname)).scalar()


def _write(context, hostname, values, *criteria):
    """UPDATE the host's row where ``criteria`` hold.

    :returns: whether the row was written.
    """
    model = models.Host
    return bool(context.session.query(model).filter(
        model.hostname == hostname, *criteria).update(
            values, synchronize_session=False))


def lease_acquire(context, hostname, owner, seconds):
    """Take the inventory lease of a host for ``seconds``.

    One conditional UPDATE takes it when it is free, expired or already
    held by ``owner`` (whose lease is then extended), so of two conductors
    exactly one wins. Expiry uses this process's clock: conductors must
    keep their clocks in sync (NTP) to well under a lease.

    :returns: whether ``owner`` holds the lease now.
    """
    _ensure(context, hostname)
    return _take_lease(context, hostname, owner, seconds)


@api.retry_on_deadlock
@main_context_manager.writer
def _take_lease(context, hostname, owner, seconds):
    model = models.Host
    now = timeutils.utcnow()
    free = sa.or_(model.lease_owner.is_(None), model.lease_owner == owner,
                  model.lease_expires_at.is_(None),
                  model.lease_expires_at <= now)
    return _write(
        context, hostname,
        {'lease_owner': owner,
         'lease_expires_at': now + datetime.timedelta(seconds=seconds)},
        free)


@api.retry_on_deadlock
@main_context_manager.writer
def lease_release(context, hostname, owner):
    """Give the lease back.

    :returns: False when ``owner`` no longer held it (it expired and
        another conductor took it over).
    """
    return bool(context.session.query(models.Host).filter_by(
        hostname=hostname, lease_owner=owner).update(
            {'lease_owner': None, 'lease_expires_at': None},
            synchronize_session=False))


@api.retry_on_deadlock
@main_context_manager.writer
def set_reported(context, hostname):
    """Record that a report of the host's agent was applied now."""
    _write(context, hostname, {'reported_at': timeutils.utcnow()})


def set_compute_rp(context, hostname, rp_uuid, rp_name=None):
    """Record the uuid and name of the host's compute node provider."""
    _ensure(context, hostname)
    return _set_compute_rp(context, hostname, rp_uuid, rp_name)


@api.retry_on_deadlock
@main_context_manager.writer
def _set_compute_rp(context, hostname, rp_uuid, rp_name):
    _write(context, hostname, {'compute_rp_uuid': rp_uuid,
                               'compute_rp_name': rp_name})
    return get(context, hostname)


@main_context_manager.reader
def get_placement_providers(context, hostname):
    """The records of the providers of the host's tree, by uuid.

    Each is a dict of ``generation``, ``traits``, ``inventories`` and
    ``placed_traits`` (see :class:`cyborg.db.models.PlacementProvider`).
    """
    model = models.PlacementProvider
    return {row.uuid: {'generation': row.generation, 'traits': row.traits,
                       'inventories': row.inventories,
                       'placed_traits': row.placed_traits}
            for row in context.session.query(model).filter_by(
                hostname=hostname)}


@api.retry_on_deadlock
@main_context_manager.writer
def set_placement_providers(context, hostname, records, gone):
    """Write records of providers of the host's tree; delete others.

    :param records: {provider uuid: record}, each as
        :func:`get_placement_providers` returns them.
    :param gone: uuids of providers whose records are deleted.
    """
    model = models.PlacementProvider
    stale = set(records) | set(gone)
    if stale:
        context.session.query(model).filter(model.uuid.in_(stale)).delete(
            synchronize_session=False)
    context.session.add_all(model(uuid=rp_uuid, hostname=hostname, **record)
                            for rp_uuid, record in records.items())
