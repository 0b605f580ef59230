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
"""Benchmark of the ARQ bind cycle as Nova drives it.

    PYTHONPATH=. tools/bench/bind_bench.py [--cycles 200] [--concurrency 1]
        [--wait event|poll] [--arqs-present N] [--database URL]
    PYTHONPATH=. tools/bench/bind_bench.py --url http://127.0.0.1:6666
        [--nova-port 8774] [--hostname NAME] ...

One cycle is what Nova does for one instance with one accelerator:
create its ARQ (``POST /v2/accelerator_requests``), bind it (``PATCH``
with host, resource provider and instance), wait until it is resolved,
unbind it (``PATCH`` removing them) and delete it (``DELETE ?arqs=``).
Waiting is, as Nova does it, for the ``accelerator-request-bound``
event, then ``GET ?instance=&bind_state=resolved`` (``--wait event``);
or polling that GET until it stops answering 423 (``--wait poll``).
``--concurrency`` clients run cycles side by side, each on its own
connection. It prints cycles per second, errors, and p50, p99 and max
in ms of each step.

Without ``--url`` it serves the real API (cheroot, noauth) with a
conductor on ``fake://`` binding in its thread pool, on a SQLite file
(or ``--database``), and a Nova event receiver; a deployable with a PCI
handle per client stands for the host. With ``--url`` it runs the cycle
against a running Cyborg, such as ``tools/quickstart.sh start
--no-demo`` (with or without ``--rabbit``): it creates the profile
``bench-fake`` for the fake driver's device and binds to that device's
provider on its host. ``--nova-port`` receives Nova's events there (the
quickstart's ``--nova-port``, 8774 by default), as Nova would; without
it nobody takes them, so only ``--wait poll`` works.
``--arqs-present`` first creates that many ARQs that stay unbound, to
measure binding beside them. In process it also prints what a cycle
costs the database: transactions, commits and SQL statements of all
threads (API and conductor), per cycle.
"""

import argparse
import http.client
import json
import os
import statistics
import sys
import threading
import time
from urllib import parse

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

from cyborg.common import process  # noqa: E402

# As the services' entry points do, before the libraries load.
process.use_native_threads()

import fixtures  # noqa: E402,I100
import futurist  # noqa: E402
from oslo_utils import uuidutils  # noqa: E402
import sqlalchemy as sa  # noqa: E402

from cyborg.common import service  # noqa: E402
from cyborg.conductor import manager  # noqa: E402
from cyborg.conductor import nova_events as event_sender  # noqa: E402
from cyborg.conductor import rpcapi  # noqa: E402
import cyborg.conf  # noqa: E402
from cyborg import context  # noqa: E402
from cyborg.db import api as db_api  # noqa: E402
from cyborg.db import models  # noqa: E402
from cyborg import objects  # noqa: E402
from cyborg.objects import base as objects_base  # noqa: E402
from cyborg.tests import db_utils  # noqa: E402
from cyborg.tests import fixtures as cyborg_fixtures  # noqa: E402
from cyborg.tests import openstack_fixtures  # noqa: E402
from cyborg_quickstart import nova_events  # noqa: E402
from cyborg_quickstart import server as demo_server  # noqa: E402

CONF = cyborg.conf.CONF
RP_UUID = '8f2a3c1e-0b7d-4e5f-9a6c-1d2e3f4a5b6c'
PROFILE = 'bench-fake'
GROUP = {'resources:FPGA': '1', 'trait:CUSTOM_FAKE_DEVICE': 'required'}
FAKE_VENDOR = '0xABCD'
STEPS = ('create', 'bind', 'wait', 'unbind', 'delete')


class _InProcess(fixtures.Fixture):
    """The API, a conductor with a thread pool, and Nova's receiver."""

    def __init__(self, handles, database=None):
        super().__init__()
        self.handles = handles
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
        self.nova = self.useFixture(openstack_fixtures.NovaEvents()).receiver
        sender = event_sender.Sender()
        sender.start()
        self.addCleanup(sender.stop)
        CONF.set_override('require_service_token', False, group='api')
        app = self.useFixture(cyborg_fixtures.API()).app
        server = demo_server.LoopbackServer(app, threads=8).start()
        self.addCleanup(server.stop)
        self.url = server.url
        ctx = context.get_admin_context()
        _, deployable, _ = db_utils.create_device_tree(
            ctx, hostname='host1', handles=self.handles,
            resource_class='FPGA', traits=['CUSTOM_FAKE_DEVICE'])
        db_api.update(ctx, 'deployable', deployable.uuid,
                      {'rp_uuid': RP_UUID})
        db_utils.create_profile(ctx, name=PROFILE, groups=[GROUP])
        self.hostname, self.rp_uuid = 'host1', RP_UUID
        self.sql = _SQLCounter()


