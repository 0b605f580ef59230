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
"""The privileged daemons, started as the agent starts them.

Each context's ``helper_command`` runs oslo.privsep's helper without
``sudo`` and with no capabilities (the tests do not run as root), reading
a configuration file of its own as the agent's daemons do. The drivers'
helpers then reach the simulated sysfs tree and a stand-in vendor tool
through the daemons' sockets.
"""

import gc
import os
import threading
import warnings

import fixtures

from cyborg.drivers import fpga
from cyborg.drivers import mdev
from cyborg import exception
from cyborg import privsep
from cyborg.tests import base
from cyborg.tests import privsep_helper
from cyborg.tests import stand_ins
from cyborg.tests import sysfs_tree

GPU = '0000:3b:00.0'
MDEV = 'b1d7d1f2-5a9e-4d8e-9f0a-1c2b3d4e5f60'


# oslo.privsep's client leaves the pipe that carries a daemon's log, and
# its socket to the daemon, to the garbage collector, which warns about
# them: the tests start and stop the daemons where that warning is ignored.

def _start_daemons():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ResourceWarning)
        for context, _caps in privsep.CONTEXTS:
            context.set_client_mode(True)
            context.start()


def _stop_daemons():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ResourceWarning)
        for context, _caps in privsep.CONTEXTS:
            channel = context.channel
            context.stop()
            if channel is not None:
                channel.writer.writesock.close()
        gc.collect()
        # The log pipe's reader ends once the daemon is gone.
        for thread in threading.enumerate():
            if thread.name == 'fd_logger':
                thread.join(10)
        gc.collect()


class TestPrivsepDaemons(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tree = self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('nvidia_gpu', GPU, dict(mdev_types={'nvidia-222': 4}))])).tree
        # The tool reports the process that ran it, and exits with the
        # status the bitstream file names.
        self.tool = self.useFixture(stand_ins.StandInTool(
            'fpgaconf', 'import os; print(os.getppid(), file=sys.stderr); '
                        'sys.exit(int(open(args[-1]).read()))'))
        self.conf.config(fpgaconf_path=self.tool.path, group='fpga')
        self.downloads = self.useFixture(fixtures.TempDir()).path
        self.conf.config(download_dir=self.downloads, group='glance')
        self._daemons_read(self.tool.path)
        self.addCleanup(_stop_daemons)
        _start_daemons()

    def _daemons_read(self, fpgaconf_path):
        """Have the daemons started next read a file of their own."""
        conf_file = os.path.join(self.useFixture(fixtures.TempDir()).path,
                                 'cyborg.conf')
        with open(conf_file, 'w') as f:
            f.write('\n'.join([
                '[agent]', 'sysfs_root = %s' % self.tree.root,
                '[fpga]', 'fpgaconf_path = %s' % fpgaconf_path,
                '[glance]', 'download_dir = %s' % self.downloads, ''] +
                privsep_helper.config_lines(conf_file)))
        for context, _caps in privsep.CONTEXTS:
            self.conf.config(
                helper_command=privsep_helper.helper_command(conf_file),
                group=context.cfg_section)

    def test_mdev_written_by_the_sysfs_daemon(self):
        mdev.create(self.tree.root, GPU, 'nvidia-222', MDEV)
        self.assertEqual(MDEV, self.tree.read(
            GPU, 'mdev_supported_types/nvidia-222/create'))

        # FileNotFoundError comes back through the socket: nothing to do.
        mdev.remove(self.tree.root, MDEV)
        self.tree.mdev(MDEV, GPU, 'nvidia-222')
        mdev.remove(self.tree.root, MDEV)
        self.assertEqual('1', self.tree.read(GPU, MDEV + '/remove'))

    def test_sysfs_daemon_writes_only_below_its_own_root(self):
        other = self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('nvidia_gpu', GPU, dict(mdev_types={'nvidia-222': 4}))])).tree
        error = self.assertRaises(exception.MdevFailed, mdev.create,
                                  other.root, GPU, 'nvidia-222', MDEV)
        self.assertIn('is not [agent] sysfs_root', str(error))
        self.assertEqual('', other.read(
            GPU, 'mdev_supported_types/nvidia-222/create'))

    def _bitstream(self, name, status):
        path = os.path.join(self.downloads, name)
        with open(path, 'w') as f:
            f.write(str(status))
        return {'tool': 'fpgaconf', 'device': '0000:5e:00.0',
                'bitstream': path, 'partition': None}

    def test_vendor_tool_run_by_the_tool_daemon(self):
        fpga.run_tool(self._bitstream('good', 0), 'dep')
        self.assertEqual([['-S', '0x0000', '-B', '0x5e', '-D', '0x00', '-F',
                           '0x0', os.path.join(self.downloads, 'good')]],
                         self.tool.calls)
        error = self.assertRaises(exception.ProgrammingFailed,
                                  fpga.run_tool, self._bitstream('bad', 4),
                                  'dep')
        # The tool's parent is the daemon, not this process.
        status, parent = str(error).rsplit(': ', 1)
        self.assertIn('exited with status 4', status)
        self.assertNotEqual(os.getpid(), int(parent))

    def test_tool_daemon_checks_what_it_is_asked(self):
        # The daemon, with its own configuration, refuses: not the
        # agent's process (whose checks a caller could skip).
        good = self._bitstream('good', 0)
        outside = self.useFixture(fixtures.TempDir()).path
        for given, reason in (
                ({'tool': '/bin/sh'}, 'is not a vendor tool'),
                ({'device': '-S 0x0000'}, 'is not a PCI address'),
                ({'bitstream': '/etc/passwd'}, 'download directory'),
                ({'bitstream': os.path.join(outside, 'x')},
                 'download directory'),
                ({'partition': 'shell'}, 'no partition')):
            error = self.assertRaises(exception.ProgrammingFailed,
                                      fpga.run_tool, dict(good, **given),
                                      'dep')
            self.assertIn(reason, str(error))
        self.assertEqual([], self.tool.calls)

    def test_tool_daemon_refuses_a_relative_tool_path(self):
        # The daemon reads its own file: a bare name there, which PATH
        # would resolve, is refused.
        _stop_daemons()
        self._daemons_read('fpgaconf')
        _start_daemons()
        error = self.assertRaises(exception.ProgrammingFailed,
                                  fpga.run_tool, self._bitstream('good', 0),
                                  'dep')
        self.assertIn('[fpga] fpgaconf_path', str(error))
        self.assertIn('not an absolute path', str(error))
        self.assertEqual([], self.tool.calls)
