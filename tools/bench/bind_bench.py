#!/usr/bin/env python3
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
"""Benchmark of an ARQ bind as Nova sees it: PATCH until the event.

    PYTHONPATH=. tools/bench/bind_bench.py [--binds 200] [--database URL]

It serves the real API (cheroot, noauth) with a conductor on ``fake://``
binding in its thread pool, on a SQLite file (or ``--database``), and a
Nova event receiver. One deployable offers a PCI handle per bind and the
profile asks for no bitstream, so no programming is measured. Each bind
is one instance's PATCH, then, as Nova does, a wait for its
``accelerator-request-bound`` event, which the conductor sends once the
ARQ is Bound: the time from sending the PATCH to the event's arrival is
the bind latency. It prints p50, p95, max and mean in ms, for the PATCH
alone and for PATCH to event, and checks each ARQ is Bound.
"""

import argparse
import http.client
import json
import os
import statistics
import sys
import time
from urllib import parse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

import fixtures  # noqa: E402
import futurist  # noqa: E402
from oslo_utils import uuidutils  # noqa: E402

from cyborg.common import service  # noqa: E402
from cyborg.conductor import manager  # noqa: E402
from cyborg.conductor import rpcapi  # noqa: E402
import cyborg.conf  # noqa: E402
from cyborg import context  # noqa: E402
from cyborg.db import api as db_api  # noqa: E402
from cyborg.db import models  # noqa: E402
from cyborg.demo import server as demo_server  # noqa: E402
from cyborg import objects  # noqa: E402
from cyborg.objects import base as objects_base  # noqa: E402
from cyborg.tests import db_utils  # noqa: E402
from cyborg.tests import fixtures as cyborg_fixtures  # noqa: E402

CONF = cyborg.conf.CONF
RP_UUID = '8f2a3c1e-0b7d-4e5f-9a6c-1d2e3f4a5b6c'


class _Bench(fixtures.Fixture):
    """The API, a conductor with a thread pool, and Nova's receiver."""

    def __init__(self, binds, database=None):
        super().__init__()
        self.binds = binds
        self.database = database

    def _setUp(self):
        url = self.database or 'sqlite:///' + os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'bench.sqlite')
        CONF.set_override('connection', url, group='database')
        db_api.configure(CONF)
        models.BASE.metadata.drop_all(db_api.get_engine())
        models.BASE.metadata.create_all(db_api.get_engine())
        self.useFixture(cyborg_fixtures.RPC())
        conductor = service.RPCService(
            manager.ConductorManager(
                'bench', executor=futurist.ThreadPoolExecutor(16)),
            rpcapi.TOPIC, objects_base.CyborgObjectSerializer(),
            host='bench')
        conductor.start()
        self.addCleanup(conductor.stop)
        self.nova = self.useFixture(cyborg_fixtures.NovaEvents()).receiver
        CONF.set_override('require_service_token', False, group='api')
        app = self.useFixture(cyborg_fixtures.API()).app
        server = demo_server.LoopbackServer(app, threads=4).start()
        self.addCleanup(server.stop)
        self.url = server.url
        ctx = context.get_admin_context()
        _, deployable, _ = db_utils.create_device_tree(
            ctx, hostname='host1', handles=self.binds,
            resource_class='FPGA', traits=['CUSTOM_FPGA_INTEL'])
        db_api.update(ctx, 'deployable', deployable.uuid,
                      {'rp_uuid': RP_UUID})
        profile = db_utils.create_profile(ctx, name='bench')
        self.arqs = [a.uuid for a in db_utils.create_arqs(
            ctx, profile, count=self.binds)]


def _request(conn, method, path, body=None):
    headers = {'Content-Type': 'application/json',
               'OpenStack-API-Version': 'accelerator 2.0'}
    conn.request(method, path, body=json.dumps(body) if body else None,
                 headers=headers)
    response = conn.getresponse()
    data = response.read()
    return response.status, json.loads(data) if data else None


def _bind(conn, nova, arq, instance):
    """Bind one ARQ as Nova does: PATCH, then wait for the bound event.

    :returns: seconds to the PATCH's answer and to the event's arrival.
    """
    patch = {arq: [
        {'op': 'add', 'path': '/hostname', 'value': 'host1'},
        {'op': 'add', 'path': '/device_rp_uuid', 'value': RP_UUID},
        {'op': 'add', 'path': '/instance_uuid', 'value': instance}]}
    start = time.perf_counter()
    status, _ = _request(conn, 'PATCH', '/v2/accelerator_requests', patch)
    patched = time.perf_counter()
    if status != 202:
        raise SystemExit('PATCH answered %d' % status)
    (event,) = nova.wait_for(instance, 1, 30)
    bound = time.perf_counter()
    if event['status'] != 'completed':
        raise SystemExit('ARQ %s failed to bind' % arq)
    status, body = _request(conn, 'GET', '/v2/accelerator_requests/' + arq)
    if body['state'] != 'Bound':
        raise SystemExit('ARQ %s is %s' % (arq, body['state']))
    return patched - start, bound - start


def _report(name, seconds):
    ms = sorted(s * 1000 for s in seconds)
    print('%-16s n=%d p50=%.1f p95=%.1f max=%.1f mean=%.1f ms' % (
        name, len(ms), ms[len(ms) // 2], ms[int(len(ms) * 0.95) - 1],
        ms[-1], statistics.mean(ms)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--binds', type=int, default=200)
    parser.add_argument('--database', help='SQLAlchemy URL of an empty '
                        'database to use (its tables are dropped); '
                        'default: a SQLite file')
    args = parser.parse_args()
    objects.register_all()
    CONF([], project='cyborg', default_config_files=[])
    with _Bench(args.binds, args.database) as bench:
        conn = http.client.HTTPConnection(
            parse.urlsplit(bench.url).netloc)
        patch_times, bound_times = [], []
        for arq in bench.arqs:
            patched, bound = _bind(conn, bench.nova, arq,
                                   uuidutils.generate_uuid())
            patch_times.append(patched)
            bound_times.append(bound)
        _report('PATCH', patch_times)
        _report('PATCH to event', bound_times)


if __name__ == '__main__':
    main()
