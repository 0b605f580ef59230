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
"""Cyborg side by side with openstack-cyborg 17.0.0, under the same load.

    .venvs/cyborg/bin/python tools/bench/compare.py \\
        --rabbit rabbit://guest:guest@127.0.0.1:5672/bench
    .venvs/cyborg/bin/python tools/bench/compare.py --render results.json

Run it with the quickstart's virtualenv (``tools/quickstart.sh`` makes
``.venvs/cyborg``) and ``wrk`` installed (``apt-get install wrk``). One
after the other, on SQLite files (with ``--mysql``, the existing service
and the ``--rabbit`` shape on MariaDB, as devstack runs them), each with
the real Placement and a stub Nova taking the events, it starts
(compare_services.py):

* the existing service, installed from PyPI into a virtualenv of its own
  (``--existing-venv``, made on first use from
  tools/openstack-cyborg-17.0.0-constraints.txt, plus gunicorn): db sync,
  conductor, agent (fake driver) and its WSGI application under gunicorn,
  2 workers × 4 threads, on RabbitMQ (``--rabbit``);
* Cyborg as ``tools/quickstart.sh start --rabbit`` runs it, then as the
  default all-in-one process (``fake://``);
* a bare WSGI application (tools/bench/bare_wsgi.py) under the same
  gunicorn settings answering the list of 200 profiles from memory: the
  limit of the machine and the load generator.

Each is seeded with 200 device profiles, then measured for ``--duration``
seconds per call after a warm-up: wrk (tools/bench/wrk.lua) lists the
profiles (c=8) and gets one by name (c=8); Python threads run bind cycles
(create, bind, wait for the event at the stub Nova, unbind, delete) at c=1
and c=4 while no other ARQ exists, then 200 cycles one at a time with
the CPU each step costs each process (the services' processes,
RabbitMQ, MariaDB, the load generator), then at c=1 beside 1,000
unbound ARQs;
wrk then creates ARQs (c=4) and device profiles (c=4). The memory of
each service (all its processes), resident (RSS) and proportional (PSS,
which counts a page that forked processes share once), is read at rest
and sampled under load. tools/bench/api_bench.py then measures an
instance's ARQs with 2,000 and 100,000 of them in the table. The figures go to
``<state>/results.json`` and, rendered by compare_report.py, to
doc/source/contributor/performance_comparison.inc. Services' logs are in
``<state>/<shape>/logs``.

With ``--profile DIR`` (py-spy installed: ``pip install py-spy``), each
bind load runs once more, unmeasured, while py-spy samples every service
of the shape, its workers included: one flame graph per shape, service
and load, ``DIR/<shape>-<service>-bind_c<N>.svg``.
"""

import argparse
from concurrent import futures
import contextlib
import datetime
import json
import os
import platform
import statistics
import subprocess  # nosec B404
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import compare_report  # noqa: E402

try:
    from cyborg_quickstart import nova_events  # noqa: E402

    import compare_load  # noqa: E402
    import compare_memory  # noqa: E402
    import compare_services as bench  # noqa: E402
except ImportError as e:
    raise SystemExit('compare.py runs in the quickstart\'s virtualenv: '
                     'tools/quickstart.sh, then .venvs/cyborg/bin/python '
                     'tools/bench/compare.py (%s)' % e)

PROFILES = 200
#: Bind cycles whose steps are accounted (compare_load.BindCycles.steps).
STEP_CYCLES = 200
REPORT = os.path.join(ROOT, 'doc', 'source', 'contributor',
                      'performance_comparison.inc')
#: The group of every seeded profile: the fake driver's device.
GROUP = {'resources:FPGA': '1', 'trait:CUSTOM_FAKE_DEVICE': 'required'}


# --- one shape --------------------------------------------------------------

def _ready(shape):
    """Wait for the API and the fake driver's deployable; its rp_uuid."""
    client = bench.Client(shape.api)

    def api():
        return client.call('GET', '/device_profiles')[0] == 200
    bench.wait('%s API on %s' % (shape.name, shape.api), api, 180, shape.alive)

    def deployable():
        body = bench.expect(client, 'GET', '/deployables', None, 200)
        return next((d['rp_uuid'] for d in body['deployables']
                     if d['driver_name'] == 'fake' and d['rp_uuid']), None)
    return bench.wait('%s: the fake driver\'s device in Placement'
                      % shape.name, deployable, 300, shape.alive)


def _seed(api):
    client = bench.Client(api)
    for index in range(PROFILES):
        bench.expect(client, 'POST', '/device_profiles', [{
            'name': 'bench-%03d' % index, 'groups': [GROUP],
            'description': 'benchmark profile %d' % index}], 201)
    status, body = client.call('GET', '/device_profiles')
    return body


