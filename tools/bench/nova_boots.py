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
"""Accelerated boots through the real Nova: openstack-cyborg 17.0.0, then
Cyborg, under the same Nova, Placement and simulated cards.

    .venvs/cyborg/bin/python tools/bench/nova_boots.py \\
        --rabbit rabbit://guest:guest@127.0.0.1:5672/
    .venvs/cyborg/bin/python tools/bench/nova_boots.py --render results.json

Run it with the quickstart's virtualenv (``.venvs/cyborg``), Nova's
(``.venvs/nova-34.0.0``, tools/setup-client-venvs.sh), ``rabbitmqctl``
(it makes, and at the end deletes, two RabbitMQ virtual hosts,
``<--vhost-prefix>-nova`` and ``-cyborg``) and 17.0.0's virtualenv with
gunicorn (made on first use as compare.py makes it). For each service, on
fresh databases, it starts:

* the demo Placement of this tree and the real Glance (``.venvs/glance``,
  tools/setup-client-venvs.sh);
* Nova 34 (:class:`cyborg.demo.nova.NovaServices`: nova-api, conductor,
  scheduler, and nova-compute with the fake virt driver) on two compute
  hosts, ``bench-host`` and ``bench-host-2``: the fake accelerator driver
  of both services reports one card of 16 accelerators per host, and 20
  boots need more than one card;
* the service: 17.0.0 as compare.py runs it (compare_services.Existing:
  conductor, its WSGI application under gunicorn 2 × 4, noauth) with an
  agent per host and its ``[nova]`` pointed at the real nova-api; or
  Cyborg as ``tools/quickstart.sh start --rabbit`` configures it, with
  the fake driver instead of the simulated sysfs drivers and an agent per
  host.

It creates the device profile ``resources:FPGA=1,
trait:CUSTOM_FAKE_DEVICE=required`` (what both fake drivers report) and a
flavor naming it, lifts Nova's default quota of 10 instances, boots and
deletes one server as a warm-up, then for each ``--concurrency`` boots
that many servers at once (rounds of them until ``--samples`` boots are
measured), waits until each is ACTIVE or ERROR, and deletes them at
once, waiting until each is gone. Times are
the client's, from ``POST /servers`` to ACTIVE and from ``DELETE`` to a
404, seen by one poller listing ``/servers/detail`` every 0.25 s. The
time Nova waits for Cyborg comes from Nova's logs: from nova-conductor's
"Calling Cyborg to get ARQs" for a server to the last
``accelerator-request-bound`` event nova-api takes for it (create, match
and bind, the bind's work and its event).

The figures go to ``<state>/results.json``; ``--render`` prints the table
doc/source/contributor/performance.rst shows. Logs stay in
``<state>/<service>/``.
"""

import argparse
from concurrent import futures
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess  # nosec B404
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

from keystoneauth1 import exceptions as ks_exceptions  # noqa: E402
import nova_boots_report as report  # noqa: E402

try:
    from cyborg.demo import glance  # noqa: E402
    from cyborg.demo import nova  # noqa: E402
    from cyborg.demo import placement  # noqa: E402
    from cyborg.demo import quickstart  # noqa: E402

    import compare_services as bench  # noqa: E402
except ImportError as e:
    raise SystemExit('nova_boots.py runs in the quickstart\'s virtualenv: '
                     '.venvs/cyborg/bin/python tools/bench/nova_boots.py '
                     '(%s)' % e)

#: The compute hosts; each is an agent's host and a compute node's name.
HOSTS = (bench.HOST, bench.HOST + '-2')
PROFILE = 'bench-fake-fpga'
#: What both services' fake drivers report: FPGA with CUSTOM_FAKE_DEVICE.
GROUP = {'resources:FPGA': '1', 'trait:CUSTOM_FAKE_DEVICE': 'required'}
ACCELERATORS_PER_HOST = 16
PORT_NAMES = ('api', 'placement', 'glance', 'nova', 'neutron', 'keystone')
POLL = 0.25
#: Where 17.0.0's API is mounted.
PREFIX = '/accelerator'
log = bench.log


