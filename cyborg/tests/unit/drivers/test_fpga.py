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
"""What the FPGA drivers share: topology, programming, the vendor tool."""

import json
import os
import select

import fixtures

from cyborg.drivers import fpga
from cyborg.drivers import intel_fpga
from cyborg.drivers import xilinx_fpga
from cyborg import exception
from cyborg.tests import base
from cyborg.tests import stand_ins
from cyborg.tests.unit.drivers import driver_case

SEED_TOPOLOGY = {
    'pf_num': 2, 'vf_num': 2,
    'pf': [{'name': 'pf_1', 'capability': '', 'kpi': '', 'pci_offset': '0',
            'vf': [{'name': 'vf_1', 'pci_offset': '1'}]},
           {'name': 'pf_2', 'capability': '', 'kpi': '', 'pci_offset': '2',
            'vf': [{'name': 'vf_2', 'pci_offset': '3'}]}],
}
FUNCTION = '6a5b1c02-3f4e-4d2a-9b8c-7d6e5f4a3b2c'
FUNCTION_TRAIT = ('CUSTOM_FPGA_FUNCTION_ID_' +
                  FUNCTION.replace('-', '').upper())
IFID = '9926ab6d6c925a68aabca7d84c545738'


class TestTopology(base.TestCase):

    def test_seed_example(self):
        topology = fpga.Topology.parse(json.dumps(SEED_TOPOLOGY))
        self.assertEqual(((0, (1,)), (2, (3,))), topology.pfs)

    def test_pf_without_vfs(self):
        self.assertEqual(((0, ()),), fpga.Topology.parse(
            '{"pf": [{"pci_offset": 0}]}').pfs)

    def test_invalid(self):
        for text in ('[]', '{}', '{"pf": {}}', '{"pf": [1]}',
                     '{"pf": [{"name": "pf"}]}',
                     '{"pf": [{"pci_offset": "x"}]}',
                     '{"pf": [{"pci_offset": -1}]}',
                     '{"pf": [{"pci_offset": 0, "vf": {}}]}',
                     '{"pf": [{"pci_offset": 0, '
                     '"vf": [{"pci_offset": 0}]}]}',
                     '{"pf_num": 2, "pf": [{"pci_offset": 0}]}',
                     'not json'):
            self.assertRaises(ValueError, fpga.Topology.parse, text)


