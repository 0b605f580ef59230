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
"""A ``cyborg-agent`` process against a conductor over RabbitMQ.

The conductor is a stand-in RPC endpoint in this process that answers
``compute_node_rp`` and records the reports; the agent reads a simulated
sysfs tree. Each test uses its own exchange, so tests may run in parallel
on one RabbitMQ.
"""

import os
import signal
import socket
import urllib.parse
import uuid

import fixtures
from oslo_messaging import conffixture
import testtools

from cyborg.agent import rpcapi
from cyborg.common import rpc
from cyborg import exception
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional
from cyborg.tests import privsep_helper
from cyborg.tests import stand_ins
from cyborg.tests import sysfs_tree
from cyborg.tests.unit.agent import test_hotplug

GPU = '0000:3b:00.0'
MDEV = 'b1d7d1f2-5a9e-4d8e-9f0a-1c2b3d4e5f60'


def _rabbit_reachable():
    url = urllib.parse.urlsplit(functional.RABBIT_URL)
    try:
        socket.create_connection((url.hostname, url.port or 5672), 2).close()
    except OSError:
        return False
    return True


@testtools.skipUnless(_rabbit_reachable(),
                      'RabbitMQ is not reachable at %s' %
                      functional.RABBIT_URL)
class TestAgentProcess(base.TestCase):

    def setUp(self):
        super().setUp()
        suffix = uuid.uuid4().hex[:12]
        self.host = 'agent-%s' % suffix
        self.exchange = 'cyborg-test-%s' % suffix
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.tree = self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('intel_fpga', '0000:5e:00.0', dict(vfs=2)),
            ('nvidia_gpu', GPU, dict(mdev_types={'nvidia-222': 4})),
        ])).tree
        self.useFixture(conffixture.ConfFixture(self.conf.conf))
        self.conf.config(transport_url=functional.RABBIT_URL,
                         control_exchange=self.exchange)
        self.useFixture(fixtures.MonkeyPatch(
            'cyborg.common.rpc.TRANSPORT', None))
        rpc.init(self.conf.conf)
        self.addCleanup(rpc.cleanup)
        self.log_file = os.path.join(self.tmp, 'agent.log')

    def _conf_file(self, **agent_opts):
        agent = {'enabled_drivers': 'fake_driver,intel_fpga_driver,'
                                    'nvidia_gpu_driver',
                 'sysfs_root': self.tree.root, 'report_interval': 3600,
                 'placement_wait_interval': 1,
                 'resource_provider_name': 'compute-' + self.host,
                 'enable_hotplug_monitor': False}
        agent.update(agent_opts)
        path = os.path.join(self.tmp, 'cyborg.conf')
        with open(path, 'w') as f:
            f.write('[DEFAULT]\nhost = %s\ntransport_url = %s\n'
                    'control_exchange = %s\ndebug = true\n'
                    'state_path = %s\n'
                    '[gpu_devices]\nenabled_vgpu_types = nvidia-222\n'
                    '[agent]\n' % (self.host, functional.RABBIT_URL,
                                   self.exchange, self.tmp))
            for key, value in agent.items():
                f.write('%s = %s\n' % (key, value))
            # mdevs are made through the sysfs daemon, without root here.
            f.write('\n'.join(privsep_helper.config_lines(path)))
        return path

    def _names(self):
        """The names the agent tries: its agents' topics are served."""
        return ('compute-' + self.host, self.host)

    def _start_agent(self, **agent_opts):
        self.agent = cyborg_fixtures.service_process(
            self, 'cyborg-agent', self._conf_file(**agent_opts), self.log_file)
        return self.agent.proc

    def _log(self):
        return self.agent.log()

    def test_waits_for_placement_then_reports_and_serves(self):
        node = 'compute-' + self.host
        conductor = self.useFixture(stand_ins.StandInConductor(
            not_found=1, known={node}, hosts=self._names())).endpoint
        proc = self._start_agent()
        (sent,) = conductor.wait_for_reports(1, timeout=60)
        # The option, then [DEFAULT] host; at the next check the option.
        self.assertEqual([(node, node), (self.host, self.host),
                          (node, node)], conductor.lookups)
        self.assertIn('Waiting for Placement to know compute node resource '
                      'provider %s or %s' % (node, self.host), self._log())
        # One line, without the traceback a remote error carries.
        self.assertNotIn('Traceback', self._log())
        # The host is known by its compute node's name: it reports and
        # serves under it.
        self.assertEqual(node, sent.hostname)
        self.assertEqual(
            ['FakeDevice', '0000:5e:00.0', GPU],
            [dep.name for dev in sent.devices for dep in dev.deployables])

        agent = rpcapi.AgentAPI()
        agent.create_mdev(self.context, node, MDEV, 'nvidia-222', GPU)
        self.assertEqual(MDEV, self.tree.read(
            GPU, 'mdev_supported_types/nvidia-222/create'))
        # Written by the agent's privileged sysfs daemon.
        self.assertIn('cyborg.privsep.sysfs_pctxt', self._log())
        self.assertIn('Spawned new privsep daemon', self._log())
        self.assertRaises(exception.MdevTypeNotEnabled, agent.create_mdev,
                          self.context, node, MDEV, 'nvidia-1', GPU)
        agent.remove_mdev(self.context, node, MDEV)

        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(60))

    @testtools.skipIf(test_hotplug.writable_pci_uevent() is None,
                      'needs root and a PCI device to announce')
    def test_hot_plugged_device_is_reported_at_once(self):
        conductor = self.useFixture(stand_ins.StandInConductor(
            hosts=self._names())).endpoint
        self._start_agent(enable_hotplug_monitor=True)
        conductor.wait_for_reports(1, timeout=60)
        self.assertIn('Listening for PCI hot-plug events', self._log())
        # The device appears in the simulated tree; the kernel event that
        # announces it comes from a real device of this machine. Other
        # work on the machine may cause more events, and so more reports:
        # the test waits for any report that shows the new device (the
        # periodic report is an hour away).
        self.tree.intel_fpga('0000:86:00.0', product='0b30')
        with open(test_hotplug.writable_pci_uevent(), 'w') as f:
            f.write('change')
        conductor.wait_for_reports(1, timeout=60, where=lambda report: (
            '0000:86:00.0' in [dep.name for dev in report.devices
                               for dep in dev.deployables]))

    def test_missing_driver_fails_fast(self):
        proc = self._start_agent(enabled_drivers='fake_driver,gpu')
        self.assertEqual(1, proc.wait(60))
        self.assertIn('cyborg-agent cannot start: Accelerator driver gpu is '
                      'not installed', self._log())

    def test_gives_up_when_placement_never_knows_the_host(self):
        self.useFixture(stand_ins.StandInConductor(
            not_found=10, hosts=self._names()))
        proc = self._start_agent(placement_wait_retries=1)
        self.assertEqual(1, proc.wait(60))
        self.assertIn('Placement knows no compute node resource provider '
                      'named compute-%s or %s' % (self.host, self.host),
                      self._log())
