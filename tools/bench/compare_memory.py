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
"""The memory of a service's processes, for tools/bench/compare.py.

Read from /proc for the given processes and all their descendants:
resident (RSS) and proportional (PSS, which counts a page that forked
processes share once), at rest and the peaks under load; and the CPU
time a process spent.
"""

import os
import threading


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


def tree(pids):
    """``pids`` and all their descendants."""
    tree = _children()
    todo, seen = list(pids), []
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.append(pid)
            todo.extend(tree.get(pid, ()))
    return seen


def cpu_seconds(pid):
    """User and system CPU seconds of one process so far; 0 once gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
    except OSError:
        return 0
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


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
               for pid in tree(pids)) / 1024


def pss_mib(pids):
    """Proportional set size of ``pids`` and their descendants, in MiB.

    A page that n processes share counts 1/n in each, so the sum counts
    it once: what the service costs the machine.
    """
    return sum(_kib('/proc/%d/smaps_rollup' % pid, 'Pss:')
               for pid in tree(pids)) / 1024


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
