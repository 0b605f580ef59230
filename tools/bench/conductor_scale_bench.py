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

Starts the real Placement (in this process, on SQLite), ``--conductors``
``cyborg-conductor`` processes on RabbitMQ (a virtual host of its own,
made with rabbitmqctl) sharing one database, and registers ``--hosts``
compute nodes as Nova would. Then every host asks for its compute node
and sends its report at the same moment, as agents starting together
do; the report is the one the agent's drivers make of a simulated host
with ``--fpgas`` Intel FPGAs of ``--vfs`` VFs each. It prints how long
until Placement held every device provider of every host.

    tools/bench/conductor_scale_bench.py [--hosts 100] [--conductors 2]
        [--database postgresql+psycopg2://postgres@127.0.0.1/cyborg_bench]
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

import sqlalchemy as sa

from cyborg.agent import resource_tracker
from cyborg.common import rpc
from cyborg.conductor import rpcapi
import cyborg.conf
from cyborg import context
from cyborg.db import migration
from cyborg.demo import placement
from cyborg.demo import sysfs
from cyborg.drivers import base as drivers_base
from cyborg import objects

CONF = cyborg.conf.CONF


def rabbitmqctl(*args):
    subprocess.run(('rabbitmqctl', '-q') + args, check=True,
                   capture_output=True)


def fresh_database(url):
    """Drop and create the database of ``url``; build Cyborg's schema."""
    url = sa.engine.make_url(url)
    server = 'postgres' if url.get_backend_name() == 'postgresql' else None
    admin = sa.create_engine(url.set(database=server),
                             isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        conn.execute(sa.text('DROP DATABASE IF EXISTS %s' % url.database))
        conn.execute(sa.text('CREATE DATABASE %s' % url.database))
    admin.dispose()
    engine = sa.create_engine(url)
    migration.upgrade('head', engine=engine)
    engine.dispose()


def host_report(tmp, fpgas, vfs):
    """The report the agent's drivers make of one simulated host."""
    root = os.path.join(tmp, 'sysfs')
    sysfs.build(root, [('intel_fpga', '0000:%02x:00.0' % (0x10 + i),
                        {'vfs': vfs}) for i in range(fpgas)])
    CONF.set_override('sysfs_root', root, group='agent')
    tracker = resource_tracker.ResourceTracker(
        'template', drivers_base.load(['intel_fpga_driver']), None)
    return tracker.discover()


def write_conf(path, sections):
    with open(path, 'w') as f:
        for section, options in sections.items():
            f.write('[%s]\n' % section)
            for key, value in options.items():
                f.write('%s = %s\n' % (key, value))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=100)
    parser.add_argument('--conductors', type=int, default=2)
    parser.add_argument('--fpgas', type=int, default=4)
    parser.add_argument('--vfs', type=int, default=4)
    parser.add_argument('--database', default='postgresql+psycopg2://'
                        'postgres@127.0.0.1/cyborg_bench')
    parser.add_argument('--rabbit', default='rabbit://guest:guest@'
                        '127.0.0.1:5672/')
    args = parser.parse_args()
    objects.register_all()
    tmp = tempfile.mkdtemp(prefix='cyborg-bench-')
    vhost = 'cyborg-bench-%d' % os.getpid()
    rabbitmqctl('add_vhost', vhost)
    rabbitmqctl('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*')
    rabbit = args.rabbit.rstrip('/') + '/' + vhost
    fresh_database(args.database)
    server = placement.PlacementServer(
        'sqlite:///' + os.path.join(tmp, 'placement.sqlite')).start()
    procs = []
    try:
        rp = placement.adapter(server.url, '1.39')
        hosts = ['bench-host-%03d' % i for i in range(args.hosts)]
        for host in hosts:
            rp.post('/resource_providers', json={'name': host})
        for i in range(args.conductors):
            path = os.path.join(tmp, 'conductor-%d.conf' % i)
            service = {'auth_type': 'admin_token', 'token': 'admin'}
            write_conf(path, {
                'DEFAULT': {'host': 'conductor-%d' % i,
                            'transport_url': rabbit,
                            'periodic_fuzzy_delay': 0},
                'database': {'connection': args.database},
                'conductor': {'workers': 1},
                'placement': dict(service, endpoint=server.url),
            })
            with open(path + '.log', 'w') as log:
                procs.append(subprocess.Popen(
                    [os.path.join(os.path.dirname(sys.executable),
                                  'cyborg-conductor'), '--config-file',
                     path], stdout=log, stderr=subprocess.STDOUT))
        template = host_report(tmp, args.fpgas, args.vfs)
        per_host = sum(len(d.deployables) for d in template.devices)
        rpc.init(CONF, url=rabbit)
        conductor = rpcapi.ConductorAPI()
        ctx = context.get_admin_context()

        def agent_start(host):
            report = template.obj_clone()
            report.hostname = host
            for attempt in range(120):
                try:
                    conductor.compute_node_rp(ctx, host, host)
                    break
                except Exception:
                    time.sleep(0.5)  # the conductors are still starting
            conductor.report_host(ctx, report)

        # The conductors answer the first lookup once they serve.
        agent_start(hosts[0])
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(len(hosts)) as pool:
            list(pool.map(agent_start, hosts[1:]))
        answered = time.monotonic() - start
        expected = per_host * len(hosts)
        while True:
            providers = rp.get('/resource_providers', params={
                'required': 'OWNER_CYBORG'}).json()['resource_providers']
            if len(providers) >= expected:
                break
            time.sleep(0.2)
        matched = time.monotonic() - start
        print(json.dumps({
            'hosts': len(hosts), 'conductors': args.conductors,
            'providers_per_host': per_host,
            'handles_per_host': per_host * args.vfs,
            'all_reports_answered_s': round(answered, 2),
            'placement_matches_s': round(matched, 2)}, indent=2))
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(60)
        server.stop()
        rpc.cleanup()
        rabbitmqctl('delete_vhost', vhost)


if __name__ == '__main__':
    main()
