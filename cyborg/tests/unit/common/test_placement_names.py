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
"""Resource class and trait names."""

from cyborg.common import placement_names
from cyborg.tests import base


class TestNames(base.TestCase):

    def test_standard_or_custom(self):
        self.assertTrue(placement_names.is_resource_class('FPGA'))
        self.assertTrue(placement_names.is_resource_class('CUSTOM_QAT'))
        self.assertFalse(placement_names.is_resource_class('QAT'))
        self.assertFalse(placement_names.is_resource_class('CUSTOM_qat'))
        self.assertFalse(placement_names.is_resource_class(
            'CUSTOM_' + 'X' * 249))
        self.assertTrue(placement_names.is_trait(
            'HW_GPU_CUDA_COMPUTE_CAPABILITY_V1_0'))
        self.assertTrue(placement_names.is_trait('CUSTOM_FPGA_INTEL'))
        self.assertFalse(placement_names.is_trait('FPGA'))

    def test_custom_name(self):
        self.assertEqual('CUSTOM_FPGA_INTEL_PAC_A10',
                         placement_names.custom_name('fpga', 'Intel',
                                                     'PAC-A10', None))

    def test_fpga_traits(self):
        self.assertEqual('CUSTOM_FPGA_FUNCTION_ID_AB12',
                         placement_names.function_trait('ab12'))
        self.assertEqual('CUSTOM_FPGA_REGION_9926',
                         placement_names.region_trait('9926'))


class TestIds(base.TestCase):

    def test_normalize(self):
        self.assertEqual('ab12', placement_names.normalize_id(' 0xAB-12\n'))
        self.assertIsNone(placement_names.normalize_id('0000-0000'))
        self.assertIsNone(placement_names.normalize_id(None))
        self.assertEqual(('0a', 'b1'), placement_names.normalize_ids(
            ['B1', '0a', '', '0', 'b-1']))
