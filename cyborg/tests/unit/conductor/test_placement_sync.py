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
"""Which traits a Placement sync adds and takes off, without Placement."""

from cyborg.conductor import placement_records
from cyborg.conductor import placement_sync
from cyborg.objects import deployable as deployable_obj
from cyborg.tests import base

HOST = 'host1'
NAME = HOST + '_0000:5e:00.0'
UUID = placement_sync.provider_uuid(NAME)
PARENT = '1b1a3ab2-4f0e-4c0f-9b3d-1f7c2f0e5a11'
INVENTORIES = {'FPGA': {'total': 1}}


def _provider(*traits):
    return placement_sync.Provider(
        name=NAME, uuid=UUID,
        deployable=deployable_obj.Deployable(uuid=UUID, rp_uuid=None),
        inventories=INVENTORIES,
        traits=frozenset(traits) | {placement_sync.OWNER_TRAIT})


def _seen(traits, placed=()):
    return placement_records.Record(1, frozenset(traits), INVENTORIES,
                                    frozenset(placed))


def _rp():
    return {'uuid': UUID, 'name': NAME, 'generation': 1,
            'parent_provider_uuid': PARENT}


class ChangeTest(base.TestCase):

    def _change(self, provider, seen):
        return placement_sync._change(provider, _rp(), seen, PARENT)

    def test_reprogrammed_function_replaced_others_kept(self):
        change = self._change(
            _provider('CUSTOM_FPGA_FUNCTION_ID_B'),
            _seen({'OWNER_CYBORG', 'CUSTOM_FPGA_FUNCTION_ID_A',
                   'CUSTOM_RACK_7'},
                  placed={'OWNER_CYBORG', 'CUSTOM_FPGA_FUNCTION_ID_A'}))
        self.assertEqual({'CUSTOM_FPGA_FUNCTION_ID_B'}, change.add)
        self.assertEqual({'CUSTOM_FPGA_FUNCTION_ID_A'}, change.remove)
        self.assertEqual({'OWNER_CYBORG', 'CUSTOM_FPGA_FUNCTION_ID_B'},
                         change.placed)
        self.assertTrue(change.writes)

    def test_adopted_provider_keeps_every_trait(self):
        # openstack-cyborg's FPGA provider: no OWNER_CYBORG, no record.
        change = self._change(
            _provider('CUSTOM_FPGA_INTEL', 'CUSTOM_FPGA_INTEL_PAC'),
            _seen({'CUSTOM_FPGA_INTEL', 'CUSTOM_FPGA_INTEL_ARRIA10'}))
        self.assertEqual({'OWNER_CYBORG', 'CUSTOM_FPGA_INTEL_PAC'},
                         change.add)
        self.assertEqual(set(), change.remove)
        # What was there already is not Cyborg's to take off later.
        self.assertEqual(change.add, change.placed)

    def test_trait_removed_by_hand_put_back_and_still_cyborgs(self):
        change = self._change(
            _provider('CUSTOM_FPGA_INTEL'),
            _seen({'OWNER_CYBORG'},
                  placed={'OWNER_CYBORG', 'CUSTOM_FPGA_INTEL'}))
        self.assertEqual({'CUSTOM_FPGA_INTEL'}, change.add)
        self.assertEqual({'OWNER_CYBORG', 'CUSTOM_FPGA_INTEL'},
                         change.placed)

    def test_nothing_to_write(self):
        change = self._change(
            _provider('CUSTOM_FPGA_INTEL'),
            _seen({'OWNER_CYBORG', 'CUSTOM_FPGA_INTEL', 'CUSTOM_RACK_7'},
                  placed={'OWNER_CYBORG', 'CUSTOM_FPGA_INTEL',
                          'CUSTOM_GONE'}))
        self.assertFalse(change.writes)
        # A trait Cyborg put there that someone else took off is
        # forgotten: should it come back, it is not Cyborg's.
        self.assertEqual({'OWNER_CYBORG', 'CUSTOM_FPGA_INTEL'},
                         change.placed)

    def test_not_ours(self):
        rp = dict(_rp(), uuid='c0a6c4a5-3c1e-4b8e-9f55-5a4d0d0f2d11')
        self.assertRaises(placement_sync._NotOurs, placement_sync._change,
                          _provider(), rp, _seen({'CUSTOM_X'}), PARENT)
