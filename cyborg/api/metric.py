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
"""``/metrics``: the whole cloud's Prometheus metrics, while enabled.

Served with ``[metrics] enabled`` after authentication, to callers that
``cyborg:metrics:get`` allows. Every value is read from the database as
it is scraped, by a few aggregate queries: devices, capacity and attach
handles by host and type, accelerator requests by state, Nova's pending
events and how long since each host last reported; and the histograms
that conductors observe (:mod:`cyborg.objects.metric`). So one scrape of
any API shows the whole cloud, whichever conductor did the work.
doc/source/admin/metrics.rst describes each metric.
"""

from oslo_utils import timeutils
import prometheus_client
from prometheus_client import core
from webob import exc as webob_exc

from cyborg.api import errors
from cyborg import context
from cyborg.i18n import _
from cyborg.objects import metric as metric_obj
from cyborg.policies import metric as metric_rules
from cyborg import policy
from cyborg import states

PATH = '/metrics'

_DEVICE_LABELS = ['host', 'type', 'health', 'quarantined', 'status']


def _flag(value):
    return 'true' if value else 'false'


def _devices(rows):
    devices = core.GaugeMetricFamily(
        'cyborg_devices', 'Devices recorded, by host, type, reported '
        'health (unknown until the agent reports it), quarantine and '
        'status (enabled or maintaining).', labels=_DEVICE_LABELS)
    capacity = core.GaugeMetricFamily(
        'cyborg_accelerators', 'Accelerators offered in Placement by the '
        'devices\' deployables (the inventory totals), by the labels of '
        'cyborg_devices.', labels=_DEVICE_LABELS)
    for host, kind, health, quarantined, status, count, total in rows:
        labels = [host, kind, health or 'unknown', _flag(quarantined),
                  status]
        devices.add_metric(labels, count)
        capacity.add_metric(labels, total)
    return devices, capacity


def _handles(rows):
    handles = core.GaugeMetricFamily(
        'cyborg_attach_handles', 'Attach handles (PCI functions and '
        'mediated devices), by host, device type and state: in_use when an '
        'accelerator request holds it, free otherwise.',
        labels=['host', 'type', 'state'])
    for host, kind, in_use, count in rows:
        handles.add_metric([host, kind, 'in_use' if in_use else 'free'],
                           count)
    return handles


def _arqs(rows):
    arqs = core.GaugeMetricFamily(
        'cyborg_accelerator_requests', 'Accelerator requests, by state '
        '(every state shown, 0 when none is in it).', labels=['state'])
    counts = dict.fromkeys(states.ALL_STATES, 0)
    counts.update(rows)
    for state, count in counts.items():
        arqs.add_metric([state], count)
    return arqs


def _age(now, then):
    return max((now - then).total_seconds(), 0.0)


def _nova_events(now, count, oldest):
    return (
        core.GaugeMetricFamily(
            'cyborg_nova_events_pending', 'Accelerator-request-bound '
            'events that Nova is still to receive.', value=count),
        core.GaugeMetricFamily(
            'cyborg_nova_events_oldest_age_seconds', 'Seconds since the '
            'oldest event Nova is still to receive was recorded; 0 when '
            'none is pending.',
            value=0.0 if oldest is None else _age(now, oldest)))


def _reports(now, rows):
    ages = core.GaugeMetricFamily(
        'cyborg_host_report_age_seconds', 'Seconds since a report of the '
        'host\'s agent was last applied.', labels=['host'])
    for host, reported_at in rows:
        ages.add_metric([host], _age(now, reported_at))
    return ages


def _histograms(series):
    families = {h.name: core.HistogramMetricFamily(
        h.name, h.documentation, labels=list(h.labels))
        for h in metric_obj.HISTOGRAMS}
    for histogram, labels, buckets, total in series:
        families[histogram.name].add_metric(
            [labels.get(name, '') for name in histogram.labels], buckets,
            total)
    return families.values()


class _Collector:
    """prometheus_client's custom collector of the cloud's metrics."""

    def collect(self):
        ctx = context.get_admin_context()
        snapshot = metric_obj.snapshot(ctx)
        # The database keeps UTC without a zone, as utcnow() gives it.
        now = timeutils.utcnow()
        yield from _devices(snapshot.devices)
        yield _handles(snapshot.handles)
        yield _arqs(snapshot.arqs)
        yield from _nova_events(now, *snapshot.nova_events)
        yield _reports(now, snapshot.reports)
        yield from _histograms(metric_obj.histograms(ctx))


def _scrape(environ, registry):
    if environ.get('REQUEST_METHOD') not in ('GET', 'HEAD'):
        raise webob_exc.HTTPMethodNotAllowed(
            _('/metrics answers GET only.'), allow=['GET', 'HEAD'])
    policy.refresh()
    policy.authorize(context.RequestContext.from_environ(environ),
                     metric_rules.GET, {})
    return prometheus_client.generate_latest(registry)


def authenticated(app, conf):
    """Answer ``/metrics`` after authentication, if enabled."""
    if not conf.metrics.enabled:
        return app
    registry = prometheus_client.CollectorRegistry(auto_describe=False)
    registry.register(_Collector())

    def route(environ, start_response):
        if environ.get('PATH_INFO') != PATH:
            return app(environ, start_response)
        try:
            body = _scrape(environ, registry)
        except Exception as e:
            return errors.response_for(e)(environ, start_response)
        start_response('200 OK', [
            ('Content-Type', prometheus_client.CONTENT_TYPE_LATEST),
            ('Content-Length', str(len(body)))])
        return [b''] if environ['REQUEST_METHOD'] == 'HEAD' else [body]
    return route
