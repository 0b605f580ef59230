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
"""Time many hosts reporting at once to several conductor processes.

Starts the real Placement in this process, on its own database of the
server of ``--database`` (or ``--placement-database``), served by
``--placement-threads`` threads behind a middleware that counts its
requests by method; ``--conductors`` ``cyborg-conductor`` processes on
RabbitMQ (a virtual host of its own, made with rabbitmqctl) sharing the
database of ``--database``; and registers ``--hosts`` compute nodes as
Nova would. Then every host asks for its compute node and sends its
report, as agents starting together do (see
:mod:`cyborg.tests.load.cluster`): the report the Intel FPGA driver makes
of a simulated host with ``--fpgas`` cards of ``--vfs`` VFs each. Then
every host sends the same report again, as an agent's periodic full
report does.

It prints, for each round, the seconds until every report was answered
(a conductor answers once Placement matches the host), Placement's
requests by method and the CPU seconds the conductors spent; and fails
unless Placement holds every provider after the first round and the
second round wrote nothing to Placement. Then it states each conductor's
memory (PSS), and with ``--steady-seconds`` counts Placement's requests
per minute while nothing changes and the conductors reconcile every
host each ``--reconcile-interval`` (it fails on any write). With
``--kill-one``, every host reports again while the first conductor is
killed with ``SIGKILL`` a second into the round: the seconds until every
report was answered then include the wait for the leases the dead
conductor held (``[conductor] host_lease_seconds``).

    tools/bench/conductor_scale_bench.py [--hosts 1000] [--conductors 2]
        [--database postgresql+psycopg2://postgres@127.0.0.1/cyborg_bench]
        [--steady-seconds 120 --reconcile-interval 60] [--kill-one]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import psutil
import sqlalchemy as sa

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

from cyborg.common import process  # noqa: E402

# As the services' entry points do, before the libraries load.
process.use_native_threads()

from cyborg.common import rpc  # noqa: E402,I202
import cyborg.conf  # noqa: E402
from cyborg.db import migration  # noqa: E402
from cyborg import objects  # noqa: E402
from cyborg.tests.load import cluster  # noqa: E402
from cyborg_quickstart import placement  # noqa: E402

CONF = cyborg.conf.CONF


def rabbitmqctl(*args):
    subprocess.run(('rabbitmqctl', '-q') + args, check=True,
                   capture_output=True)


def fresh_database(url, schema=True):
    """Drop and create the database of ``url``; build Cyborg's schema."""
    url = sa.engine.make_url(url)
    # A database every server has, to connect to while dropping this one.
    server = 'postgres' if url.get_backend_name() == 'postgresql' else 'mysql'
    admin = sa.create_engine(url.set(database=server),
                             isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        conn.execute(sa.text('DROP DATABASE IF EXISTS %s' % url.database))
        conn.execute(sa.text('CREATE DATABASE %s' % url.database))
    admin.dispose()
    if schema:
        engine = sa.create_engine(url)
        migration.upgrade('head', engine=engine)
        engine.dispose()


def cpu_seconds(procs):
    """CPU seconds used so far by ``procs`` and their children."""
    total = 0.0
    for proc in procs:
        parent = psutil.Process(proc.pid)
        for p in [parent] + parent.children(recursive=True):
            times = p.cpu_times()
            total += times.user + times.system
    return total


def stop(procs):
    """Stop the conductors: SIGTERM, then SIGKILL to those still there."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
            proc.kill()
            proc.wait()


def steady(server, seconds):
    """Placement's requests per minute while nothing changes."""
    before = server.requests.snapshot()
    time.sleep(seconds)
    after = server.requests.snapshot()
    requests = {m: after[m] - before.get(m, 0) for m in after
                if after[m] != before.get(m, 0)}
    return {'seconds': seconds,
            'requests_per_minute': {m: round(n * 60 / seconds)
                                    for m, n in requests.items()},
            'writes_per_minute': round(placement.writes(requests) * 60 /
                                       seconds)}


def kill_one(template, hosts, args, procs):
    """Every host reports again; the first conductor dies meanwhile.

    :returns: the seconds until every report was answered.
    """
    killer = threading.Timer(1, procs[0].kill)
    killer.start()
    seconds = cluster.report(template, hosts, threads=args.agents,
                             resend=True)
    killer.join()
    return {'all_answered_s': round(seconds, 1),
            'host_lease_seconds': args.host_lease_seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=1000)
    parser.add_argument('--conductors', type=int, default=2)
    parser.add_argument('--fpgas', type=int, default=8)
    parser.add_argument('--vfs', type=int, default=2)
    parser.add_argument('--agents', type=int, default=64,
                        help='hosts reporting at the same moment')
    parser.add_argument('--database', default='postgresql+psycopg2://'
                        'postgres@127.0.0.1/cyborg_bench')
    parser.add_argument('--placement-database',
                        help='default: the database of --database with '
                             '_placement added to its name')
    parser.add_argument('--placement-threads', type=int, default=8)
    parser.add_argument('--rabbit', default='rabbit://guest:guest@'
                        '127.0.0.1:5672/')
    parser.add_argument('--steady-seconds', type=int, default=0,
                        help='count Placement requests this long while '
                             'nothing changes')
    parser.add_argument('--reconcile-interval', type=int, default=300,
                        help="the conductors' [conductor] "
                             'reconcile_interval')
    parser.add_argument('--host-lease-seconds', type=int, default=120)
    parser.add_argument('--kill-one', action='store_true',
                        help='kill a conductor during a last round')
    args = parser.parse_args()
    objects.register_all()
    CONF([], project='cyborg', default_config_files=[])
    tmp = tempfile.mkdtemp(prefix='cyborg-bench-')
    vhost = 'cyborg-bench-%d' % os.getpid()
    rabbitmqctl('add_vhost', vhost)
    rabbitmqctl('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*')
    rabbit = args.rabbit.rstrip('/') + '/' + vhost
    placement_db = args.placement_database or sa.engine.make_url(
        args.database).set(database=sa.engine.make_url(
            args.database).database + '_placement').render_as_string(
                hide_password=False)
    fresh_database(args.database)
    fresh_database(placement_db, schema=False)
    server = placement.PlacementServer(
        placement_db, threads=args.placement_threads).start()
    procs = []
    try:
        rp = placement.adapter(server.url, '1.39')
        hosts = ['bench-host-%04d' % i for i in range(args.hosts)]
        for host in hosts:
            rp.post('/resource_providers', json={'name': host})
        for i in range(args.conductors):
            path = cluster.write_conf(
                os.path.join(tmp, 'conductor-%d.conf' % i), {
                    'DEFAULT': {'host': 'conductor-%d' % i,
                                'transport_url': rabbit,
                                'periodic_interval': 10,
                                'periodic_fuzzy_delay': 0},
                    'database': {'connection': args.database},
                    'conductor': {
                        'workers': 1,
                        'reconcile_interval': args.reconcile_interval,
                        'host_lease_seconds': args.host_lease_seconds},
                    'placement': {'auth_type': 'admin_token',
                                  'token': placement.TOKEN,
                                  'endpoint': server.url},
                })
            with open(path + '.log', 'w') as log:
                procs.append(subprocess.Popen(
                    [os.path.join(os.path.dirname(sys.executable),
                                  'cyborg-conductor'), '--config-file',
                     path], stdout=log, stderr=subprocess.STDOUT))
        template = cluster.fpga_host_report(os.path.join(tmp, 'sysfs'),
                                            args.fpgas, args.vfs)
        per_host = sum(len(d.deployables) for d in template.devices)
        rpc.init(CONF, url=rabbit)
        cluster.conductor_ready()
        rounds = {}
        for name, resend in (('first_reports', False),
                             ('unchanged_reports', True)):
            before = server.requests.snapshot()
            cpu = cpu_seconds(procs)
            seconds = cluster.report(template, hosts, threads=args.agents,
                                     resend=resend)
            after = server.requests.snapshot()
            requests = {m: after[m] - before.get(m, 0) for m in after
                        if after[m] != before.get(m, 0)}
            rounds[name] = {
                'all_answered_s': round(seconds, 1),
                'placement_requests': requests,
                'placement_writes': placement.writes(requests),
                'conductor_cpu_s': round(cpu_seconds(procs) - cpu, 1)}
        providers = rp.get('/resource_providers', params={
            'required': 'OWNER_CYBORG'}).json()['resource_providers']
        rounds['conductor_pss_mib'] = [
            round(psutil.Process(proc.pid).memory_full_info().pss / 2 ** 20)
            for proc in procs]
        if args.steady_seconds:
            rounds['steady'] = steady(server, args.steady_seconds)
        if args.kill_one:
            rounds['conductor_killed'] = kill_one(template, hosts, args,
                                                  procs)
        print(json.dumps({
            'hosts': len(hosts), 'conductors': args.conductors,
            'providers_per_host': per_host,
            'handles_per_host': per_host * args.vfs,
            'database': sa.engine.make_url(args.database).get_backend_name(),
            'placement_database': sa.engine.make_url(
                placement_db).get_backend_name(),
            'placement_threads': args.placement_threads,
            'providers_in_placement': len(providers),
            **rounds}, indent=2))
        if len(providers) != per_host * len(hosts):
            sys.exit('Placement does not hold every provider')
        if rounds['unchanged_reports']['placement_writes']:
            sys.exit('unchanged reports wrote to Placement')
        if args.steady_seconds and rounds['steady']['writes_per_minute']:
            sys.exit('the reconciliation of unchanged hosts wrote to '
                     'Placement')
    finally:
        stop(procs)
        server.stop()
        rpc.cleanup()
        rabbitmqctl('delete_vhost', vhost)


if __name__ == '__main__':
    main()
