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
"""The histograms conductors observe for /metrics, and what it reads.

No versioned object: nothing here crosses RPC. Conductors observe
(:func:`observe`); the API's collector reads the histograms
(:func:`histograms`) and the cloud's counts (:func:`snapshot`).
"""

import bisect
import collections
import dataclasses

from cyborg.db import metric as metric_db


@dataclasses.dataclass(frozen=True)
class Histogram:
    """A histogram: its name, help, label names and bucket bounds.

    The bounds of a histogram never change: its rows number its buckets.
    A histogram that needs others takes another name.
    """

    name: str
    documentation: str
    labels: tuple
    bounds: tuple


#: The result label of both histograms: Bound or BindFailed for binds.
RESULT = 'result'
SYNCED, FAILED = 'synced', 'failed'

BIND = Histogram(
    'cyborg_arq_bind_duration_seconds',
    'Seconds from the start of an accelerator request bind (the PATCH '
    'accepted, the ARQ BindStarted) to its end (Bound or BindFailed), '
    'as the conductor that ends it commits the state.',
    (RESULT,),
    (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0))

PLACEMENT_SYNC = Histogram(
    'cyborg_placement_sync_duration_seconds',
    'Seconds a Placement sync of one host took, under its inventory '
    'lease; result "failed" when Placement could not be reached or '
    'refused a change of one of its providers.',
    (RESULT,),
    (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0))

HISTOGRAMS = (BIND, PLACEMENT_SYNC)


def _encode(histogram, labels):
    return ','.join('%s=%s' % (name, labels[name])
                    for name in histogram.labels)


def _decode(text):
    return dict(pair.split('=', 1) for pair in text.split(',')) if text \
        else {}


def observe(context, histogram, value, **labels):
    """Count ``value`` in the histogram's series of ``labels``."""
    metric_db.observe(context, histogram.name, _encode(histogram, labels),
                      bisect.bisect_left(histogram.bounds, value),
                      len(histogram.bounds) + 1, value)


def histograms(context):
    """Every series observed, for Prometheus.

    :returns: [(histogram, labels, [(bound as text, cumulative count)],
        sum)], the last bound ``+Inf``, whose bucket holds the sum.
    """
    by_name = {h.name: h for h in HISTOGRAMS}
    rows = collections.defaultdict(list)
    for name, labels, bucket, observed, total in metric_db.buckets(context):
        rows[name, labels].append((bucket, observed, total))
    series = []
    for (name, labels), buckets in rows.items():
        histogram = by_name.get(name)
        if histogram is None or len(buckets) != len(histogram.bounds) + 1:
            continue  # A histogram this release no longer has.
        bounds = [repr(b) for b in histogram.bounds] + ['+Inf']
        series.append((histogram, _decode(labels),
                       [(bounds[bucket], observed)
                        for bucket, observed, _sum in buckets],
                       buckets[-1][2]))
    return series


def snapshot(context):
    """The cloud's counts; see :func:`cyborg.db.metric.snapshot`."""
    return metric_db.snapshot(context)
