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
after the other, on SQLite, each with the real Placement and a stub Nova
taking the events, it starts:

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
profiles (c=8), gets one by name (c=8), creates ARQs (c=4) and device
profiles (c=4); Python threads run bind cycles (create, bind, wait for the
event at the stub Nova, unbind, delete) at c=1 and c=4. The memory of
each service (all its processes), resident (RSS) and proportional (PSS,
which counts a page that forked processes share once), is read at rest
and sampled under load. tools/bench/api_bench.py then measures an
instance's ARQs with 2,000 and 100,000 of them in the table. The figures go to
``<state>/results.json`` and, rendered by compare_report.py, to
doc/source/contributor/performance_comparison.inc. Services' logs are in
``<state>/<shape>/logs``.
"""

import argparse
import contextlib
import datetime
import http.client
import json
import os
import platform
import resource
import secrets
import shutil
import statistics
import subprocess  # nosec B404
import sys
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import compare_report  # noqa: E402

try:
    from keystoneauth1 import exceptions as ks_exceptions  # noqa: E402

    from cyborg.demo import nova_events  # noqa: E402
    from cyborg.demo import nova_sim  # noqa: E402
    from cyborg.demo import placement  # noqa: E402
    from cyborg.demo import quickstart_demo  # noqa: E402
except ImportError as e:
    raise SystemExit('compare.py runs in the quickstart\'s virtualenv: '
                     'tools/quickstart.sh, then .venvs/cyborg/bin/python '
                     'tools/bench/compare.py (%s)' % e)

PROFILES = 200
HOST = 'bench-host'
CONSTRAINTS = os.path.join(ROOT, 'tools',
                           'openstack-cyborg-17.0.0-constraints.txt')
REPORT = os.path.join(ROOT, 'doc', 'source', 'contributor',
                      'performance_comparison.inc')
#: The group of every seeded profile: the fake driver's device.
GROUP = {'resources:FPGA': '1', 'trait:CUSTOM_FAKE_DEVICE': 'required'}
HEADERS = {'Accept': 'application/json',
           'Content-Type': 'application/json',
           'X-Roles': 'admin,member,reader', 'X-Service-Roles': 'service',
           # The existing service wants UUIDs.
           'X-Project-Id': '0b1e7a6d5c4f4e3d9a8b7c6d5e4f3a2b',
           'X-User-Id': '5f4e3d2c1b0a49f88e7d6c5b4a392817'}
#: gunicorn as the existing service's API runs: 2 workers × 4 threads.
GUNICORN = ['--workers', '2', '--threads', '4', '--worker-class', 'gthread']


def _log(message):
    print('%s %s' % (time.strftime('%H:%M:%S'), message), flush=True)


# --- memory -----------------------------------------------------------------

def _children():
    """{pid: [child pids]} of every process."""
    tree = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _tree(pids):
    """``pids`` and all their descendants."""
    tree = _children()
    todo, seen = list(pids), []
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.append(pid)
            todo.extend(tree.get(pid, ()))
    return seen


def _kib(path, field):
    """The kB figure of line ``field`` of ``path`` (a /proc file), or 0."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass  # the process has gone
    return 0


def rss_mib(pids):
    """Resident memory of ``pids`` and all their descendants, in MiB.

    Pages that forked processes share count once in each of them.
    """
    return sum(_kib('/proc/%d/status' % pid, 'VmRSS:')
               for pid in _tree(pids)) / 1024


def pss_mib(pids):
    """Proportional set size of ``pids`` and their descendants, in MiB.

    A page that n processes share counts 1/n in each, so the sum counts
    it once: what the service costs the machine.
    """
    return sum(_kib('/proc/%d/smaps_rollup' % pid, 'Pss:')
               for pid in _tree(pids)) / 1024


#: What :func:`memory` reports: {figure's key at rest: function}.
MEASURES = {'rest': rss_mib, 'pss_rest': pss_mib}


