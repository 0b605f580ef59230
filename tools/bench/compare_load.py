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
"""The load tools/bench/compare.py puts on a service.

wrk (tools/bench/wrk.lua) for the HTTP calls, and Python threads for
Nova's life of an ARQ (create, bind, wait for the event, unbind,
delete), each with its throughput, latencies and the load generator's
CPU; one cycle at a time, what each step costs each process.
"""

import http.client
import json
import os
import resource
import secrets
import statistics
import subprocess  # nosec B404
import threading
import time
import uuid

import compare_memory
from compare_report import STEPS
import compare_services as bench

#: The wrk script, beside this file.
WRK_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          'wrk.lua')


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
         '--timeout', '30s', '-s', WRK_SCRIPT, url],
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


#: Processes that serve every shape, by their command name in /proc.
SHARED = {'RabbitMQ': 'beam.smp', 'MariaDB': 'mariadbd'}


def _shared_pids():
    """{label: pids} of the processes of SHARED running now."""
    found = {label: [] for label in SHARED}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open('/proc/%s/comm' % entry) as f:
                    comm = f.read().strip()
            except OSError:
                continue
            for label, name in SHARED.items():
                if comm == name:
                    found[label].append(int(entry))
    return found


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

    def cycle(self, client, step=None):
        """One cycle; its seconds.

        :param step: called with each step's name as it ends (STEPS).
        """
        step = step or (lambda name: None)
        instance = str(uuid.uuid4())
        start = time.perf_counter()
        arqs = bench.expect(client, 'POST', '/accelerator_requests',
                            {'device_profile_name': self.profile},
                            201)['arqs']
        arq = arqs[0]['uuid']
        step('create')
        try:
            bench.expect(client, 'PATCH', '/accelerator_requests', {arq: [
                {'op': 'add', 'path': '/hostname', 'value': self.host},
                {'op': 'add', 'path': '/device_rp_uuid',
                 'value': self.rp_uuid},
                {'op': 'add', 'path': '/instance_uuid',
                 'value': instance}]}, 202)
            step('bind')
            events = self.nova.wait_for(instance, 1, 60)
            if not events or events[0]['status'] != 'completed':
                raise RuntimeError('bind of %s: %s' % (arq, events))
            step('event')
            bench.expect(client, 'PATCH', '/accelerator_requests', {arq: [
                {'op': 'remove', 'path': path} for path in
                ('/hostname', '/device_rp_uuid', '/instance_uuid')]}, 202)
            step('unbind')
        finally:
            bench.expect(client, 'DELETE',
                         '/accelerator_requests?arqs=' + arq, None, 204)
        step('delete')
        return time.perf_counter() - start

    def steps(self, cycles, services):
        """``cycles`` cycles one after the other: what each step costs.

        Between two steps, the CPU seconds of every process of each
        service (its workers included), of RabbitMQ and MariaDB, and of
        this thread (the load generator) are read from /proc; at one
        cycle at a time, what a step costs is what those processes spent
        while it ran.

        :param services: {name: pids} of the shape's services.
        :returns: {step: {'wall': ms, process group: CPU ms}}, means per
            cycle, ``'cycle'`` their sum.
        """
        groups = {name: compare_memory.tree(pids)
                  for name, pids in services.items()}
        groups.update(_shared_pids())
        spent = {name: {key: 0.0 for key in ['wall', 'load', *groups]}
                 for name in STEPS}

        def cpu():
            return {key: sum(compare_memory.cpu_seconds(pid) for pid in pids)
                    for key, pids in groups.items()}

        def started():
            # The clocks last, so that reading /proc counts in no step.
            processes = cpu()
            return processes, time.thread_time(), time.perf_counter()
        client = bench.Client(self.api)

        def step(name):
            nonlocal last
            wall, load = time.perf_counter(), time.thread_time()
            processes = cpu()
            for key, value in (('wall', wall - last[2]),
                               ('load', load - last[1]),
                               *((key, processes[key] - last[0][key])
                                 for key in groups)):
                spent[name][key] += value * 1000 / cycles
            last = started()
        last = started()
        for _ in range(cycles):
            self.cycle(client, step)
        spent['cycle'] = {key: sum(spent[name][key] for name in STEPS)
                          for key in spent[STEPS[0]]}
        return spent

    def _run(self, deadline):
        client = bench.Client(self.api)
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
            bench.log('  bind cycle failed: %s' % failure)
        return {'c': connections, 'requests': len(self.times),
                'rps': len(self.times) / wall,
                'errors': len(self.failures), 'p50': cuts[49],
                'p90': cuts[89], 'p99': cuts[98],
                'mean': statistics.fmean(ms),
                'load_cpu': (time.process_time() - cpu) / wall}