class TestProgramming(driver_case.DriverTestCase):
    """Programming through stand-in vendor tools that record their calls."""

    HOST = [
        ('intel_fpga', '0000:5e:00.0', dict(vfs=4, interface_id=IFID)),
        ('xilinx_fpga', '0000:65:00.0', dict()),
    ]

    def setUp(self):
        super().setUp()
        afu_file = self.tree.afu_files['0000:5e:00.0']
        # Like the real tool, the stand-in loads the AFU the image holds.
        self.fpgaconf = self.useFixture(stand_ins.StandInTool(
            'fpgaconf', 'open(%r, "w").write(%r)' % (
                afu_file, FUNCTION.replace('-', ''))))
        self.xbmgmt = self.useFixture(stand_ins.StandInTool('xbmgmt'))
        self.conf.config(fpgaconf_path=self.fpgaconf.path,
                         xbmgmt_path=self.xbmgmt.path, group='fpga')
        self.intel = intel_fpga.IntelFpgaDriver()
        # The vendor tool daemon loads only files of the download directory.
        self.conf.config(download_dir='/tmp', group='glance')

    def _image(self, **props):
        image = {'id': 'c1b5a4e0-0000-4000-8000-000000000001',
                 'shell_id': IFID, 'function_uuid': FUNCTION}
        image.update(props)
        return image

    def _program(self, driver, name, image):
        region = driver.fpga_regions(self.scan())[name]
        driver.program(region, '/tmp/bitstream', image)

    def test_program_reports_image_and_function(self):
        self._program(self.intel, '0000:5e:00.0', self._image())
        self.assertEqual([['-S', '0x0000', '-B', '0x5e', '-D', '0x00', '-F',
                           '0x0', '/tmp/bitstream']], self.fpgaconf.calls)
        dep = self.deployables(self.discover(self.intel))['0000:5e:00.0']
        self.assertEqual('c1b5a4e0-0000-4000-8000-000000000001',
                         dep.bitstream_id)
        self.assertIn(FUNCTION_TRAIT, self.traits(dep))

    def test_function_from_image_when_the_card_cannot_show_it(self):
        xilinx = xilinx_fpga.XilinxFpgaDriver()
        self._program(xilinx, '0000:65:00.0', self._image())
        self.assertEqual('--user', self.xbmgmt.calls[0][3])
        dep = self.deployables(self.discover(xilinx))['0000:65:00.0']
        self.assertIn(FUNCTION_TRAIT, self.traits(dep))

    def test_topology_becomes_the_deployable_tree(self):
        self._program(self.intel, '0000:5e:00.0', self._image(
            topology=json.dumps(SEED_TOPOLOGY)))
        deps = self.deployables(self.discover(self.intel))
        region, pf2 = deps['0000:5e:00.0'], deps['0000:5e:00.2']
        self.assertEqual(['0000:5e:00.1'], self.addresses(region))
        self.assertIsNone(region.parent_name)
        self.assertEqual(['0000:5e:00.3'], self.addresses(pf2))
        self.assertEqual('0000:5e:00.0', pf2.parent_name)
        self.assertEqual(region.bitstream_id, pf2.bitstream_id)
        self.assertIn(FUNCTION_TRAIT, self.traits(pf2))

    def test_topology_functions_missing_from_the_host_are_not_offered(self):
        self._program(self.intel, '0000:5e:00.0', self._image(
            topology='{"pf": [{"pci_offset": 0, "vf": [{"pci_offset": 1},'
                     ' {"pci_offset": 5}]}]}'))
        dep = self.deployables(self.discover(self.intel))['0000:5e:00.0']
        self.assertEqual(['0000:5e:00.1'], self.addresses(dep))

    def test_bad_topology_is_refused_before_the_tool_runs(self):
        error = self.assertRaises(
            exception.BitstreamRejected, self._program, self.intel,
            '0000:5e:00.0', self._image(topology='{"pf": 3}'))
        self.assertIn('topology', str(error))
        self.assertEqual([], self.fpgaconf.calls)

    def test_reprogrammed_outside_cyborg_forgets_the_image(self):
        self._program(self.intel, '0000:5e:00.0', self._image())
        with open(self.tree.afu_files['0000:5e:00.0'], 'w') as f:
            f.write('ffff0000ffff0000ffff0000ffff0000')
        dep = self.deployables(self.discover(self.intel))['0000:5e:00.0']
        self.assertIsNone(dep.bitstream_id)
        self.assertNotIn(FUNCTION_TRAIT, self.traits(dep))
        # Forgotten for good: a restarted agent does not report it either.
        dep = self.deployables(self.discover(
            intel_fpga.IntelFpgaDriver()))['0000:5e:00.0']
        self.assertIsNone(dep.bitstream_id)

    def test_a_restarted_agent_reports_what_it_loaded(self):
        self._program(self.intel, '0000:5e:00.0', self._image(
            topology=json.dumps(SEED_TOPOLOGY)))
        # A new driver, as the agent makes when it starts again.
        deps = self.deployables(self.discover(intel_fpga.IntelFpgaDriver()))
        self.assertEqual('c1b5a4e0-0000-4000-8000-000000000001',
                         deps['0000:5e:00.0'].bitstream_id)
        self.assertEqual('0000:5e:00.0', deps['0000:5e:00.2'].parent_name)

    def test_an_unreadable_record_is_ignored(self):
        self._program(self.intel, '0000:5e:00.0', self._image())
        with open(self.intel._loaded_file, 'w') as f:
            f.write('{"0000:5e:00.0": 3}')
        dep = self.deployables(self.discover(
            intel_fpga.IntelFpgaDriver()))['0000:5e:00.0']
        self.assertIsNone(dep.bitstream_id)


