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
"""The figures of tools/bench/nova_boots.py: Nova's logs read, the goal
judged and the table rendered."""

import importlib.util
import pathlib

import docutils.core
import docutils.utils

from cyborg.tests import base

ROOT = pathlib.Path(__file__).resolve().parents[3]
REPORT = ROOT / 'tools' / 'bench' / 'nova_boots_report.py'
SERVER = '6a3c1d0e-8f4b-4c2a-9e1d-2b3c4d5e6f70'
OTHER = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0'
ARQ = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'


def _module():
    spec = importlib.util.spec_from_file_location(REPORT.stem, REPORT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _conductor(stamp, server):
    return ('%s 4242 DEBUG nova.conductor.manager [None req-1 admin admin] '
            'Calling Cyborg to get ARQs. dp_name=bench-fake-fpga '
            'instance=%s _create_and_bind_arqs /nova/conductor/manager.py:'
            '1887\n' % (stamp, server))


def _api(stamp, server):
    return ('%s 4343 INFO nova.api.openstack.compute.server_external_events'
            ' [None req-2 admin admin] Creating event accelerator-request-'
            'bound:%s for instance %s on bench-host\n' % (stamp, ARQ,
                                                          server))


def _dropped(stamp, server):
    return ('%s 4343 DEBUG nova.api.openstack.compute.server_external_'
            'events [req-3 req-4 admin admin] Unable to find a host for '
            'instance %s. Dropping event accelerator-request-bound create '
            '/nova/api/openstack/compute/server_external_events.py:145\n' % (
                stamp, server))


def _boot(p50, failed, n=20):
    figures = {'n': n, 'p50': p50, 'p99': p50 * 2, 'max': p50 * 2}
    return {'boot': {'n': n, 'failed': failed, 'seconds': figures,
                     'cyborg_wait': figures, 'faults': {}},
            'delete': {'n': n, 'failed': 0, 'seconds': figures,
                       'faults': {}}}


class TestNovaBootsReport(base.TestCase):

    def setUp(self):
        super().setUp()
        self.report = _module()

    def test_cyborg_waits_first_create_to_last_bound_event(self):
        conductor = [_conductor('2025-01-02 03:04:05.100', SERVER),
                     'unrelated line\n',
                     # A reschedule asks again; the first ask counts.
                     _conductor('2025-01-02 03:04:07.000', SERVER),
                     _conductor('2025-01-02 03:04:05.000', OTHER)]
        api = [_api('2025-01-02 03:04:05.600', SERVER),
               _api('2025-01-02 03:04:06.350', SERVER),
               # Bound before the server had a host: dropped, but here.
               _dropped('2025-01-02 03:04:05.500', OTHER)]
        self.assertEqual({SERVER: 1.25, OTHER: 0.5},
                         self.report.cyborg_waits(conductor, api))

    def test_percentile_interpolates(self):
        self.assertIsNone(self.report.percentile([], 0.5))
        self.assertEqual(2.5, self.report.percentile([4, 1, 2, 3], 0.5))
        self.assertAlmostEqual(
            19.81, self.report.percentile(list(range(1, 21)), 0.99))
        self.assertEqual({'n': 1, 'p50': 3.0, 'p99': 3.0, 'max': 3.0},
                         self.report.summary([3.0]))

    def test_goal(self):
        results = {'services': {
            'existing': {'c1': _boot(2.0, 0), 'c20': _boot(10.0, 3)},
            'ours': {'c1': _boot(0.1, 0), 'c20': _boot(2.0, 0)}}}
        goal = self.report.goal(results)
        self.assertEqual((0.05, True, True), (
            goal['c1']['cyborg_wait_share'], goal['c1']['share_met'],
            goal['c1']['failures_met']))
        self.assertEqual((0.2, False, True, 3), (
            goal['c20']['cyborg_wait_share'], goal['c20']['share_met'],
            goal['c20']['failures_met'], goal['c20']['failed_existing']))
        lines = self.report.verdict_lines(results)
        self.assertIn('c=20: ours waits 0.200', lines[1])
        self.assertIn('not met', lines[1])

    def test_table_is_valid_rst(self):
        results = {'services': {
            'existing': {'c20': _boot(10.0, 3), 'c1': _boot(2.0, 0, n=5)},
            'ours': {'c1': _boot(0.1, 0, n=5)}}}
        text = self.report.table(results)
        self.assertIn('3 of 20', text)
        self.assertLess(text.index('   * - openstack-cyborg 17.0.0\n'
                                   '     - 1\n'),
                        text.index('     - 20\n'))
        docutils.core.publish_doctree(text, settings_overrides={
            'report_level': docutils.utils.Reporter.WARNING_LEVEL,
            'halt_level': docutils.utils.Reporter.WARNING_LEVEL})