# --- RabbitMQ ---------------------------------------------------------------

def _rabbitmqctl(*args):
    # The broker's own command, to make and drop our virtual hosts.
    return subprocess.run(  # nosec B603 B607
        ('rabbitmqctl', '-q') + args, capture_output=True,
        timeout=60).returncode


def fresh_vhost(base_url, name):
    """An empty virtual host ``name``: its transport URL."""
    _rabbitmqctl('delete_vhost', name)
    if _rabbitmqctl('add_vhost', name) or _rabbitmqctl(
            'set_permissions', '-p', name, 'guest', '.*', '.*', '.*'):
        raise SystemExit('cannot make RabbitMQ virtual host %s' % name)
    return urllib.parse.urlsplit(base_url)._replace(
        path='/' + name).geturl()


# --- the services -----------------------------------------------------------

def _agent_conf(state, host, ours):
    """The config file that makes an agent serve ``host``."""
    path = os.path.join(state, 'agent-%s.conf' % host)
    lines = ['[DEFAULT]', 'host = %s' % host]
    if ours:
        lines += ['[agent]', 'resource_provider_name = %s' % host]
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return path


class Existing(bench.Existing):
    """17.0.0 as compare.py runs it, an agent per host, the real Nova.

    Its ``[nova]`` is the ``nova`` port: the real nova-api here. Placement
    and Nova are the :class:`Cloud`'s, so nothing registers the hosts. Its
    API is served under ``/accelerator``, as devstack's uwsgi mounts it:
    its version documents link to ``<host>/accelerator/v2`` whatever the
    mount, and Nova's SDK adapter follows that link. Nova's requests get
    the roles Keystone would give them (tools/bench/legacy_nova_wsgi.py).
    """

    def __init__(self, state, ports, rabbit, venv):
        super().__init__(state, ports, rabbit, venv)
        self.api = 'http://127.0.0.1:%d%s/v2' % (ports['api'], PREFIX)

    def start(self):
        conf = self.prepare()
        self.create_schema(conf)
        bin_ = os.path.join(self.venv, 'bin')
        self.processes.start('conductor',
                             [os.path.join(bin_, 'cyborg-conductor')] + conf)
        for host in HOSTS:
            self.processes.start('agent-' + host, [
                os.path.join(bin_, 'cyborg-agent')] + conf + [
                '--config-file', _agent_conf(self.state, host, False)])
        self.processes.start('api', [
            os.path.join(bin_, 'gunicorn')] + bench.GUNICORN + [
            '--bind', '127.0.0.1:%d' % self.ports['api'],
            '--chdir', self.state, '--pythonpath', HERE,
            'legacy_nova_wsgi:application'],
            env=dict(os.environ, CYBORG_BENCH_CONFIG=conf[1],
                     SCRIPT_NAME=PREFIX))


class Ours:
    """Cyborg configured as the quickstart's ``--rabbit`` shape.

    The quickstart's config file, then one that enables the fake driver
    only, then one per agent naming its host.
    """

    name = 'ours'

    def __init__(self, state, ports, rabbit):
        self.state = state
        self.rabbit = rabbit
        self.api = 'http://127.0.0.1:%d/v2' % ports['api']
        self.quickstart = quickstart.Quickstart(state, ports)
        self.processes = bench._Processes(os.path.join(state, 'logs'))

    def start(self):
        shutil.rmtree(self.state, ignore_errors=True)
        os.makedirs(self.state)
        self.quickstart.prepare(self.rabbit)
        fake = os.path.join(self.state, 'fake-driver.conf')
        with open(fake, 'w') as f:
            f.write('[agent]\nenabled_drivers = fake_driver\n')
        conf = ['--config-file', self.quickstart.conf, '--config-file', fake]

        def console(module):
            return [sys.executable, '-c', 'import sys; from cyborg.cmd.%s '
                    'import main; sys.exit(main())' % module] + conf
        # This tree's programs, as the quickstart runs them.
        subprocess.run(console('dbsync') + ['upgrade'],  # nosec B603
                       check=True, capture_output=True, cwd=ROOT)
        self.processes.start('conductor', console('conductor'))
        for host in HOSTS:
            self.processes.start('agent-' + host, console('agent') + [
                '--config-file', _agent_conf(self.state, host, True)])
        self.processes.start('api', console('api'))

    def alive(self):
        self.processes.alive()

    def stop(self):
        self.processes.stop()


