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
"""Options of the [metrics] group: the Prometheus endpoint."""

from oslo_config import cfg

metrics_group = cfg.OptGroup(
    'metrics',
    title='Metrics options',
    help='Whether cyborg-api serves Prometheus metrics at /metrics, and '
         'whether conductors record the durations it shows.')

metrics_opts = [
    cfg.BoolOpt(
        'enabled',
        default=False,
        help="""
Serve Prometheus metrics at ``/metrics`` and record what they need.

Set it alike on every cyborg-api and cyborg-conductor of the cloud. An API
then answers ``GET /metrics`` in the Prometheus text format: devices,
capacity, accelerator requests, Nova's pending events and the age of each
host's last report, read from the database as it is scraped, so that any
API shows the whole cloud. Conductors record how long each bind and each
Placement sync took, with one UPDATE of the ``metric_buckets`` table per
bind or sync; while disabled they write nothing. A request for
``/metrics`` must carry a token that the ``cyborg:metrics:get`` policy
allows (administrators by default). While disabled, ``/metrics`` is not
found (404).
"""),
]


def register_opts(conf):
    conf.register_group(metrics_group)
    conf.register_opts(metrics_opts, group=metrics_group)


def list_opts():
    return {metrics_group: metrics_opts}