class TestRunTool(base.TestCase):

    def setUp(self):
        super().setUp()
        self.downloads = self.useFixture(fixtures.TempDir()).path
        self.conf.config(download_dir=self.downloads, group='glance')
        self.bitstream = os.path.join(self.downloads, 'cyborg-bitstream-1')

    def _tool(self, effect=''):
        tool = self.useFixture(stand_ins.StandInTool('tool', effect))
        self.conf.config(xbmgmt_path=tool.path, group='fpga')
        return tool

    def _command(self, **given):
        command = {'tool': 'xbmgmt', 'device': '0000:65:00.0',
                   'bitstream': self.bitstream, 'partition': 'user'}
        command.update(given)
        return command

    def test_success(self):
        tool = self._tool()
        fpga.run_tool(self._command(), 'dep')
        self.assertEqual([['program', '--device', '0000:65:00.0', '--user',
                           self.bitstream, '--force']], tool.calls)

    def test_failure_carries_stderr(self):
        tool = self._tool('sys.stderr.write("bad gbs\\n"); sys.exit(3)')
        error = self.assertRaises(exception.ProgrammingFailed,
                                  fpga.run_tool, self._command(), 'dep')
        self.assertIn('status 3: bad gbs', str(error))
        self.assertEqual(1, len(tool.calls))

    def test_missing_tool(self):
        self.conf.config(fpgaconf_path='/nonexistent/fpgaconf', group='fpga')
        error = self.assertRaises(
            exception.ProgrammingFailed, fpga.run_tool,
            self._command(tool='fpgaconf', partition=None), 'dep')
        self.assertIn('cannot be run', str(error))

    def test_timeout_kills_the_tool_and_its_children(self):
        self.conf.config(program_timeout=2, group='fpga')
        pid_file = os.path.join(self.useFixture(
            fixtures.TempDir()).path, 'pid')
        self._tool((
            'import subprocess\n'
            'child = subprocess.Popen(["sleep", "60"])\n'
            'open(%r, "w").write(str(child.pid))\n'
            'child.wait()') % pid_file)
        error = self.assertRaises(exception.ProgrammingFailed,
                                  fpga.run_tool, self._command(), 'dep')
        self.assertIn('within 2 seconds', str(error))
        with open(pid_file) as f:
            child = int(f.read())
        self.assertTrue(_exits(child, timeout=10))

    def test_bad_arguments_are_refused(self):
        tool = self._tool()
        for given, reason in (
                ({'tool': 'bash'}, 'is not a vendor tool'),
                ({'tool': tool.path}, 'is not a vendor tool'),
                ({'device': '0000:65:00.0 --shell'}, 'is not a PCI address'),
                ({'device': '--shell'}, 'is not a PCI address'),
                ({'bitstream': '/etc/shadow'}, 'download directory'),
                ({'bitstream': os.path.join(self.downloads, '..', 'x')},
                 'download directory'),
                ({'bitstream': 'cyborg-bitstream-1'}, 'not an absolute'),
                ({'partition': 'shell --force'}, 'partition'),
                ({'partition': None}, 'partition')):
            error = self.assertRaises(exception.ProgrammingFailed,
                                      fpga.run_tool, self._command(**given),
                                      'dep')
            self.assertIn(reason, str(error))
        self.assertEqual([], tool.calls)

    def test_relative_tool_paths_are_refused(self):
        # Found through PATH, a tool is whatever PATH finds first.
        self.conf.config(xbmgmt_path='xbmgmt', group='fpga')
        error = self.assertRaises(exception.ProgrammingFailed,
                                  fpga.run_tool, self._command(), 'dep')
        self.assertIn('[fpga] xbmgmt_path', str(error))
        self.assertIn('not an absolute path', str(error))


def _exits(pid, timeout):
    """Whether process ``pid`` ends within ``timeout`` seconds."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        # A process descriptor becomes readable when the process exits.
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)
