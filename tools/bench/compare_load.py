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
CPU.
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
        arqs = bench.expect(client, 'POST', '/accelerator_requests',
                            {'device_profile_name': self.profile},
                            201)['arqs']
        arq = arqs[0]['uuid']
        try:
            bench.expect(client, 'PATCH', '/accelerator_requests', {arq: [
                {'op': 'add', 'path': '/hostname', 'value': self.host},
                {'op': 'add', 'path': '/device_rp_uuid',
                 'value': self.rp_uuid},
                {'op': 'add', 'path': '/instance_uuid',
                 'value': instance}]}, 202)
            events = self.nova.wait_for(instance, 1, 60)
            if not events or events[0]['status'] != 'completed':
                raise RuntimeError('bind of %s: %s' % (arq, events))
            bench.expect(client, 'PATCH', '/accelerator_requests', {arq: [
                {'op': 'remove', 'path': path} for path in
                ('/hostname', '/device_rp_uuid', '/instance_uuid')]}, 202)
        finally:
            bench.expect(client, 'DELETE',
                         '/accelerator_requests?arqs=' + arq, None, 204)
        return time.perf_counter() - start

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
