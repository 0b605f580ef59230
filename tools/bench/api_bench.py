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
"""Benchmark of the cyborg-api calls Nova makes on every boot.

    tools/bench/api_bench.py                      start a service and measure
    tools/bench/api_bench.py --database mysql+pymysql://root@127.0.0.1/bench \
        --transport-url rabbit://guest:guest@127.0.0.1:5672/
    tools/bench/api_bench.py --url http://127.0.0.1:6666/v2   (noauth)

Without ``--url`` it starts the API (cheroot, as ``cyborg-api`` serves it)
and an in-process conductor on ``fake://`` in a child process, on a fresh
database holding 200 device profiles and 5,000 accelerator requests (or
``--arqs``), and counts the SQL statements the API runs for each request
(a SQLAlchemy event listener) to show that no query count grows with the
rows returned.
With ``--url`` it measures a running service seeded the same way by the
caller (the profile and instance names are printed) and cannot count SQL.

It prints, per call: requests, p50, p90, p99 and mean latency in ms, and
the SQL statements per request.
"""

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from urllib import parse

PROFILES = 200
ARQS = 5000
# Instances whose accelerator requests are bound, by how many they have:
# list-by-instance must cost the same number of queries for each.
BOUND_SIZES = (1, 4, 16)
SQL_HEADER = 'X-Bench-SQL-Statements'


def _instance(index):
    return '00000000-0000-4000-8000-%012d' % index


