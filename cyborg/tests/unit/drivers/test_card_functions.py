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
"""A bitstream topology names only the card's own PCI functions.

The attacks: an image whose topology puts a function at the address of
another device of the host (the quickstart's generic PCI card, a NIC on
the same root bus, an NVMe drive, a card behind another bridge) to have
it handed to an instance as an FPGA accelerator.
"""

import json
import os

from cyborg.drivers import intel_fpga
from cyborg import exception
from cyborg.tests import stand_ins
from cyborg.tests.unit.drivers import driver_case

PAC = '0000:5e:00.0'
#: The quickstart's generic PCI card, 31232 routing ids after the PAC.
GENERIC = '0000:d8:00.0'
#: A PAC behind a root port of its own, forwarding to buses 86-87.
BRIDGED = '0000:86:00.0'
IMAGE = 'c1b5a4e0-0000-4000-8000-000000000001'
IFID = '9926ab6d6c925a68aabca7d84c545738'


def _topology(*pfs):
    """A topology of (PF offset, [VF offsets]) pairs."""
    return json.dumps({'pf': [
        {'pci_offset': pf, 'vf': [{'pci_offset': vf} for vf in vfs]}
        for pf, vfs in pfs]})


class TestCardFunctions(driver_case.DriverTestCase):

    HOST = [
        ('intel_fpga', PAC, dict(vfs=2, interface_id=IFID)),
        ('add_pci', GENERIC, dict(vendor='10ee', product='5021',
                                  class_code='120000')),
        # Same vendor, same root bus, another device.
        ('intel_nic', '0000:5e:01.0', dict()),
        # Another vendor's function where the card has none.
        ('add_pci', '0000:5e:00.5', dict(vendor='144d', product='a808',
                                         class_code='010802')),
        ('bridge', '0000:85:00.0', dict(secondary='86', subordinate='87')),
        ('intel_fpga', BRIDGED, dict(vfs=1, interface_id=IFID,
                                     behind='0000:85:00.0')),
        ('add_pci', '0000:86:00.3', dict(vendor='144d', product='a808',
                                         class_code='010802',
                                         behind='0000:85:00.0')),
        ('bridge', '0000:85:01.0', dict(secondary='88')),
        ('intel_nic', '0000:88:00.0', dict(behind='0000:85:01.0')),
    ]

    def setUp(self):
        super().setUp()
        self.fpgaconf = self.useFixture(
            stand_ins.StandInTool('fpgaconf'))
        self.conf.config(fpgaconf_path=self.fpgaconf.path, group='fpga')
        self.conf.config(download_dir='/tmp', group='glance')
        self.driver = intel_fpga.IntelFpgaDriver()

    def _program(self, name, topology):
        region = self.driver.fpga_regions(self.scan())[name]
        image = {'id': IMAGE, 'shell_id': IFID, 'topology': topology}
        self.driver.check_image(region, image, self.scan())
        self.driver.program(region, '/tmp/bitstream', image)

    def _refused(self, name, topology, *foreign):
        error = self.assertRaises(exception.BitstreamRejected,
                                  self._program, name, topology)
        self.assertIn("not the card's own: %s" % ', '.join(foreign),
                      str(error))
        self.assertEqual([], self.fpgaconf.calls)

    def test_the_quickstart_attack_is_refused(self):
        # A VF, or a PF, at the generic PCI card's address.
        self._refused(PAC, _topology((0, [31232])), GENERIC)
        self._refused(PAC, _topology((0, [1]), (31232, [])), GENERIC)
        self.assertIsNone(self.deployables(self.discover(
            self.driver))[PAC].bitstream_id)

    def test_other_devices_of_the_root_bus_are_refused(self):
        self._refused(PAC, _topology((0, [8])), '0000:5e:01.0')
        self._refused(PAC, _topology((0, [5])), '0000:5e:00.5')
        # Offsets the domain cannot hold.
        self.assertRaises(exception.BitstreamRejected, self._program, PAC,
                          _topology((0, [70000])))

    def test_the_cards_own_functions_are_taken(self):
        # Its VFs, and one of its device that the bitstream adds.
        self._program(PAC, _topology((0, [1]), (2, [3])))
        self.assertEqual(1, len(self.fpgaconf.calls))
        deps = self.deployables(self.discover(self.driver))
        self.assertEqual(['0000:5e:00.1'], self.addresses(deps[PAC]))
        self.assertEqual(PAC, deps['0000:5e:00.2'].parent_name)

    def test_behind_a_bridge(self):
        # Functions below the card's root port: its VF, a bus the port
        # forwards to; not another vendor's, nor one behind another port.
        self._refused(BRIDGED, _topology((0, [3])), '0000:86:00.3')
        self._refused(BRIDGED, _topology((0, [512])), '0000:88:00.0')
        self._program(BRIDGED, _topology((0, [1]), (256, [])))
        deps = self.deployables(self.discover(self.driver))
        self.assertEqual(['0000:86:00.1'], self.addresses(deps[BRIDGED]))

    def test_a_loaded_topology_never_reports_another_devices_function(self):
        # What an agent of the release before loaded, or a record changed
        # on disk: the driver still offers only the card's functions.
        path = os.path.join(self.conf.conf.state_path, 'fpga',
                            'intel_fpga_driver.json')
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            json.dump({PAC: {'image_id': IMAGE, 'function_id': None,
                             'topology_text': _topology(
                                 (0, [1, 8]), (31232, []))}}, f)
        deps = self.deployables(self.discover(
            intel_fpga.IntelFpgaDriver()))
        self.assertEqual(['0000:5e:00.1'], self.addresses(deps[PAC]))
        self.assertNotIn(GENERIC, deps)
        every = [a for dep in deps.values() for a in self.addresses(dep)]
        self.assertNotIn(GENERIC, every)
        self.assertNotIn('0000:5e:01.0', every)
