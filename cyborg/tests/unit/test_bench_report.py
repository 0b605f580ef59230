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
"""The report of tools/bench/compare.py, rendered from given figures, and
its memory figures (tools/bench/compare_memory.py)."""

import importlib.util
import os
import pathlib
import signal
import subprocess  # nosec B404
import sys

import docutils.core
import docutils.utils

from cyborg.tests import base

ROOT = pathlib.Path(__file__).resolve().parents[3]
REPORT = ROOT / 'tools' / 'bench' / 'compare_report.py'
MEMORY = ROOT / 'tools' / 'bench' / 'compare_memory.py'


def _module(path=REPORT):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _call(rps, p50=10.0, p99=20.0, c=8, errors=0):
    return {'c': c, 'rps': rps, 'p50': p50, 'p99': p99, 'errors': errors,
            'requests': int(rps * 10), 'load_cpu': 0.1}


def _memory(api, conductor, agent):
    # PSS: half the RSS.
    figures = {name: {'rest': mib, 'load': mib * 1.5, 'pss_rest': mib / 2,
                      'pss_load': mib * 0.75} for name, mib in
               (('api', api), ('conductor', conductor), ('agent', agent))}
    total = api + conductor + agent
    figures['all'] = {'rest': total, 'load': 1.5 * total,
                      'pss_rest': total / 2, 'pss_load': 0.75 * total}
    return figures


def _steps(ms):
    """Bind steps of ``ms`` each: its wall time, half of it in the API."""
    names = ('create', 'bind', 'event', 'unbind', 'delete')
    steps = {name: {'wall': ms, 'api': ms / 2, 'conductor': ms / 4,
                    'agent': 0.0, 'RabbitMQ': 0.5, 'MariaDB': 1.0,
                    'load': 0.25} for name in names}
    steps['cycle'] = {key: sum(steps[name][key] for name in names)
                      for key in steps['create']}
    return steps


def _results():
    existing = {'create_profile': _call(20, c=4), 'list_profiles': _call(4),
                'get_profile': _call(8), 'create_arq': _call(12, c=4),
                'bind_c1': _call(0.8, c=1),
                'bind_c4': _call(0.8, c=4, errors=2),
                'bind_c1_arqs': _call(0.4, c=1)}
    # Ours: 10× the existing service on every call but the list (5×)...
    rabbit = {key: dict(call, rps=call['rps'] * 10, errors=0)
              for key, call in existing.items()}
    rabbit['list_profiles']['rps'] = 20
    # ... whose p99 is 5× its p50.
    rabbit['list_profiles']['p99'] = 50.0
    all_in_one = {key: dict(call, rps=call['rps'] * 0.9)
                  for key, call in rabbit.items()}
    return {
        'meta': {'date': '2026-11-27 02:00 UTC', 'machine': 'a CPU',
                 'commit': 'abc1234', 'duration': 10,
                 'load_generator': 'wrk', 'load_cpu': 0.05},
        'cpus': 2, 'api_workers_default': 2, 'list_bytes': 82000,
        'step_cycles': 200,
        'instance_arqs': {'2000': {'p50': 2.5}, '100000': {'p50': 7.25}},
        'shapes': {
            'existing': {'calls': existing,
                         'memory': _memory(256, 214, 206),
                         'bind_steps': _steps(40)},
            'rabbit': {'calls': rabbit, 'memory': _memory(100, 120, 150),
                       'bind_steps': _steps(8)},
            'all_in_one': {'calls': all_in_one,
                           'memory': {'all': {'rest': 150, 'load': 200}}},
            'bare': {'calls': {'list_profiles': _call(100)}},
        },
    }


