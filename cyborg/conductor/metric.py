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
"""What conductors record for /metrics: bind and Placement sync durations.

Only with ``[metrics] enabled``; otherwise nothing is written. The
histograms live in the database (:mod:`cyborg.objects.metric`), so that
the observations of every conductor show in one scrape of any API. A
metric that cannot be written is logged and lost: it never fails the
bind or the sync it measures.
"""

import contextlib
import time

from oslo_db import exception as db_exc
from oslo_log import log

import cyborg.conf
from cyborg.objects import metric as metric_obj

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


def _observe(context, histogram, value, **labels):
    if not CONF.metrics.enabled:
        return
    try:
        metric_obj.observe(context, histogram, value, **labels)
    except db_exc.DBError as e:
        LOG.warning('Metric %(name)s not recorded: %(error)s',
                    {'name': histogram.name, 'error': e})


def bind_resolved(context, arq, seconds):
    """Count a bind that ended ``seconds`` after it started.

    :param arq: the ARQ, Bound or BindFailed.
    """
    _observe(context, metric_obj.BIND, seconds,
             **{metric_obj.RESULT: arq.state})


class _Sync:
    failed = False


@contextlib.contextmanager
def placement_sync(context):
    """Time the ``with`` block as a Placement sync of one host.

    It failed when the block raises, or sets ``failed`` on what the
    ``with`` statement gives it.
    """
    sync = _Sync()
    started = time.monotonic()
    try:
        yield sync
    except Exception:
        sync.failed = True
        raise
    finally:
        _observe(context, metric_obj.PLACEMENT_SYNC,
                 time.monotonic() - started,
                 **{metric_obj.RESULT: metric_obj.FAILED if sync.failed
                    else metric_obj.SYNCED})
