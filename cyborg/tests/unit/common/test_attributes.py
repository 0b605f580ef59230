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
"""The attributes carrying a deployable's resource class and traits."""

from cyborg.common import attributes
from cyborg.tests import base


class TestAttributes(base.TestCase):

    def test_round_trip(self):
        pairs = attributes.encode('FPGA', ['CUSTOM_B', 'CUSTOM_A',
                                           'CUSTOM_B'])
        self.assertEqual([('rc', 'FPGA'), ('trait0', 'CUSTOM_A'),
                          ('trait1', 'CUSTOM_B')], pairs)
        self.assertEqual(('FPGA', {'CUSTOM_A', 'CUSTOM_B'}),
                         attributes.decode(pairs))
        attributes.validate(pairs)

    def test_decode_ignores_other_attributes(self):
        self.assertEqual(('PGPU', {'CUSTOM_A'}), attributes.decode({
            'rc': 'PGPU', 'trait3': 'CUSTOM_A', 'traits': 'CUSTOM_B',
            'owner': 'ops'}))
        self.assertEqual((None, frozenset()), attributes.decode([]))

    def test_validate_refuses(self):
        for pairs in ([('trait0', 'CUSTOM_A')],
                      [('rc', 'FPGA'), ('rc', 'FPGA')],
                      [('rc', 'FPGA'), ('trait0', 'A'), ('trait0', 'B')],
                      [('rc', 'NOT_A_CLASS')],
                      [('rc', 'FPGA'), ('trait0', 'not-a-trait')],
                      [('rc', 'FPGA'), ('colour', 'CUSTOM_RED')]):
            self.assertRaises(ValueError, attributes.validate, pairs)