class Cloud:
    """Placement, the image service and Nova with two compute hosts."""

    def __init__(self, state, ports, nova_rabbit, nova_venv, cyborg_url):
        self.state = state
        self.placement_url = 'http://127.0.0.1:%d' % ports['placement']
        self.glance = glance.Glance(os.path.join(state, 'glance'),
                                    ports['glance'], quickstart.GLANCE_VENV)
        self.ports = ports
        self.processes = bench._Processes(os.path.join(state, 'logs'))
        self.nova = nova.NovaServices(
            os.path.join(state, 'nova'), nova_venv,
            {'api': ports['nova'], 'neutron': ports['neutron']},
            self.placement_url, cyborg_url, self.glance.url, nova_rabbit,
            HOSTS[0])
        self.nova_processes = bench._Processes(self.nova.path('logs'))
        self.image = None

    def alive(self):
        self.processes.alive()
        self.nova_processes.alive()

    def start(self):
        self.glance.start()
        self.image = glance.upload(self.glance.client(), b'a bench disk',
                                   'bench-disk')
        self.processes.start('placement', [
            sys.executable, '-m', 'cyborg.demo.placement', '--port',
            str(self.ports['placement']), '--db', 'sqlite:///%s' %
            os.path.join(self.state, 'placement.sqlite')])
        os.makedirs(self.nova.state, exist_ok=True)
        self.nova.setup()
        bench._wait_placement(self.placement_url, alive=self.alive)
        for name, argv in self.nova.commands():
            self.nova_processes.start(name, argv, env=self.nova.env())
        # The second host: its own name, node and state (the node's id).
        second = self.nova.path('compute-2')
        os.makedirs(second, exist_ok=True)
        conf = os.path.join(second, 'nova.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nhost = %s\nstate_path = %s\n' % (
                HOSTS[1], second))
        self.nova_processes.start('nova-compute-2', [
            os.path.join(self.nova.venv, 'bin', 'python'),
            self.nova.path('nova_runner.py'), 'compute', '--config-file',
            self.nova.conf, '--config-file', conf], env=dict(
                self.nova.env(), CYBORG_NOVA_NODENAME=HOSTS[1],
                CYBORG_NOVA_RECORDS=os.path.join(second, 'records.jsonl')))
        compute = self.nova.adapter()

        def both():
            try:
                return len(compute.get('/os-hypervisors').json().get(
                    'hypervisors', [])) == len(HOSTS)
            except ks_exceptions.ConnectionError:
                return False  # not listening yet
        bench.wait('both compute nodes in Nova', both, 300, self.alive)
        # Maps them to cell1.
        self.nova.wait_for_compute()

    def stop(self):
        self.nova_processes.stop()
        self.processes.stop()
        self.glance.stop()


def _wait_devices(placement_url, alive, timeout=300):
    """Wait for a card under each compute node with all its accelerators."""
    adapter = placement.adapter(placement_url, '1.18')

    def cards():
        found = 0
        for rp in adapter.get('/resource_providers', params={
                'required': 'CUSTOM_FAKE_DEVICE'}).json().get(
                    'resource_providers', []):
            inventory = adapter.get('/resource_providers/%s/inventories' %
                                    rp['uuid']).json()['inventories']
            if (rp['parent_provider_uuid'] and inventory.get(
                    'FPGA', {}).get('total') == ACCELERATORS_PER_HOST):
                found += 1
        return found == len(HOSTS)
    bench.wait('the fake cards of %s in Placement' % ', '.join(HOSTS),
               cards, timeout, alive)