def measure(shape, nova, duration, profile=None):
    """Start ``shape``, seed it, load it, stop it: its figures.

    :param profile: a directory where py-spy's flame graphs of each
        service under the bind cycles go; None profiles nothing.
    """
    bench.log('== %s: starting' % shape.name)
    try:
        shape.start()
        rp_uuid = _ready(shape)
        bench.log('== %s: seeding %d device profiles' % (shape.name, PROFILES))
        listed = _seed(shape.api)
        services = shape.services()
        calls = {}
        figures = {'calls': calls, 'list_body': listed}
        with compare_memory.MemorySampler(services) as sampler:
            figures['memory_rest'] = compare_memory.memory(services)
            load(shape.api, calls, duration)
            binds = compare_load.BindCycles(shape.api, nova, 'bench-000',
                                            shape.host, rp_uuid)
            # Before any other ARQ exists: the existing service's bind
            # reads every ARQ in the table (see _bind_beside_arqs).
            for connections in (1, 4):
                key = 'bind_c%d' % connections
                bench.log('   %s' % key)
                binds.run(connections, 2)  # warm-up
                calls[key] = binds.run(connections, duration)
                if profile:
                    # Another run, not measured: sampling takes CPU.
                    with _profiled(profile, shape, key, duration):
                        binds.run(connections, duration)
            bench.log('   bind_steps (%d cycles, one at a time)'
                      % STEP_CYCLES)
            figures['bind_steps'] = binds.steps(STEP_CYCLES, services)
            _bind_beside_arqs(shape.api, binds, calls, duration)
            _call(calls, 'create_arq', shape.api + '/accelerator_requests',
                  4, duration, 'POST',
                  json.dumps({'device_profile_name': 'bench-007'}))
            body = json.dumps([{'name': 'wrk-%d', 'groups': [GROUP]}])
            _call(calls, 'create_profile', shape.api + '/device_profiles',
                  4, duration, 'POST', body)
        figures['memory'] = compare_memory.memory(services, sampler)
        for name, values in figures['memory'].items():
            for key in compare_memory.MEASURES:
                values[key] = figures['memory_rest'][name][key]
        del figures['memory_rest']
        return figures
    finally:
        shape.stop()


@contextlib.contextmanager
def _profiled(directory, shape, key, duration):
    """py-spy samples each service of ``shape`` for ``duration`` seconds.

    Each service's processes and their children, to
    ``<shape>-<service>-<key>.svg`` in ``directory``.
    """
    bench.log('   %s under py-spy' % key)
    os.makedirs(directory, exist_ok=True)
    recorders = []
    for name, (pid, *_) in shape.services().items():
        svg = os.path.join(directory,
                           '%s-%s-%s.svg' % (shape.name, name, key))
        recorders.append(subprocess.Popen(  # nosec B603 B607
            ['py-spy', 'record', '--subprocesses', '--nonblocking',
             '--duration', str(duration), '--output', svg,
             '--pid', str(pid)], stdout=subprocess.DEVNULL))
    try:
        yield
    finally:
        for recorder in recorders:
            recorder.wait()


def _call(calls, key, url, connections, duration, method='GET', body=None):
    bench.log('   %s (c=%d)' % (key, connections))
    compare_load.wrk(url, connections, 1, method, body)  # warm-up
    calls[key] = compare_load.wrk(url, connections, duration, method,
                                  body)


def load(api, calls, duration):
    """The wrk reads of the 200 seeded profiles."""
    _call(calls, 'list_profiles', api + '/device_profiles', 8, duration)
    _call(calls, 'get_profile', api + '/device_profiles?name=bench-123', 8,
          duration)


