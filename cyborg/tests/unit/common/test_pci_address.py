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
"""PCI addresses and their parts."""

from cyborg.common import pci_address
from cyborg.tests import base


class TestPciAddress(base.TestCase):

    def test_parse(self):
        self.assertEqual({'domain': '0000', 'bus': '5e', 'device': '1f',
                          'function': '7'},
                         pci_address.parse('0000:5e:1f.7'))

    def test_parse_rejects(self):
        for bad in ('5e:00.0', '0000:5E:00.0', '0000:5e:00.8', '', 'x'):
            self.assertRaises(ValueError, pci_address.parse, bad)

    def test_join_ignores_other_keys(self):
        self.assertEqual('0000:5e:1f.7', pci_address.join({
            'domain': '0000', 'bus': '5e', 'device': '1f', 'function': '7',
            'asked_type': 'nvidia-222'}))
        self.assertRaises(KeyError, pci_address.join, {'domain': '0000'})

    def test_offsets_carry_into_device_and_bus(self):
        for address, count, expected in (
                ('0000:5e:00.0', 1, '0000:5e:00.1'),
                ('0000:5e:00.7', 1, '0000:5e:01.0'),
                ('0000:5e:1f.7', 1, '0000:5f:00.0'),
                ('0000:5e:00.3', -3, '0000:5e:00.0')):
            self.assertEqual(expected, pci_address.offset(address, count))
        self.assertRaises(ValueError, pci_address.offset, '0000:ff:1f.7', 1)