def _no_quota(compute):
    """Lift Nova's default quotas (10 instances) for every project."""
    response = compute.put('/os-quota-class-sets/default', json={
        'quota_class_set': {'instances': -1, 'cores': -1, 'ram': -1}})
    if response.status_code != 200:
        raise SystemExit('quotas: %d %s' % (response.status_code,
                                            response.text[:300]))


def _flavor(compute):
    response = compute.post('/flavors', json={'flavor': {
        'name': 'bench-accelerated', 'ram': 64, 'vcpus': 1, 'disk': 0}})
    if response.status_code != 200:
        raise SystemExit('flavor: %d %s' % (response.status_code,
                                            response.text[:300]))
    flavor = response.json()['flavor']['id']
    response = compute.post('/flavors/%s/os-extra_specs' % flavor, json={
        'extra_specs': {'accel:device_profile': PROFILE}})
    if response.status_code != 200:
        raise SystemExit('extra specs: %d %s' % (response.status_code,
                                                 response.text[:300]))
    return flavor


# --- boots and deletes ------------------------------------------------------

def _at_once(count, call):
    """Run ``call(index)`` in ``count`` threads released together."""
    barrier = threading.Barrier(count)

    def run(index):
        barrier.wait()
        return call(index)
    with futures.ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


def _poll(compute, pending, done, timeout):
    """Watch ``pending`` ({server: start}) until ``done`` says each ended.

    :param done: ``done(server or None) -> None, True or a fault``: the
        server's entry in ``/servers/detail`` (None once it is gone).
    :returns: ``{server: (seconds or None, fault or None)}``.
    """
    ended = {}
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        response = compute.get('/servers/detail')
        now = time.monotonic()
        if response.status_code == 200:
            listed = {s['id']: s for s in response.json()['servers']}
            for server, start in list(pending.items()):
                outcome = done(listed.get(server))
                if outcome is True:
                    ended[server] = (now - start, None)
                elif outcome:
                    ended[server] = (None, outcome)
                if outcome:
                    del pending[server]
        time.sleep(POLL)
    for server in pending:
        ended[server] = (None, 'not done within %d s' % timeout)
    return ended


def _active(server):
    if server is None:
        return 'gone while building'
    if server['status'] == 'ERROR':
        return 'ERROR: %s' % (server.get('fault') or {}).get(
            'message', 'no fault')
    return server['status'] == 'ACTIVE' or None


def _gone(server):
    if server is None:
        return True
    if server['status'] == 'ERROR' and not server.get(
            'OS-EXT-STS:task_state'):
        return 'ERROR: %s' % (server.get('fault') or {}).get(
            'message', 'no fault')
    return None


def boot(url, flavor, image, count, timeout):
    """Boot ``count`` servers at once: ``{server: (seconds, fault)}``."""
    def create(index):
        compute = nova.compute_adapter(url)
        start = time.monotonic()
        response = compute.post('/servers', json={'server': {
            'name': 'bench-%d' % index, 'imageRef': image,
            'flavorRef': flavor, 'networks': 'none'}})
        if response.status_code != 202:
            return None, start, 'POST %d: %s' % (response.status_code,
                                                 response.text[:200])
        return response.json()['server']['id'], start, None
    created = _at_once(count, create)
    pending = {server: start for server, start, _ in created if server}
    ended = _poll(nova.compute_adapter(url), pending, _active, timeout)
    for index, (server, _, fault) in enumerate(created):
        if server is None:
            ended['not-created-%d' % index] = (None, fault)
    return ended