def _bind_beside_arqs(api, binds, calls, duration):
    """Bind cycles at c=1 with BIND_ARQS_PRESENT unbound ARQs in the table.

    The same number for every service, made here rather than left by the
    create_arq run (which leaves as many as each service creates in its
    10 s): openstack-cyborg 17.0.0's bind PATCH loads and fills out every
    ARQ in the table to check that the instance has none, so its bind
    takes time in proportion to the ARQs present.
    """
    count = compare_report.BIND_ARQS_PRESENT
    bench.log('   bind_c1_arqs (%d unbound ARQs first)' % count)

    def create(share):
        client = bench.Client(api)
        for _ in range(share):
            bench.expect(client, 'POST', '/accelerator_requests',
                         {'device_profile_name': 'bench-007'}, 201)
    with futures.ThreadPoolExecutor(4) as pool:
        # list(): a failed creation raises here.
        list(pool.map(create, [count // 4] * 4))
    binds.run(1, 2)  # warm-up
    calls['bind_c1_arqs'] = binds.run(1, duration)


def instance_arqs(counts, requests):
    """tools/bench/api_bench.py's instance list with ``counts`` ARQs."""
    import api_bench

    figures = {}
    for count in counts:
        bench.log('== api_bench: %d ARQs' % count)
        with api_bench.service(arqs=count) as url:
            figures[str(count)] = api_bench.measure_instance(url, requests)
    return figures


def _machine():
    model = platform.machine()
    with contextlib.suppress(OSError), open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    return model


def _commit():
    # git, on this tree.
    return subprocess.run(  # nosec B603 B607
        ['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT,
        capture_output=True, text=True).stdout.strip() or 'unknown'


def _api_workers_default():
    from oslo_concurrency import processutils

    import cyborg.conf
    default = cyborg.conf.CONF.api.api_workers  # unset: the default
    return default or processutils.get_worker_count()


def _ports(base):
    names = ('api', 'placement', 'glance', 'nova', 'keystone', 'neutron')
    return {name: base + index for index, name in enumerate(names)}


def run(args):
    state = os.path.abspath(args.state)
    bench.ensure_existing_venv(args.existing_venv)
    ports = _ports(args.port)
    nova = nova_events.EventReceiver(port=ports['nova']).start()
    existing_db = ours_db = None
    if args.mysql:
        existing_db = bench.fresh_mysql_database(args.mysql,
                                                 'cyborg_bench_existing')
        ours_db = bench.fresh_mysql_database(args.mysql, 'cyborg_bench')
    shapes = [bench.Existing(os.path.join(state, 'existing'), ports,
                             args.rabbit, args.existing_venv, existing_db),
              bench.Ours(os.path.join(state, 'rabbit'), ports, args.rabbit,
                         ours_db),
              bench.Ours(os.path.join(state, 'all_in_one'), ports)]
    results = {'shapes': {}, 'cpus': os.cpu_count(),
               'step_cycles': STEP_CYCLES,
               'api_workers_default': _api_workers_default(),
               'meta': {
                   'date': datetime.datetime.now(
                       datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'),
                   'machine': _machine(), 'commit': _commit(),
                   'duration': args.duration,
                   'database': 'MariaDB' if args.mysql else 'SQLite',
                   'load_generator': 'wrk 4 (one thread, '
                                     'tools/bench/wrk.lua)'}}
    saved = os.path.join(state, 'results.json')

    def save():
        load_cpu = [call['load_cpu'] for figures in
                    results['shapes'].values()
                    for call in figures['calls'].values()]
        results['meta']['load_cpu'] = statistics.fmean(load_cpu or [0])
        with open(saved, 'w') as f:
            json.dump(results, f, indent=1, sort_keys=True)

    try:
        for shape in shapes:
            figures = measure(shape, nova, args.duration, args.profile)
            listed = figures.pop('list_body')
            results['shapes'][shape.name] = figures
            save()
    finally:
        nova.stop()
    results['list_bytes'] = len(listed)
    bare = bench.Bare(os.path.join(state, 'bare'), ports['api'],
                      args.existing_venv, listed)
    bench.log('== bare WSGI limit')
    bare.start()
    try:
        bench.wait('the bare WSGI application',
                   lambda: bench.Client(bare.api).call(
                       'GET', '/device_profiles')[0] == 200,
                   60, bare.alive)
        calls = {}
        _call(calls, 'list_profiles', bare.api + '/device_profiles', 8,
              args.duration)
        results['shapes']['bare'] = {'calls': calls}
    finally:
        bare.stop()
    save()
    if args.instance_arqs:
        results['instance_arqs'] = instance_arqs(args.instance_arqs, 400)
        save()
    return results


def _counts(text):
    return [int(c) for c in text.split(',') if c]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rabbit', help='RabbitMQ transport URL, its '
                        'own virtual host (required unless --render)')
    parser.add_argument('--mysql', metavar='URL',
                        help='SQLAlchemy URL of a MySQL/MariaDB server, '
                        'e.g. mysql+pymysql://root@127.0.0.1: the existing '
                        'service and the --rabbit shape use fresh databases '
                        'on it, as devstack runs them (needs PyMySQL in '
                        'this virtualenv); SQLite files by default')
    parser.add_argument('--state', default='.state/bench',
                        help='directory of the services\' files '
                        '(default .state/bench)')
    parser.add_argument('--port', type=int, default=16600,
                        help='first of 6 ports on 127.0.0.1 (default '
                        '16600)')
    parser.add_argument('--duration', type=int, default=10,
                        help='seconds of load per call (default 10)')
    parser.add_argument('--existing-venv',
                        default=os.path.join(
                            ROOT, '.venvs', 'openstack-cyborg-17.0.0-bench'),
                        help='virtualenv of the existing service (made if '
                        'missing)')
    parser.add_argument('--instance-arqs', type=_counts,
                        default=[2000, 100000],
                        help='ARQ counts for the instance list, comma '
                        'separated; empty to skip (default 2000,100000)')
    parser.add_argument('--report', default=REPORT,
                        help='the reStructuredText file written (default '
                        'doc/source/contributor/performance_comparison.inc)')
    parser.add_argument('--profile', metavar='DIR',
                        help='also run each bind load once more under '
                        'py-spy (pip install py-spy), writing a flame '
                        'graph per service to DIR')
    parser.add_argument('--render', metavar='RESULTS',
                        help='only render a results.json of an earlier run')
    args = parser.parse_args()
    if args.render:
        with open(args.render) as f:
            results = json.load(f)
    elif not args.rabbit:
        parser.error('--rabbit is required')
    else:
        results = run(args)
    text = compare_report.render(results)
    with open(args.report, 'w') as f:
        f.write(text)
    print(text)


if __name__ == '__main__':
    main()
