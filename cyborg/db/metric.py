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
"""What /metrics shows, in the database: cloud-wide counts and histograms.

The counts are a few aggregate queries run as /metrics is scraped
(:func:`snapshot`), so that any API shows the whole cloud. The histograms
are what conductors observe, one UPDATE per observation of the buckets of
its series (:func:`observe`; see :class:`cyborg.db.models.MetricBucket`).
"""

import collections

from oslo_db import exception as db_exc
import sqlalchemy as sa

from cyborg.db import api
from cyborg.db.api import main_context_manager
from cyborg.db import models

_BUCKET = models.MetricBucket

#: The counts of :func:`snapshot`, each a list of row tuples:
#: ``devices`` (host, type, health, quarantined, status, devices,
#: accelerators), ``handles`` (host, type, in use, handles), ``arqs``
#: (state, ARQs), ``nova_events`` (events, oldest created_at or None),
#: ``reports`` (host, reported_at).
Snapshot = collections.namedtuple(
    'Snapshot', 'devices handles arqs nova_events reports')


@main_context_manager.reader
def snapshot(context):
    """The cloud's counts, in one read transaction.

    An accelerator counts when its deployable has a resource provider:
    that is the capacity offered in Placement.
    """
    query = context.session.query
    device, deployable = models.Device, models.Deployable
    quarantined = device.quarantined_at.isnot(None)
    by_device = (device.hostname, device.type, device.health, quarantined,
                 device.status)
    offered = sa.case((deployable.rp_uuid.isnot(None),
                       deployable.num_accelerators), else_=0)
    devices = query(*by_device, sa.func.count(sa.distinct(device.id)),
                    sa.func.coalesce(sa.func.sum(offered), 0)).outerjoin(
        deployable, deployable.device_id == device.id).group_by(
            *by_device).all()
    handle = models.AttachHandle
    handles = query(device.hostname, device.type, handle.in_use,
                    sa.func.count()).select_from(handle).join(
        deployable, handle.deployable_id == deployable.id).join(
            device, deployable.device_id == device.id).group_by(
                device.hostname, device.type, handle.in_use).all()
    arq = models.AcceleratorRequest
    arqs = query(arq.state, sa.func.count()).group_by(arq.state).all()
    event = models.NovaEvent
    nova_events = query(sa.func.count(), sa.func.min(event.created_at)).one()
    host = models.Host
    reports = query(host.hostname, host.reported_at).filter(
        host.reported_at.isnot(None)).all()
    return Snapshot([tuple(r) for r in devices],
                    [tuple(r) for r in handles], [tuple(r) for r in arqs],
                    tuple(nova_events), [tuple(r) for r in reports])


@main_context_manager.reader
def buckets(context):
    """Every histogram bucket: (name, labels, bucket, observed, sum)."""
    return [tuple(row) for row in context.session.query(
        _BUCKET.name, _BUCKET.labels, _BUCKET.bucket, _BUCKET.observed,
        _BUCKET.value_sum).order_by(_BUCKET.name, _BUCKET.labels,
                                    _BUCKET.bucket)]


def observe(context, name, labels, bucket, count, value):
    """Add one observation of ``value`` to a series of a histogram.

    :param labels: the series' labels, as ``MetricBucket.labels`` holds
        them.
    :param bucket: the index of the first bucket whose bound is not
        below ``value``; it and every later one count the observation.
    :param count: how many buckets the histogram has, ``+Inf`` included:
        a new series gets them all.
    """
    if _add(context, name, labels, bucket, value):
        return
    try:
        _insert(context, name, labels, count)
    except db_exc.DBDuplicateEntry:
        pass  # Another conductor made them first.
    _add(context, name, labels, bucket, value)


@api.retry_on_deadlock
@main_context_manager.writer
def _add(context, name, labels, bucket, value):
    return context.session.query(_BUCKET).filter(
        _BUCKET.name == name, _BUCKET.labels == labels,
        _BUCKET.bucket >= bucket).update(
            {'observed': _BUCKET.observed + 1,
             'value_sum': _BUCKET.value_sum + value},
            synchronize_session=False)


@api.retry_on_deadlock
@main_context_manager.writer
def _insert(context, name, labels, count):
    context.session.add_all(
        _BUCKET(name=name, labels=labels, bucket=index, observed=0,
                value_sum=0.0)
        for index in range(count))