class _SQLCounter:
    """Transactions, commits and statements of cyborg.db.api's engines."""

    def __init__(self):
        self.counts = dict.fromkeys(('transactions', 'commits',
                                     'statements'), 0)
        self._lock = threading.Lock()
        facade = db_api.main_context_manager
        for engine in {facade.writer.get_engine(),
                       facade.reader.get_engine()}:
            for event, key in (('begin', 'transactions'),
                               ('commit', 'commits'),
                               ('before_cursor_execute', 'statements')):
                sa.event.listen(engine, event,
                                lambda *args, key=key: self._count(key))

    def _count(self, key):
        with self._lock:
            self.counts[key] += 1

    def take(self):
        """The counts since the last call."""
        with self._lock:
            counts = dict(self.counts)
            self.counts = dict.fromkeys(counts, 0)
        return counts


class _Remote(fixtures.Fixture):
    """A running Cyborg with the fake driver's device, and Nova's receiver.

    ``nova`` is None when no port for Nova's events is given.
    """

    def __init__(self, url, nova_port=None, hostname=None):
        super().__init__()
        self.url = url.rstrip('/')
        self.nova_port = nova_port
        self.hostname = hostname

    def _setUp(self):
        self.sql = None  # counted in process only
        self.nova = None
        if self.nova_port:
            self.nova = nova_events.EventReceiver(
                port=self.nova_port).start()
            self.addCleanup(self.nova.stop)
        conn = _connect(self.url)
        status, body = _request(conn, 'GET', '/v2/device_profiles?name='
                                + PROFILE)
        if not body['device_profiles']:
            _request(conn, 'POST', '/v2/device_profiles',
                     [{'name': PROFILE, 'groups': [GROUP]}], expect=201)
        deployables = _request(conn, 'GET', '/v2/deployables')[1]
        (fake,) = [d for d in deployables['deployables']
                   if d['driver_name'] == 'fake']
        self.rp_uuid = fake['rp_uuid']
        # Deployables show their device's id, not its uuid: the fake
        # driver's device is the one of its vendor.
        (device,) = _request(conn, 'GET', '/v2/devices?vendor='
                             + FAKE_VENDOR)[1]['devices']
        self.hostname = self.hostname or device['hostname']


def _connect(url):
    return http.client.HTTPConnection(parse.urlsplit(url).netloc,
                                      timeout=60)


class StepFailed(Exception):
    pass


def _request(conn, method, path, body=None, expect=None):
    headers = {'Content-Type': 'application/json',
               'OpenStack-API-Version': 'accelerator 2.0'}
    conn.request(method, path, body=json.dumps(body) if body else None,
                 headers=headers)
    response = conn.getresponse()
    data = response.read()
    if expect is not None and response.status != expect:
        raise StepFailed('%s %s answered %d: %s' % (
            method, path, response.status, data[:200]))
    return response.status, json.loads(data) if data else None


def _ops(op, values):
    return [dict({'op': op, 'path': '/' + key},
                 **({'value': value} if op == 'add' else {}))
            for key, value in values.items()]


