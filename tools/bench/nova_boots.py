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
fresh databases, it starts (nova_boots_services.py):

* the demo Placement of this tree and the real Glance (``.venvs/glance``,
  tools/setup-client-venvs.sh);
* Nova 34 (:class:`cyborg_quickstart.nova.NovaServices`: nova-api, conductor,
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import nova_boots_report as report  # noqa: E402

try:
    from cyborg_quickstart import nova  # noqa: E402

    import compare_services as bench  # noqa: E402
    import nova_boots_services  # noqa: E402
except ImportError as e:
    raise SystemExit('nova_boots.py runs in the quickstart\'s virtualenv: '
                     '.venvs/cyborg/bin/python tools/bench/nova_boots.py '
                     '(%s)' % e)

PROFILE = 'bench-fake-fpga'
#: What both services' fake drivers report: FPGA with CUSTOM_FAKE_DEVICE.
GROUP = {'resources:FPGA': '1', 'trait:CUSTOM_FAKE_DEVICE': 'required'}
PORT_NAMES = ('api', 'placement', 'glance', 'nova', 'neutron', 'keystone')
POLL = 0.25
log = bench.log


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
    nova_rabbit = nova_boots_services.fresh_vhost(args.rabbit,
                                                  prefix + '-nova')
    cyborg_rabbit = nova_boots_services.fresh_vhost(args.rabbit,
                                                    prefix + '-cyborg')
    if name == 'existing':
        service = nova_boots_services.Existing(
            os.path.join(state, 'cyborg'), ports, cyborg_rabbit,
            args.existing_venv)
    else:
        service = nova_boots_services.Ours(os.path.join(state, 'cyborg'),
                                           ports, cyborg_rabbit)
    api = service.api
    cloud = nova_boots_services.Cloud(os.path.join(state, 'cloud'), ports,
                                      nova_rabbit, args.nova_venv, api)
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
        nova_boots_services.wait_devices(cloud.placement_url, alive)
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
            nova_boots_services.rabbitmqctl('delete_vhost', prefix + vhost)
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
        'nova': nova.NOVA_VERSION, 'hosts': list(nova_boots_services.HOSTS),
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
        accelerators = (nova_boots_services.ACCELERATORS_PER_HOST *
                        len(nova_boots_services.HOSTS))
        if max(args.concurrency) > accelerators:
            parser.error('at most %d accelerators: one boot each' %
                         accelerators)
        signal.signal(signal.SIGTERM, _terminate)
        os.makedirs(args.state, exist_ok=True)
        results = run(args)
    print(report.table(results))
    for line in report.verdict_lines(results):
        print(line)


if __name__ == '__main__':
    main()