class MemorySampler:
    """The most memory each service used while it runs (a thread)."""

    def __init__(self, services):
        self.services = services
        self.peak = {name: {key: 0 for key in MEASURES} for name in services}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(0.5):
            for name, pids in self.services.items():
                for key, measure in MEASURES.items():
                    self.peak[name][key] = max(self.peak[name][key],
                                               measure(pids))

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _load_key(key):
    # 'rest' -> 'load', 'pss_rest' -> 'pss_load'
    return key[:-len('rest')] + 'load'


def memory(services, sampler=None):
    """{service: {figure: MiB}}, with 'all' their sum.

    The figures: 'rest' and 'load' the resident set (RSS), 'pss_rest' and
    'pss_load' the proportional set (PSS); 'load' ones with ``sampler``.
    """
    figures = {name: {key: measure(pids)
                      for key, measure in MEASURES.items()}
               for name, pids in services.items()}
    if sampler:
        for name, peaks in sampler.peak.items():
            for key, peak in peaks.items():
                figures[name][_load_key(key)] = peak
    # The load figures are the peaks of the services, which need not
    # coincide.
    figures['all'] = {key: sum(f[key] for f in figures.values())
                      for key in next(iter(figures.values()), {})}
    return figures


# --- HTTP -------------------------------------------------------------------

class Client:
    """A kept-alive connection to a noauth API, reopened when dropped."""

    def __init__(self, url):
        self.url = url
        host, port = url.split('//')[1].split('/')[0].split(':')
        self.prefix = '/' + url.split('//')[1].split('/', 1)[1]
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)

    def call(self, method, path, body=None):
        data = json.dumps(body) if body is not None else None
        for attempt in (1, 2):
            try:
                self.conn.request(method, self.prefix + path, body=data,
                                  headers=HEADERS)
                response = self.conn.getresponse()
                payload = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                if attempt == 2:
                    raise
        return response.status, payload


def _expect(client, method, path, body, status):
    got, payload = client.call(method, path, body)
    if got != status:
        raise RuntimeError('%s %s answered %d: %s' % (
            method, path, got, payload[:300]))
    return json.loads(payload) if payload else None


