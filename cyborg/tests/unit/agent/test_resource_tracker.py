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
"""The resource tracker against a stand-in conductor on fake://."""

import fixtures as fixtures_lib

from cyborg.agent import resource_tracker
from cyborg.conductor import rpcapi as conductor_rpcapi
from cyborg.drivers import base as drivers_base
from cyborg.drivers import report
from cyborg import exception
from cyborg.tests import base
from cyborg.tests import fixtures
from cyborg.tests import stand_ins
from cyborg.tests import sysfs_tree

HOST = [
    ('intel_fpga', '0000:5e:00.0', dict(vfs=2)),
    ('intel_qat', '0000:3d:00.0', dict(vfs=4)),
]


class BrokenDriver(drivers_base.Driver):
    name = 'broken_driver'

    def discover(self, pci_devices):
        raise RuntimeError('sysfs is on fire')


class TestResourceTracker(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tree = self.useFixture(
            sysfs_tree.SimulatedHost(self.conf, HOST)).tree
        self.useFixture(fixtures.RPC())
        self.conductor = self.useFixture(stand_ins.StandInConductor()).endpoint
        self.tracker = resource_tracker.ResourceTracker(
            'host1', drivers_base.load(['intel_fpga_driver',
                                        'intel_qat_driver']),
            conductor_rpcapi.ConductorAPI())

    def test_first_report(self):
        self.assertTrue(self.tracker.report())
        (sent,) = self.conductor.reports
        self.assertEqual('host1', sent.hostname)
        self.assertEqual(['FPGA', 'QAT'], [d.type for d in sent.devices])
        # One deployable per QAT VF.
        self.assertEqual([1] * 4, [dep.num_accelerators
                                   for dep in sent.devices[1].deployables])

    def test_unchanged_report_is_not_sent_again(self):
        self.assertTrue(self.tracker.report())
        self.assertFalse(self.tracker.report())
        self.assertEqual(1, len(self.conductor.reports))

    def test_changes_are_sent(self):
        self.tracker.report()
        self.tree.intel_qat('0000:3f:00.0')
        self.assertTrue(self.tracker.report())
        self.assertEqual(3, len(self.conductor.reports[-1].devices))
        self.tree.remove_pci('0000:3f:00.0')
        self.assertTrue(self.tracker.report())
        self.assertEqual(2, len(self.conductor.reports[-1].devices))

    def test_health_change_is_sent_on_the_pass_that_sees_it(self):
        self.tree.write('0000:5e:00.0', 'aer_dev_nonfatal',
                        'TOTAL_ERR_NONFATAL 4')
        self.tracker.report()
        self.assertEqual(['healthy', 'healthy'], [
            d.health for d in self.conductor.reports[-1].devices])
        self.tree.write('0000:5e:00.0', 'aer_dev_nonfatal',
                        'TOTAL_ERR_NONFATAL 6')
        self.assertTrue(self.tracker.report())
        fpga = self.conductor.reports[-1].devices[0]
        self.assertEqual(('unhealthy', ['0000:5e:00.0: 2 new non-fatal AER '
                                        'error(s), 6 in all']),
                         (fpga.health, fpga.health_reasons))
        # No new error since: healthy again, and that is sent too.
        self.assertTrue(self.tracker.report())
        self.assertEqual('healthy',
                         self.conductor.reports[-1].devices[0].health)
        self.assertFalse(self.tracker.report())

    def test_full_report_every_n_passes(self):
        self.conf.config(full_report_every=3, group='agent')
        sent = [self.tracker.report() for _ in range(7)]
        self.assertEqual([True, False, True, False, False, True, False],
                         sent)

    def test_forced_report(self):
        self.tracker.report()
        self.assertTrue(self.tracker.report(force=True))
        self.assertEqual(2, len(self.conductor.reports))

    def test_a_failing_driver_sends_nothing(self):
        self.tracker.drivers.append(BrokenDriver())
        error = self.assertRaises(exception.InvalidDriverReport,
                                  self.tracker.report)
        self.assertIn('broken_driver', str(error))
        self.assertIn('sysfs is on fire', str(error))
        self.assertEqual([], self.conductor.reports)

    def test_two_drivers_reporting_one_deployable(self):
        self.conf.config(device_spec=['{"address": "0000:3d:00.1"}'],
                         group='pci')
        self.tracker.drivers.extend(drivers_base.load(
            ['generic_pci_driver']))
        error = self.assertRaises(exception.InvalidDriverReport,
                                  self.tracker.report)
        self.assertIn('0000:3d:00.1 is also reported by intel_qat_driver',
                      str(error))

    def test_periodic_loop_and_trigger(self):
        self.conf.config(report_interval=3600, group='agent')
        self.tracker.start()
        self.addCleanup(self.tracker.stop)
        self.conductor.wait_for_reports(1)
        self.tree.intel_qat('0000:3f:00.0')
        self.tracker.trigger()
        reports = self.conductor.wait_for_reports(2)
        self.assertEqual(3, len(reports[-1].devices))

    def test_busy_host_is_reported_again_next_pass(self):
        # A conductor reconciling the host refuses the report: a warning,
        # no traceback, and the next pass sends it.
        log = self.useFixture(fixtures_lib.FakeLogger(
            name=resource_tracker.__name__))
        record = self.conductor.report_host
        refused = []

        def busy_once(context, host_report):
            if not refused:
                refused.append(host_report)
                raise exception.HostLeaseHeld(host='host1', owner='c1')
            record(context, host_report)
        self.conductor.report_host = busy_once
        self.conf.config(report_interval=1, group='agent')
        self.tracker.start()
        self.addCleanup(self.tracker.stop)
        self.conductor.wait_for_reports(1)
        self.assertIn('Device report not taken; the next pass is in 1 '
                      'seconds: Host host1 is being reconciled by c1',
                      log.output)
        self.assertNotIn('Traceback', log.output)


class TestCheck(base.TestCase):

    def _dep(self, rc='FPGA', traits=('CUSTOM_X',), handles=None, **kw):
        handles = [report.pci_handle('0000:01:00.0')] if handles is None \
            else handles
        return report.deployable('0000:01:00.0', 'd', rc, traits, handles,
                                 **kw)

    def _check(self, *deps):
        resource_tracker.check('d', [report.device(
            'FPGA', '8086', 'm', '0000:01:00.0', deps)])

    def test_valid(self):
        self._check(self._dep(traits=['HW_NIC_SRIOV', 'CUSTOM_A_1']))
        self._check(self._dep(rc='CUSTOM_QAT', traits=[]))

    def test_invalid(self):
        mdev_without_type = report.pci_handle('0000:01:00.0')
        mdev_without_type.attach_type = 'MDEV'
        for dep, message in (
                (self._dep(rc='BOGUS'), 'bad resource class'),
                (self._dep(traits=['NOT_A_TRAIT']), 'bad trait'),
                (self._dep(traits=['CUSTOM_lower']), 'bad trait'),
                (self._dep(parent_name='0000:02:00.0'), 'parent'),
                (self._dep(handles=[mdev_without_type]), 'asked_type')):
            error = self.assertRaises(exception.InvalidDriverReport,
                                      self._check, dep)
            self.assertIn(message, str(error))

    def test_counts_and_names(self):
        dep = self._dep()
        dep.num_accelerators = 2
        self.assertRaises(exception.InvalidDriverReport, self._check, dep)
        dep = self._dep()
        dep.driver_name = 'other'
        self.assertRaises(exception.InvalidDriverReport, self._check, dep)
        dep = self._dep()
        dep.attributes = dep.attributes + dep.attributes[:1]
        self.assertRaises(exception.InvalidDriverReport, self._check, dep)

    def test_fingerprint_follows_content(self):
        first, second = self._dep(), self._dep()
        self.assertEqual(resource_tracker.fingerprint(first),
                         resource_tracker.fingerprint(second))
        second.num_accelerators = 3
        self.assertNotEqual(resource_tracker.fingerprint(first),
                            resource_tracker.fingerprint(second))