def delete(url, servers, timeout):
    """Delete ``servers`` at once: ``{server: (seconds, fault)}``."""
    def remove(index):
        compute = nova.compute_adapter(url)
        start = time.monotonic()
        response = compute.delete('/servers/%s' % servers[index])
        return start, (None if response.status_code == 204 else
                       'DELETE %d: %s' % (response.status_code,
                                          response.text[:200]))
    started = _at_once(len(servers), remove)
    pending = {server: start for server, (start, fault)
               in zip(servers, started) if fault is None}
    ended = _poll(nova.compute_adapter(url), pending, _gone, timeout)
    for server, (_, fault) in zip(servers, started):
        if fault:
            ended[server] = (None, fault)
    return ended


def _figures(ended, waits=None):
    seconds = [s for s, fault in ended.values() if fault is None]
    faults = {}
    for _, fault in ended.values():
        if fault:
            faults[fault] = faults.get(fault, 0) + 1
    figures = {'n': len(ended), 'failed': len(ended) - len(seconds),
               'seconds': report.summary(seconds), 'faults': faults}
    if waits is not None:
        figures['cyborg_wait'] = report.summary(
            [waits[s] for s in ended if s in waits])
    return figures


def _log_lines(cloud, name):
    with open(cloud.nova.path('logs', name + '.log'),
              errors='replace') as f:
        return f.readlines()