def _wait(what, check, timeout, alive=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if alive is not None:
            alive()
        try:
            found = check()
        except (OSError, http.client.HTTPException, RuntimeError):
            found = None
        if found:
            return found
        time.sleep(0.5)
    raise SystemExit('%s within %d s: no' % (what, timeout))


# --- load -------------------------------------------------------------------

def wrk(url, connections, duration, method='GET', body=None):
    """One wrk run of ``duration`` seconds; its figures and CPU seconds."""
    env = dict(os.environ, BENCH_METHOD=method,
               BENCH_RUN=secrets.token_hex(4))
    if body is not None:
        env['BENCH_BODY'] = body
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # wrk and its script, from this tree.
    done = subprocess.run(  # nosec B603 B607
        ['wrk', '-t1', '-c%d' % connections, '-d%ds' % duration,
         '--timeout', '30s', '-s', os.path.join(HERE, 'wrk.lua'), url],
        env=env, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = [lin for lin in done.stdout.splitlines() if lin.startswith('{')]
    if not line:
        raise SystemExit('wrk printed no figures: %s' % done.stdout)
    raw = json.loads(line[-1])
    seconds = raw['duration_us'] / 1e6
    return {'c': connections, 'requests': raw['requests'],
            'rps': raw['requests'] / seconds, 'errors': raw['errors'],
            'p50': raw['p50_us'] / 1000, 'p90': raw['p90_us'] / 1000,
            'p99': raw['p99_us'] / 1000, 'mean': raw['mean_us'] / 1000,
            'bytes': raw['bytes'],
            'load_cpu': (after.ru_utime + after.ru_stime -
                         before.ru_utime - before.ru_stime) / seconds}


class BindCycles:
    """Nova's life of an ARQ, in a loop, by ``connections`` threads."""

    def __init__(self, api, nova, profile, host, rp_uuid):
        self.api = api
        self.host = host
        self.nova = nova
        self.profile = profile
        self.rp_uuid = rp_uuid
        self.times = []
        self.failures = []
        self._lock = threading.Lock()

    def cycle(self, client):
        instance = str(uuid.uuid4())
        start = time.perf_counter()
        arqs = _expect(client, 'POST', '/accelerator_requests',
                       {'device_profile_name': self.profile}, 201)['arqs']
        arq = arqs[0]['uuid']
        try:
            _expect(client, 'PATCH', '/accelerator_requests', {arq: [
                {'op': 'add', 'path': '/hostname', 'value': self.host},
                {'op': 'add', 'path': '/device_rp_uuid',
                 'value': self.rp_uuid},
                {'op': 'add', 'path': '/instance_uuid',
                 'value': instance}]}, 202)
            events = self.nova.wait_for(instance, 1, 60)
            if not events or events[0]['status'] != 'completed':
                raise RuntimeError('bind of %s: %s' % (arq, events))
            _expect(client, 'PATCH', '/accelerator_requests', {arq: [
                {'op': 'remove', 'path': path} for path in
                ('/hostname', '/device_rp_uuid', '/instance_uuid')]}, 202)
        finally:
            _expect(client, 'DELETE', '/accelerator_requests?arqs=' + arq,
                    None, 204)
        return time.perf_counter() - start

    def _run(self, deadline):
        client = Client(self.api)
        while time.monotonic() < deadline:
            try:
                took = self.cycle(client)
            except (RuntimeError, OSError,
                    http.client.HTTPException) as e:
                with self._lock:
                    self.failures.append(str(e)[:240])
                continue
            with self._lock:
                self.times.append(took)

    def run(self, connections, duration):
        self.times, self.failures = [], []
        cpu = time.process_time()
        start = time.monotonic()
        threads = [threading.Thread(target=self._run,
                                    args=(start + duration,))
                   for _ in range(connections)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.monotonic() - start
        ms = sorted(t * 1000 for t in self.times) or [0]
        cuts = statistics.quantiles(ms, n=100) if len(ms) > 1 else ms * 99
        for failure in sorted(set(self.failures))[:3]:
            _log('  bind cycle failed: %s' % failure)
        return {'c': connections, 'requests': len(self.times),
                'rps': len(self.times) / wall,
                'errors': len(self.failures), 'p50': cuts[49],
                'p90': cuts[89], 'p99': cuts[98],
                'mean': statistics.fmean(ms),
                'load_cpu': (time.process_time() - cpu) / wall}


# --- the services -----------------------------------------------------------

class _Processes:
    """Processes we start, each in a session of its own, with a log.

    They run in the log directory, so that no package of this tree is
    imported by the existing service.
    """

    def __init__(self, logs):
        self.logs = logs
        self.procs = {}

    def start(self, name, argv, **kwargs):
        os.makedirs(self.logs, exist_ok=True)
        with open(os.path.join(self.logs, name + '.log'), 'ab') as log:
            # Our own commands: the services under test.
            self.procs[name] = subprocess.Popen(  # nosec B603
                argv, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
                cwd=self.logs, **kwargs)

    def alive(self):
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise SystemExit('%s exited (%s); see %s' % (
                    name, proc.returncode,
                    os.path.join(self.logs, name + '.log')))

    def stop(self):
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
        self.procs = {}


def _wait_placement(url, timeout=120, alive=None):
    def answers():
        try:
            return placement.adapter(url, '1.0').get('/').status_code == 200
        except ks_exceptions.ConnectionError:
            return False  # not listening yet
    _wait('Placement on %s' % url, answers, timeout, alive)


def _register_host(placement_url):
    nova_sim.NovaSim(None, placement.adapter(
        placement_url, nova_sim.PLACEMENT_VERSION), None, None
    ).register_host(HOST)


def ensure_existing_venv(venv):
    if os.path.exists(os.path.join(venv, 'bin', 'gunicorn')):
        return
    _log('== installing openstack-cyborg 17.0.0 and gunicorn into %s' % venv)
    subprocess.run([sys.executable, '-m', 'venv', venv],  # nosec B603
                   check=True)
    subprocess.run([os.path.join(venv, 'bin', 'pip'), 'install',  # nosec
                    '-q', 'openstack-cyborg==17.0.0', 'PyMySQL', 'gunicorn',
                    '-c', CONSTRAINTS], check=True)


class Existing:
    """openstack-cyborg 17.0.0: db sync, conductor, agent and gunicorn."""

    name = 'existing'
    host = HOST

    def __init__(self, state, ports, rabbit, venv):
        self.state = state
        self.ports = ports
        self.rabbit = rabbit
        self.venv = os.path.abspath(venv)
        self.api = 'http://127.0.0.1:%d/v2' % ports['api']
        self.processes = _Processes(os.path.join(state, 'logs'))

    def _config(self):
        placement_url = 'http://127.0.0.1:%d' % self.ports['placement']
        nova_url = 'http://127.0.0.1:%d/v2.1' % self.ports['nova']
        paste = os.path.join(self.venv, 'etc', 'cyborg', 'api-paste.ini')
        with open(paste) as f:
            # noauth: the pipeline without Keystone's middleware; the
            # load generator says who it is with the X-Roles headers.
            text = f.read().replace(' authtoken api_v2', ' api_v2')
        with open(os.path.join(self.state, 'api-paste.ini'), 'w') as f:
            f.write(text)
        # noauth2's fixed token of the demo Placement, and the stub Nova.
        token = 'auth_type = admin_token\nendpoint = %s\ntoken = %s\n'  # nosec
        with open(os.path.join(self.state, 'cyborg.conf'), 'w') as f:
            f.write('\n'.join([
                '[DEFAULT]', 'host = %s' % HOST,
                'transport_url = %s' % self.rabbit,
                'state_path = %s' % self.state,
                '[database]', 'connection = sqlite:///%s' % os.path.join(
                    self.state, 'cyborg.sqlite'),
                '[api]', 'api_paste_config = %s' % os.path.join(
                    self.state, 'api-paste.ini'),
                '[agent]', 'enabled_drivers = fake_driver',
                '[oslo_concurrency]', 'lock_path = %s' % self.state,
                '[placement]', token % (placement_url, placement.TOKEN),
                '[nova]', token % (nova_url, placement.TOKEN)]))

    def start(self):
        # Fresh databases: the figures are those of 200 profiles.
        shutil.rmtree(self.state, ignore_errors=True)
        os.makedirs(self.state)
        self._config()
        conf = ['--config-file', os.path.join(self.state, 'cyborg.conf')]
        bin_ = os.path.join(self.venv, 'bin')
        placement_url = 'http://127.0.0.1:%d' % self.ports['placement']
        self.processes.start('placement', [
            sys.executable, '-m', 'cyborg.demo.placement', '--port',
            str(self.ports['placement']), '--db', 'sqlite:///%s' %
            os.path.join(self.state, 'placement.sqlite')])
        _wait_placement(placement_url, alive=self.processes.alive)
        _register_host(placement_url)
        # The existing service's own programs. Its migrations use ALTER
        # COLUMN, which SQLite lacks: its schema comes from its models.
        subprocess.run([os.path.join(bin_, 'cyborg-dbsync')]  # nosec B603
                       + conf + ['create_schema'], check=True,
                       capture_output=True)
        self.processes.start('conductor',
                             [os.path.join(bin_, 'cyborg-conductor')] + conf)
        self.processes.start('agent',
                             [os.path.join(bin_, 'cyborg-agent')] + conf)
        self.processes.start('api', [
            os.path.join(bin_, 'gunicorn')] + GUNICORN + [
            '--bind', '127.0.0.1:%d' % self.ports['api'],
            # Not this tree: its cyborg package is the other one.
            '--chdir', self.state, '--pythonpath', HERE,
            'legacy_wsgi:application'],
            env=dict(os.environ, CYBORG_BENCH_CONFIG=conf[1]))

    def alive(self):
        self.processes.alive()

    def services(self):
        return {name: [self.processes.procs[name].pid]
                for name in compare_report.SERVICES}

    def stop(self):
        self.processes.stop()


class Ours:
    """Cyborg as the quickstart runs it: --rabbit or all-in-one."""

    def __init__(self, state, ports, rabbit=None):
        self.name = 'rabbit' if rabbit else 'all_in_one'
        self.host = quickstart_demo.HOST
        self.state = state
        self.ports = ports
        self.rabbit = rabbit
        self.api = 'http://127.0.0.1:%d/v2' % ports['api']

    def _quickstart(self, *args):
        ports = []
        for service in ('api', 'placement', 'glance', 'nova', 'keystone',
                        'neutron'):
            ports += ['--%s-port' % service, str(self.ports[service])]
        # The quickstart of this tree, in this virtualenv.
        subprocess.run(  # nosec B603
            [sys.executable, '-m', 'cyborg.demo.quickstart', '--state',
             self.state] + list(args) + ports, check=True, cwd=ROOT,
            stdout=subprocess.DEVNULL)

    def start(self):
        if os.path.isdir(os.path.join(self.state, 'run')):
            self.stop()
        # Fresh databases: the figures are those of 200 profiles.
        shutil.rmtree(self.state, ignore_errors=True)
        os.makedirs(self.state)
        self._quickstart('start', '--no-demo', *(
            ['--rabbit', self.rabbit] if self.rabbit else []))

    def _pids(self):
        pids = {}
        run = os.path.join(self.state, 'run')
        for entry in os.listdir(run):
            if entry.endswith('.pid'):
                with open(os.path.join(run, entry)) as f:
                    pids[entry[:-4]] = json.load(f)[0]
        return pids

    def alive(self):
        for name, pid in self._pids().items():
            if not os.path.exists('/proc/%d' % pid):
                raise SystemExit('%s exited; see %s/logs' % (name,
                                                             self.state))

    def services(self):
        pids = self._pids()
        if 'all_in_one' in pids:
            return {'all_in_one': [pids['all_in_one']]}
        return {name: [pids[name]] for name in compare_report.SERVICES}

    def stop(self):
        self._quickstart('stop')


class Bare:
    """The limit: gunicorn answering the list of profiles from memory."""

    name = 'bare'

    def __init__(self, state, port, venv, body):
        self.state = state
        self.api = 'http://127.0.0.1:%d/v2' % port
        self.port = port
        self.venv = venv
        self.body = body
        self.processes = _Processes(os.path.join(state, 'logs'))

    def start(self):
        os.makedirs(self.state, exist_ok=True)
        body = os.path.join(self.state, 'device_profiles.json')
        with open(body, 'wb') as f:
            f.write(self.body)
        self.processes.start('bare', [
            os.path.join(self.venv, 'bin', 'gunicorn')] + GUNICORN + [
            '--bind', '127.0.0.1:%d' % self.port, '--chdir', self.state,
            '--pythonpath', HERE, 'bare_wsgi:application'],
            env=dict(os.environ, CYBORG_BENCH_BODY=body))

    def alive(self):
        self.processes.alive()

    def services(self):
        return {}

    def stop(self):
        self.processes.stop()


# --- one shape --------------------------------------------------------------

def _ready(shape):
    """Wait for the API and the fake driver's deployable; its rp_uuid."""
    client = Client(shape.api)

    def api():
        return client.call('GET', '/device_profiles')[0] == 200
    _wait('%s API on %s' % (shape.name, shape.api), api, 180, shape.alive)

    def deployable():
        body = _expect(client, 'GET', '/deployables', None, 200)
        return next((d['rp_uuid'] for d in body['deployables']
                     if d['driver_name'] == 'fake' and d['rp_uuid']), None)
    return _wait('%s: the fake driver\'s device in Placement' % shape.name,
                 deployable, 300, shape.alive)


def _seed(api):
    client = Client(api)
    for index in range(PROFILES):
        _expect(client, 'POST', '/device_profiles', [{
            'name': 'bench-%03d' % index, 'groups': [GROUP],
            'description': 'benchmark profile %d' % index}], 201)
    status, body = client.call('GET', '/device_profiles')
    return body


def measure(shape, nova, duration):
    """Start ``shape``, seed it, load it, stop it: its figures."""
    _log('== %s: starting' % shape.name)
    try:
        shape.start()
        rp_uuid = _ready(shape)
        _log('== %s: seeding %d device profiles' % (shape.name, PROFILES))
        listed = _seed(shape.api)
        services = shape.services()
        calls = {}
        figures = {'calls': calls, 'list_body': listed}
        with MemorySampler(services) as sampler:
            figures['memory_rest'] = memory(services)
            load(shape.api, calls, duration)
            binds = BindCycles(shape.api, nova, 'bench-000', shape.host,
                               rp_uuid)
            for connections in (1, 4):
                key = 'bind_c%d' % connections
                _log('   %s' % key)
                binds.run(connections, 2)  # warm-up
                calls[key] = binds.run(connections, duration)
            body = json.dumps([{'name': 'wrk-%d', 'groups': [GROUP]}])
            _call(calls, 'create_profile', shape.api + '/device_profiles',
                  4, duration, 'POST', body)
        figures['memory'] = memory(services, sampler)
        for name, values in figures['memory'].items():
            for key in MEASURES:
                values[key] = figures['memory_rest'][name][key]
        del figures['memory_rest']
        return figures
    finally:
        shape.stop()


def _call(calls, key, url, connections, duration, method='GET', body=None):
    _log('   %s (c=%d)' % (key, connections))
    wrk(url, connections, 1, method, body)  # warm-up
    calls[key] = wrk(url, connections, duration, method, body)


def load(api, calls, duration):
    """The wrk calls on the 200 seeded profiles."""
    _call(calls, 'list_profiles', api + '/device_profiles', 8, duration)
    _call(calls, 'get_profile', api + '/device_profiles?name=bench-123', 8,
          duration)
    _call(calls, 'create_arq', api + '/accelerator_requests', 4, duration,
          'POST', json.dumps({'device_profile_name': 'bench-007'}))


def instance_arqs(counts, requests):
    """tools/bench/api_bench.py's instance list with ``counts`` ARQs."""
    import api_bench

    figures = {}
    for count in counts:
        _log('== api_bench: %d ARQs' % count)
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
    ensure_existing_venv(args.existing_venv)
    ports = _ports(args.port)
    nova = nova_events.EventReceiver(port=ports['nova']).start()
    shapes = [Existing(os.path.join(state, 'existing'), ports, args.rabbit,
                       args.existing_venv),
              Ours(os.path.join(state, 'rabbit'), ports, args.rabbit),
              Ours(os.path.join(state, 'all_in_one'), ports)]
    results = {'shapes': {}, 'cpus': os.cpu_count(),
               'api_workers_default': _api_workers_default(),
               'meta': {
                   'date': datetime.datetime.now(
                       datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'),
                   'machine': _machine(), 'commit': _commit(),
                   'duration': args.duration,
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
            figures = measure(shape, nova, args.duration)
            listed = figures.pop('list_body')
            results['shapes'][shape.name] = figures
            save()
    finally:
        nova.stop()
    results['list_bytes'] = len(listed)
    bare = Bare(os.path.join(state, 'bare'), ports['api'],
                args.existing_venv, listed)
    _log('== bare WSGI limit')
    bare.start()
    try:
        _wait('the bare WSGI application', lambda: Client(bare.api).call(
            'GET', '/device_profiles')[0] == 200, 60, bare.alive)
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