class _Cycles:
    """Clients running bind cycles, and what each step took."""

    def __init__(self, target, wait):
        self.target = target
        self.wait = wait
        self.times = {step: [] for step in STEPS}
        self.errors = []
        self._lock = threading.Lock()

    def _wait_resolved(self, conn, instance):
        path = ('/v2/accelerator_requests?instance=%s&bind_state=resolved'
                % instance)
        if self.wait == 'event':
            (event,) = self.target.nova.wait_for(instance, 1, 60)
            if event['status'] != 'completed':
                raise StepFailed('bind of %s failed' % instance)
            return _request(conn, 'GET', path, expect=200)[1]
        while True:
            status, body = _request(conn, 'GET', path)
            if status == 200:
                return body
            if status != 423:
                raise StepFailed('GET resolved answered %d' % status)
            time.sleep(0.005)

    def cycle(self, conn):
        instance = uuidutils.generate_uuid()
        values = {'hostname': self.target.hostname,
                  'device_rp_uuid': self.target.rp_uuid,
                  'instance_uuid': instance}
        marks = [time.perf_counter()]
        (arq,) = _request(conn, 'POST', '/v2/accelerator_requests',
                          {'device_profile_name': PROFILE},
                          expect=201)[1]['arqs']
        marks.append(time.perf_counter())
        _request(conn, 'PATCH', '/v2/accelerator_requests',
                 {arq['uuid']: _ops('add', values)}, expect=202)
        marks.append(time.perf_counter())
        (resolved,) = self._wait_resolved(conn, instance)['arqs']
        if resolved['state'] != 'Bound':
            raise StepFailed('ARQ %s is %s' % (arq['uuid'],
                                               resolved['state']))
        marks.append(time.perf_counter())
        _request(conn, 'PATCH', '/v2/accelerator_requests/' + arq['uuid'],
                 {arq['uuid']: _ops('remove', values)}, expect=202)
        marks.append(time.perf_counter())
        _request(conn, 'DELETE', '/v2/accelerator_requests?arqs='
                 + arq['uuid'], expect=204)
        marks.append(time.perf_counter())
        with self._lock:
            for step, start, end in zip(STEPS, marks, marks[1:]):
                self.times[step].append(end - start)

    def client(self, count):
        conn = _connect(self.target.url)
        for _ in range(count):
            try:
                self.cycle(conn)
            except (StepFailed, OSError, http.client.HTTPException,
                    ValueError) as e:
                with self._lock:
                    self.errors.append(str(e))
                conn.close()
                conn = _connect(self.target.url)

    def run(self, cycles, concurrency):
        """Run ``cycles`` spread over ``concurrency`` clients.

        :returns: the seconds it took.
        """
        shares = [cycles // concurrency + (i < cycles % concurrency)
                  for i in range(concurrency)]
        threads = [threading.Thread(target=self.client, args=(n,))
                   for n in shares]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.perf_counter() - start


def _create_present(target, count):
    """Create ``count`` ARQs that stay unbound, 100 per call."""
    conn = _connect(target.url)
    name = PROFILE + '-present'
    if not _request(conn, 'GET', '/v2/device_profiles?name='
                    + name)[1]['device_profiles']:
        _request(conn, 'POST', '/v2/device_profiles', [{
            'name': name, 'groups': [dict(GROUP, **{
                'resources:FPGA': '100'})]}], expect=201)
    for _ in range(count // 100):
        _request(conn, 'POST', '/v2/accelerator_requests',
                 {'device_profile_name': name}, expect=201)


def _report(cycles, seconds, sql=None):
    done = len(cycles.times['create'])
    print('cycles=%d errors=%d seconds=%.2f cycles/s=%.1f' % (
        done, len(cycles.errors), seconds, done / seconds))
    if sql and done:
        print('  per cycle: %s' % ', '.join(
            '%.1f %s' % (count / done, key) for key, count in sql.items()))
    for step in STEPS:
        ms = sorted(s * 1000 for s in cycles.times[step])
        if not ms:
            continue
        print('  %-7s p50=%7.1f p99=%7.1f max=%7.1f mean=%7.1f ms' % (
            step, ms[len(ms) // 2], ms[max(int(len(ms) * 0.99) - 1, 0)],
            ms[-1], statistics.mean(ms)))
    for error in sorted(set(cycles.errors))[:5]:
        print('  error: %s' % error)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--cycles', type=int, default=200)
    parser.add_argument('--concurrency', type=int, default=1)
    parser.add_argument('--wait', choices=('event', 'poll'),
                        default='event')
    parser.add_argument('--warmup', type=int, default=10,
                        help='cycles run first and not counted')
    parser.add_argument('--arqs-present', type=int, default=0,
                        help='ARQs to create first, in hundreds')
    parser.add_argument('--url', help="a running Cyborg's API")
    parser.add_argument('--nova-port', type=int,
                        help='with --url: receive Nova events on this port')
    parser.add_argument('--hostname', help='with --url: the host name '
                        'binds give (default: the device\'s host)')
    parser.add_argument('--database', help='SQLAlchemy URL of an empty '
                        'database to use (its tables are dropped); '
                        'default: a SQLite file')
    args = parser.parse_args()
    if args.url:
        target = _Remote(args.url, args.nova_port, args.hostname)
    else:
        objects.register_all()
        CONF([], project='cyborg', default_config_files=[])
        target = _InProcess(max(args.concurrency, 1), args.database)
    with target:
        if args.wait == 'event' and target.nova is None:
            parser.error('--wait event needs --nova-port')
        if args.arqs_present:
            _create_present(target, args.arqs_present)
        if args.warmup:
            _Cycles(target, args.wait).run(args.warmup, args.concurrency)
        cycles = _Cycles(target, args.wait)
        if target.sql:
            target.sql.take()
        seconds = cycles.run(args.cycles, args.concurrency)
        _report(cycles, seconds, target.sql and target.sql.take())


if __name__ == '__main__':
    main()
