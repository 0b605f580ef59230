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
"""What a simulated guest shows of the PCI functions passed through.

``cyborg/tests/functional/api/test_tempest.py`` logs in to the guests.
"""

import fixtures
import testtools

from cyborg.tests import sysfs
from cyborg_quickstart import neutron
from cyborg_quickstart.nova_venv import nova_guest


class TestDevices(testtools.TestCase):

    def test_lspci_shows_the_host_ids(self):
        root = self.useFixture(fixtures.TempDir()).path
        sysfs.SysfsTree(root).add_pci('0000:d8:00.0', '10ee', '5021',
                                      '120000')
        arq = {'attach_handle_type': 'PCI', 'attach_handle_info': {
            'domain': '0000', 'bus': 'd8', 'device': '00', 'function': '0'}}
        ids = nova_guest.device_ids(root, arq)
        self.assertEqual({'vendor': '10ee', 'device': '5021',
                          'class': '120000'}, ids)
        # As lspci -n prints it.
        self.assertEqual('00:05.0 1200: 10ee:5021\n',
                         nova_guest.lspci_line(5, ids))

    def test_loopback_subnet_per_neutron(self):
        self.assertEqual('127.37.224.0/24', neutron.loopback_cidr(9696))
        self.assertNotEqual(neutron.loopback_cidr(9697),
                            neutron.loopback_cidr(9696))