def measure(cloud, flavor, concurrency, samples, timeout):
    url = cloud.nova.url
    image = cloud.image['id']
    log('   warm-up: one boot and delete')
    warm = boot(url, flavor, image, 1, timeout)
    servers = [s for s in warm if not s.startswith('not-')]
    if servers:
        delete(url, servers, timeout)
    (seconds, fault), = warm.values()
    if fault:
        raise SystemExit('the warm-up boot failed: %s' % fault)
    log('   warm-up boot: %.2f s' % seconds)
    results = {}
    for count in concurrency:
        booted, deleted = {}, {}
        rounds = max(1, -(-samples // count))
        for number in range(rounds):
            ended = boot(url, flavor, image, count, timeout)
            booted.update(ended)
            servers = [s for s in ended if not s.startswith('not-')]
            deleted.update(delete(url, servers, timeout) if servers else {})
            log('   c=%d round %d/%d: %d of %d active' % (
                count, number + 1, rounds, sum(
                    1 for s, _ in ended.values() if s is not None), count))
        waits = report.cyborg_waits(_log_lines(cloud, 'nova-conductor'),
                                    _log_lines(cloud, 'nova-api'))
        results['c%d' % count] = {'rounds': rounds,
                                  'boot': _figures(booted, waits),
                                  'delete': _figures(deleted)}
    return results


# --- a run ------------------------------------------------------------------

def _ports(base):
    return {name: base + index for index, name in enumerate(PORT_NAMES)}


def run_service(name, args, ports):
    state = os.path.join(args.state, name)
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(state)
    prefix = args.vhost_prefix
    nova_rabbit = fresh_vhost(args.rabbit, prefix + '-nova')
    cyborg_rabbit = fresh_vhost(args.rabbit, prefix + '-cyborg')
    if name == 'existing':
        service = Existing(os.path.join(state, 'cyborg'), ports,
                           cyborg_rabbit, args.existing_venv)
    else:
        service = Ours(os.path.join(state, 'cyborg'), ports, cyborg_rabbit)
    api = service.api
    cloud = Cloud(os.path.join(state, 'cloud'), ports, nova_rabbit,
                  args.nova_venv, api)
    load = {'before': os.getloadavg()}
    try:
        log('== %s: Placement, the image service and Nova %s' % (
            name, nova.NOVA_VERSION))
        cloud.start()
        log('== %s: the service' % name)
        service.start()

        def alive():
            cloud.alive()
            service.alive()
        client = bench.Client(api)
        bench.wait('the accelerator API', lambda: client.call(
            'GET', '/device_profiles')[0] == 200, 120, alive)
        _wait_devices(cloud.placement_url, alive)
        bench.expect(client, 'POST', '/device_profiles', [
            {'name': PROFILE, 'groups': [GROUP]}], 201)
        flavor = _flavor(cloud.nova.adapter())
        _no_quota(cloud.nova.adapter())
        log('== %s: booting' % name)
        results = measure(cloud, flavor, args.concurrency, args.samples,
                          args.timeout)
    finally:
        load['after'] = os.getloadavg()
        service.stop()
        cloud.stop()
        for vhost in ('-nova', '-cyborg'):
            _rabbitmqctl('delete_vhost', prefix + vhost)
    return results, load


def _commit():
    try:
        # git, for the commit the figures are of.
        return subprocess.run(  # nosec B603 B607
            ['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT,
            capture_output=True, text=True).stdout.strip() or None
    except OSError:
        return None


def run(args):
    bench.ensure_existing_venv(args.existing_venv)
    ports = _ports(args.port_base)
    results = {
        'date': datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec='seconds'),
        'commit': _commit(),
        'machine': {'cpus': os.cpu_count(), 'python': platform.
                    python_version()},
        'nova': nova.NOVA_VERSION, 'hosts': list(HOSTS),
        'device_profile': GROUP, 'samples': args.samples,
        'cyborg_wait_from': 'nova-conductor "Calling Cyborg to get ARQs" '
                            'to the last accelerator-request-bound event '
                            'in nova-api\'s log',
        'services': {}, 'load_average': {}}
    for name in args.services:
        results['services'][name], results['load_average'][name] = (
            run_service(name, args, ports))
        with open(os.path.join(args.state, 'results.json'), 'w') as f:
            json.dump(results, f, indent=2)
    results['goal'] = report.goal(results)
    with open(os.path.join(args.state, 'results.json'), 'w') as f:
        json.dump(results, f, indent=2)
    return results


def _terminate(signum, frame):
    # Stop what we started on the way out.
    raise SystemExit('terminated (signal %d)' % signum)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rabbit', default='rabbit://guest:guest@'
                        '127.0.0.1:5672/',
                        help='RabbitMQ; the virtual hosts are made on it')
    parser.add_argument('--vhost-prefix', default='nova-boots')
    parser.add_argument('--state', default='/tmp/nova-boots')
    parser.add_argument('--port-base', type=int, default=52700,
                        help='the services use this port and the next %d' %
                        (len(PORT_NAMES) - 1))
    parser.add_argument('--services', nargs='+',
                        default=[n for n, _ in report.SERVICES],
                        choices=[n for n, _ in report.SERVICES])
    parser.add_argument('--concurrency', type=int, nargs='+',
                        default=[1, 20])
    parser.add_argument('--samples', type=int, default=5,
                        help='boots measured per concurrency, at least')
    parser.add_argument('--timeout', type=int, default=300,
                        help='seconds a boot or a delete may take')
    parser.add_argument('--nova-venv', default=nova.VENV)
    parser.add_argument('--existing-venv', default=os.path.join(
        '.venvs', 'openstack-cyborg-17.0.0-bench'))
    parser.add_argument('--render', metavar='RESULTS',
                        help='print the table of a results.json and stop')
    args = parser.parse_args()
    if args.render:
        with open(args.render) as f:
            results = json.load(f)
    else:
        if max(args.concurrency) > ACCELERATORS_PER_HOST * len(HOSTS):
            parser.error('at most %d accelerators: one boot each' % (
                ACCELERATORS_PER_HOST * len(HOSTS)))
        signal.signal(signal.SIGTERM, _terminate)
        os.makedirs(args.state, exist_ok=True)
        results = run(args)
    print(report.table(results))
    for line in report.verdict_lines(results):
        print(line)


if __name__ == '__main__':
    main()