def _seed(ctx, total):
    """200 profiles; ``total`` ARQs, some instances' bound to handles."""
    from cyborg.db import api as db_api
    from cyborg.tests import db_utils

    @db_api.main_context_manager.writer
    def _insert(context, rows):
        for values in rows:
            db_api.create(context, 'accelerator_request', values)

    profiles = [db_utils.create_profile(ctx, name='profile-%03d' % i)
                for i in range(PROFILES)]
    rp_uuid = 'aaaaaaaa-0000-4000-8000-000000000001'
    _device, deployable, handles = db_utils.create_device_tree(
        ctx, hostname='bench-host', handles=sum(BOUND_SIZES))
    db_api.update(ctx, 'deployable', deployable.uuid, {'rp_uuid': rp_uuid})
    bound = 0
    for index, size in enumerate(BOUND_SIZES):
        db_utils.create_arqs(
            ctx, profiles[0], count=size, state='Bound',
            hostname='bench-host', device_rp_uuid=rp_uuid,
            instance_uuid=_instance(index), deployable_id=deployable.id)
        bound += size
    # Give the bound ARQs their handles.
    arqs = db_api.get_all(ctx, 'accelerator_request',
                          filters={'state': 'Bound'})
    for arq, handle in zip(arqs, handles):
        db_api.update(ctx, 'accelerator_request', arq.uuid,
                      {'attach_handle_id': handle.id})
    # The rest: four per instance, like small VMs, not yet bound.
    rest = total - bound
    for start in range(0, rest, 500):
        _insert(ctx, [
            {'device_profile_id': profiles[i % PROFILES].id,
             'device_profile_group_id': 0,
             'device_profile_group': profiles[i % PROFILES].groups[0],
             'project_id': 'bench', 'state': 'Initial',
             'instance_uuid': _instance(1000 + i // 4)}
            for i in range(start, min(start + 500, rest))])


class _SQLCounter:
    """Counts the statements each request thread runs."""

    def __init__(self, engines, app):
        from sqlalchemy import event

        self.app = app
        self.local = threading.local()
        for engine in engines:
            event.listen(engine, 'before_cursor_execute', self._count)

    def _count(self, *args):
        self.local.count = getattr(self.local, 'count', 0) + 1

    def __call__(self, environ, start_response):
        self.local.count = 0

        def start(status, headers, exc_info=None):
            headers.append((SQL_HEADER, str(self.local.count)))
            return start_response(status, headers, exc_info)
        body = b''.join(self.app(environ, start))
        return [body]


def _serve(database, transport_url, ready, arqs):
    """Child process: database, conductor and API; sends the port."""
    from cyborg.common import process
    process.use_native_threads()  # as the services' entry points do

    import futurist
    from sqlalchemy import event  # noqa: F401 (loads the listener API)

    from cyborg.api import app
    from cyborg.cmd import api as api_cmd
    from cyborg.common import rpc
    from cyborg.common import service
    from cyborg.conductor import manager
    from cyborg.conductor import rpcapi
    import cyborg.conf
    from cyborg import context
    from cyborg.db import api as db_api
    from cyborg.db import models
    from cyborg import objects
    from cyborg.objects import base as objects_base

    conf = cyborg.conf.CONF
    conf([], project='cyborg', default_config_files=[])
    conf.set_override('connection', database, group='database')
    conf.set_override('auth_strategy', 'noauth', group='api')
    conf.set_override('host_ip', '127.0.0.1', group='api')
    conf.set_override('port', 0, group='api')
    db_api.configure(conf)
    objects.register_all()
    engine = db_api.get_engine()
    models.BASE.metadata.drop_all(engine)
    models.BASE.metadata.create_all(engine)
    _seed(context.get_admin_context(), arqs)

    rpc.init(conf, url=transport_url)
    conductor = service.RPCService(
        manager.ConductorManager('bench',
                                 executor=futurist.SynchronousExecutor()),
        rpcapi.TOPIC, objects_base.CyborgObjectSerializer(), host='bench')
    conductor.start()
    # Read-only transactions have an engine of their own on SQLite files.
    engines = {engine, db_api.main_context_manager.reader.get_engine()}
    server = api_cmd.make_server(conf, _SQLCounter(engines,
                                                   app.setup_app()))
    server.prepare()
    ready.send(server.bind_addr[1])
    server.serve()


class Client:
    """One kept-alive HTTP connection to the API."""

    def __init__(self, url):
        parts = parse.urlsplit(url)
        self.prefix = parts.path.rstrip('/')
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port,
                                               timeout=30)
        self.headers = {'Accept': 'application/json',
                        'Content-Type': 'application/json',
                        'X-Service-Roles': 'service'}

    def call(self, method, path, body=None, expect=200):
        data = json.dumps(body) if body is not None else None
        start = time.perf_counter()
        self.conn.request(method, self.prefix + path, body=data,
                          headers=self.headers)
        response = self.conn.getresponse()
        payload = response.read()
        elapsed = (time.perf_counter() - start) * 1000
        if response.status != expect:
            raise SystemExit('%s %s: %d %s' % (method, path, response.status,
                                               payload[:300]))
        sql = response.getheader(SQL_HEADER)
        return elapsed, int(sql) if sql is not None else None, payload


def _measure(client, name, count, method, path, body=None, expect=200,
             check=None):
    timings, statements = [], set()
    for index in range(count + 5):
        elapsed, sql, payload = client.call(method, path, body, expect)
        if index < 5:
            continue  # warm-up
        timings.append(elapsed)
        statements.add(sql)
        if check is not None:
            check(json.loads(payload))
    cuts = statistics.quantiles(timings, n=100)
    sql = ('n/a' if statements == {None} else
           '/'.join(str(s) for s in sorted(statements)))
    figures = {'p50': cuts[49], 'p90': cuts[89], 'p99': cuts[98],
               'mean': statistics.fmean(timings)}
    print('%-44s %6d %8.2f %8.2f %8.2f %8.2f %8s' % (
        name, count, figures['p50'], figures['p90'], figures['p99'],
        figures['mean'], sql))
    return figures


def _expect_len(count):
    def check(body):
        items = next(iter(body.values()))
        if len(items) != count:
            raise SystemExit('expected %d items, got %d' % (count,
                                                            len(items)))
    return check


def _header():
    print('%-44s %6s %8s %8s %8s %8s %8s' % (
        'call', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'mean ms', 'SQL'))


def measure_instance(url, count):
    """The list of an instance's 4 ARQs: p50, p90, p99 and mean in ms."""
    _header()
    return _measure(Client(url), 'GET /accelerator_requests?instance= (4)',
                    count, 'GET', '/accelerator_requests?instance=%s' %
                    _instance(1), check=_expect_len(4))


def run(url, count):
    client = Client(url)
    _header()
    _measure(client, 'GET /device_profiles?name=<one of 200>', count, 'GET',
             '/device_profiles?name=profile-123', check=_expect_len(1))
    _measure(client, 'GET /device_profiles (all 200)', count // 4, 'GET',
             '/device_profiles', check=_expect_len(PROFILES))
    for index, size in enumerate(BOUND_SIZES):
        _measure(client, 'GET /accelerator_requests?instance= (%d)' % size,
                 count, 'GET', '/accelerator_requests?instance=%s' %
                 _instance(index), check=_expect_len(size))
    _measure(client, '  ...&bind_state=resolved (4 bound)', count, 'GET',
             '/accelerator_requests?instance=%s&bind_state=resolved' %
             _instance(1), check=_expect_len(4))
    _measure(client, 'POST /accelerator_requests (1 ARQ)', count // 2,
             'POST', '/accelerator_requests',
             {'device_profile_name': 'profile-007'}, expect=201)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', help='a running API, e.g. '
                        'http://127.0.0.1:6666/v2 (noauth)')
    parser.add_argument('--database', help='SQLAlchemy URL of an empty '
                        'database to use (default: a SQLite file)')
    parser.add_argument('--transport-url', default='fake://',
                        help='RPC transport between the API and its '
                        'conductor (default fake://, whose server polls '
                        'every 50 ms; rabbit://... measures RabbitMQ)')
    parser.add_argument('--count', type=int, default=400,
                        help='requests per call (default 400)')
    parser.add_argument('--arqs', type=int, default=ARQS,
                        help='accelerator requests in the table (default '
                        '%d)' % ARQS)
    args = parser.parse_args()
    if args.url:
        run(args.url, args.count)
        return
    with service(args.database, args.transport_url, args.arqs) as url:
        print('database: %s; RPC: %s; %d profiles, %d ARQs' % (
            (args.database or 'sqlite').split('://')[0],
            args.transport_url.split('://')[0], PROFILES, args.arqs))
        run(url, args.count)


@contextlib.contextmanager
def service(database=None, transport_url='fake://', arqs=ARQS):
    """The API of a seeded service in a child process: its URL.

    :param database: an empty database (default: a SQLite file).
    """
    with tempfile.TemporaryDirectory() as tmp:
        database = database or 'sqlite:///%s' % os.path.join(
            tmp, 'bench.sqlite')
        receive, send = multiprocessing.Pipe(duplex=False)
        child = multiprocessing.get_context('spawn').Process(
            target=_serve, args=(database, transport_url, send, arqs),
            daemon=True)
        child.start()
        try:
            if not receive.poll(600):
                raise SystemExit('the service did not start within 600s')
            yield 'http://127.0.0.1:%d/v2' % receive.recv()
        finally:
            child.terminate()
            child.join(30)


if __name__ == '__main__':
    sys.exit(main())
