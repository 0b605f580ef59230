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
"""The device profile group grammar."""

from cyborg.common import profile_group
from cyborg import exception
from cyborg.tests import base

GROUP = {'resources:FPGA': '2', 'resources:CUSTOM_ACC': '1',
         'trait:CUSTOM_FPGA_INTEL': 'required',
         'trait:CUSTOM_FPGA_XILINX': 'forbidden',
         'accel:bitstream_id': 'd5ca2f11-3108-4426-a11c-a959987565df'}


class TestParse(base.TestCase):

    def test_parse(self):
        group = profile_group.parse(GROUP)
        self.assertEqual({'FPGA': 2, 'CUSTOM_ACC': 1}, group.resources)
        self.assertEqual({'CUSTOM_FPGA_INTEL'}, group.required)
        self.assertEqual({'CUSTOM_FPGA_XILINX'}, group.forbidden)
        self.assertEqual({'bitstream_id': GROUP['accel:bitstream_id']},
                         group.accel)
        self.assertEqual(3, group.units)

    def test_placement_params(self):
        self.assertEqual(
            {'resourcesdevice_profile_1': 'CUSTOM_ACC:1,FPGA:2',
             'requireddevice_profile_1':
                 'CUSTOM_FPGA_INTEL,!CUSTOM_FPGA_XILINX'},
            profile_group.placement_params(GROUP, profile_group.suffix(1)))
        self.assertEqual({'resources': 'VGPU:1'},
                         profile_group.placement_params(
                             {'resources:VGPU': '1'}))


class TestRename(base.TestCase):

    def test_renames_resources_and_traits_only(self):
        group, changes, conflicts = profile_group.rename(
            {'resources:CUSTOM_FPGA': '1', 'trait:CUSTOM_OLD': 'required',
             'accel:function_name': 'CUSTOM_OLD'},
            {'CUSTOM_FPGA': 'FPGA', 'CUSTOM_OLD': 'HW_NEW'})
        self.assertEqual({'resources:FPGA': '1', 'trait:HW_NEW': 'required',
                          'accel:function_name': 'CUSTOM_OLD'}, group)
        self.assertEqual(2, len(changes))
        self.assertEqual([], conflicts)

    def test_collision_is_reported(self):
        _, _, conflicts = profile_group.rename(
            {'trait:CUSTOM_A': 'required', 'trait:B': 'forbidden'},
            {'CUSTOM_A': 'B'})
        self.assertEqual(['trait:B'], conflicts)


class TestNormalize(base.TestCase):

    def test_stored_spelling(self):
        self.assertEqual(
            [{'resources:CUSTOM_FPGA_X': '1',
              'trait:CUSTOM_A_B': 'required',
              'accel:function_name': 'gzip'}],
            profile_group.normalize([{
                'resources: custom-fpga-x': ' 1 ',
                'trait:custom_a-b': 'Required',
                'accel: function-name': 'gzip'}]))

    def test_refused(self):
        for group, field in (
                ({'resources:FPGA': '0'}, 'groups/0/resources:FPGA'),
                ({'resources:GPU_X': '1'}, 'groups/0/resources:GPU_X'),
                ({'trait:CUSTOM_A': 'maybe'}, 'groups/0/trait:CUSTOM_A'),
                ({'accel:colour': 'red'}, 'groups/0/accel:colour'),
                ({'accel:bitstream_id': 'x'}, 'groups/0/accel:bitstream_id'),
                ({'hint:x': 'y'}, 'groups/0/hint:x'),
                ({'trait:CUSTOM_A': 'required',
                  'trait:custom-a': 'forbidden'},
                 'groups/0/trait:custom-a')):
            e = self.assertRaises(exception.InvalidParameterValue,
                                  profile_group.normalize, [group])
            self.assertIn(field, str(e))