class TestCompareReport(base.TestCase):

    def setUp(self):
        super().setUp()
        self.report = _module()

    def test_targets_are_checked_on_the_figures(self):
        met = {name: (measured, ok)
               for name, measured, ok in self.report.targets(_results())}
        self.assertEqual(('5.0×', False),
                         met['list 200 device profiles ≥10× existing'])
        self.assertEqual(('10.0×', True),
                         met['get a profile by name ≥10× existing'])
        self.assertEqual(('0', True), met['bind cycle, c=4: 0 errors'])
        self.assertEqual(('5.0×', False),
                         met['list 200 profiles: p99 ≤ 4× p50'])
        self.assertEqual(('10.0×', True),
                         met['bind cycle, c=1 ≥3× existing'])
        self.assertEqual(('10.0×', True),
                         met['create an ARQ ≥2× existing'])
        self.assertEqual(('2.50 ms', True), met[
            "an instance's ARQs p50 ≤ 5 ms at 2,000 ARQs"])
        self.assertEqual(('7.25 ms', False), met[
            "an instance's ARQs p50 ≤ 5 ms at 100,000 ARQs"])
        self.assertEqual(('worst 4.5×', True), met[
            'all-in-one at least as fast as existing on every call'])
        self.assertEqual(('2', True), met[
            'cyborg-api: one worker per CPU by default'])
        self.assertEqual(('50 of 128 MiB', True),
                         met['api PSS at rest ≤ 0.6× existing'])
        self.assertEqual(('112 of 154 MiB', False),
                         met['agent PSS under load ≤ 0.6× existing'])

    def test_missing_figures_are_not_measured(self):
        results = _results()
        del results['shapes']['all_in_one']
        del results['instance_arqs']
        met = {name: (measured, ok)
               for name, measured, ok in self.report.targets(results)}
        self.assertEqual(('n/a', None), met[
            'all-in-one at least as fast as existing on every call'])
        self.assertNotIn("an instance's ARQs p50 ≤ 5 ms at 2,000 ARQs", met)
        self.assertIn('| not measured', self._text(results))

    def _text(self, results):
        text = self.report.render(results)
        # Each table row flattened onto one line, prose unwrapped.
        return text.replace('\n     - ', ' | ').replace(
            '\n   * - ', '\n').replace('\n', ' ')

    def test_tables_hold_the_figures(self):
        text = self._text(_results())
        self.assertIn('list 200 device profiles (c=8) | 4.0 (10.0 / 20.0) | '
                      '20.0 (10.0 / 50.0) | 18.0 (10.0 / 50.0) | '
                      '100 (10.0 / 20.0) | 5.0×', text)
        self.assertIn('bind cycle (c=4) | 0.8 (10.0 / 20.0), 2 errors | '
                      '8.0 (10.0 / 20.0)', text)
        rss, pss = text.split('Memory, resident set (RSS):')[1].split(
            'Memory, proportional set (PSS):')
        self.assertIn('api | 256 / 384 | 100 / 150 | —', rss)
        self.assertIn('all of them | 676 / 1014 | 370 / 555 | 150 / 200',
                      rss)
        self.assertIn('api | 128 / 192 | 50 / 75 | —', pss)
        # The all-in-one's figures of this run have no PSS.
        self.assertIn('all of them | 338 / 507 | 185 / 278 | —', pss)
        self.assertIn('The list of 200 profiles is 82,000 bytes', text)
        self.assertIn('list 200 device profiles ≥10× existing | 5.0× | '
                      '**no**', text)

    def test_steps_of_a_bind_cycle_per_process(self):
        results = _results()
        results['step_cycles'] = 150
        text = self._text(results)
        self.assertIn('Where a bind cycle goes, 150 cycles one at a time',
                      text)
        existing, ours = text.split(
            'openstack-cyborg 17.0.0:  .. list-table::')[1].split(
                'Cyborg, --rabbit:  .. list-table::')
        self.assertIn('step | wall | API | conductor | agent | RabbitMQ | '
                      'MariaDB | load generator', existing)
        self.assertIn('bind | 40.00 | 20.00 | 10.00 | 0.00 | 0.50 | 1.00 | '
                      '0.25', existing)
        self.assertIn('cycle | 200 | 100 | 50.00 | 0.00 | 2.50 | 5.00 | '
                      '1.25', existing)
        self.assertIn('cycle | 40.00 | 20.00 | 10.00 |', ours)
        # A shape measured without them (an older run) has no table.
        del results['shapes']['rabbit']['bind_steps']
        self.assertNotIn('Cyborg, --rabbit:  .. list-table::',
                         self._text(results))

    def test_the_database_is_named(self):
        results = _results()
        self.assertIn('Cyborg --rabbit on SQLite files,', self._text(results))
        results['meta']['database'] = 'MariaDB'
        self.assertIn('Cyborg --rabbit on MariaDB,', self._text(results))

    def test_the_report_is_valid_restructuredtext(self):
        text = self.report.render(_results())
        # Warnings and errors raise; tables of unequal rows are errors.
        docutils.core.publish_doctree(text, settings_overrides={
            'halt_level': docutils.utils.Reporter.WARNING_LEVEL,
            'report_level': docutils.utils.Reporter.WARNING_LEVEL})
        self.assertEqual([], [line for line in text.splitlines()
                              if len(line) > 79 and
                              not line.startswith('   ')])


class TestCompareMemory(base.TestCase):

    def test_pss_counts_pages_of_forked_processes_once(self):
        compare_memory = _module(MEMORY)
        # 64 MiB written before the fork: resident in both processes.
        proc = subprocess.Popen(  # nosec B603
            [sys.executable, '-c', 'import os, sys, time\n'
             'data = b"x" * (64 << 20)\n'
             'if os.fork():\n'
             '    print("forked", flush=True)\n'
             'time.sleep(60)\n'], stdout=subprocess.PIPE, text=True,
            start_new_session=True)
        self.addCleanup(proc.wait)
        self.addCleanup(os.killpg, proc.pid, signal.SIGKILL)
        self.addCleanup(proc.stdout.close)
        self.assertEqual('forked\n', proc.stdout.readline())
        figures = compare_memory.memory({'service': [proc.pid]})
        service = figures['service']
        self.assertEqual(service, figures['all'])
        self.assertEqual({'rest', 'pss_rest'}, set(service))
        # The child is found through its parent, and counted.
        self.assertGreater(service['rest'], 128)
        self.assertLess(service['pss_rest'], service['rest'] - 50)
        self.assertGreater(service['pss_rest'], 64)
