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
"""The plan of a Placement sync, without Placement: the one rule set.

The sync applies this plan and the audit shows it (their functional
tests run it against a real Placement); here it is tested alone: which
providers are Cyborg's, which traits a sync adds and takes off, what it
creates, fixes and deletes.
"""

from cyborg.common import placement_names
from cyborg.conductor import placement_plan
from cyborg.conductor import placement_records
from cyborg import exception
from cyborg.objects import deployable as deployable_obj
from cyborg.tests import base

HOST = 'host1'
NAME = HOST + '_0000:5e:00.0'
UUID = placement_names.provider_uuid(NAME)
PARENT = '1b1a3ab2-4f0e-4c0f-9b3d-1f7c2f0e5a11'
INVENTORIES = {'FPGA': {'total': 1}}


def _provider(*traits, name=NAME, rp_uuid=None):
    return placement_plan.Provider(
        name=name, uuid=placement_names.provider_uuid(name),
        deployable=deployable_obj.Deployable(uuid=UUID, rp_uuid=rp_uuid),
        inventories=INVENTORIES,
        traits=frozenset(traits) | {placement_plan.OWNER_TRAIT})


def _seen(traits, placed=()):
    return placement_records.Record(1, frozenset(traits), INVENTORIES,
                                    frozenset(placed))


def _rp(name=NAME, rp_uuid=None, parent=PARENT):
    return {'uuid': rp_uuid or placement_names.provider_uuid(name),
            'name': name, 'generation': 1, 'parent_provider_uuid': parent}


class ChangeTest(base.TestCase):

    def _change(self, provider, seen):
        return placement_plan.change(provider, _rp(), seen, PARENT)

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
        self.assertRaises(placement_plan.NotOurs, placement_plan.change,
                          _provider(), rp, _seen({'CUSTOM_X'}), PARENT)

    def test_adopted_is_said(self):
        change = self._change(_provider(), _seen({'CUSTOM_FPGA_INTEL'}))
        self.assertTrue(change.adopted)
        change = self._change(_provider(), _seen({'OWNER_CYBORG'}))
        self.assertFalse(change.adopted)


class PlanTest(base.TestCase):
    """:func:`placement_plan.plan` over a tree as read."""

    def _plan(self, providers, rps, seen):
        tree = {rp['uuid']: rp for rp in rps}
        return placement_plan.plan(providers, tree, seen, PARENT)

    def test_missing_provider_is_created(self):
        provider = _provider('CUSTOM_FPGA_INTEL')
        plan = self._plan([provider], [], {})
        (change,) = plan.changes
        self.assertIsNone(change.rp)
        self.assertEqual(provider.traits, change.add)
        self.assertEqual(placement_records.UNBORN, change.seen)
        self.assertEqual(((), ()), (plan.unchanged, plan.doomed))

    def test_right_provider_is_unchanged(self):
        provider = _provider('CUSTOM_FPGA_INTEL')
        seen = _seen(provider.traits, placed=provider.traits)
        plan = self._plan([provider], [_rp()], {UUID: seen})
        self.assertEqual((), plan.changes)
        self.assertEqual([_rp()], [change.rp for change in plan.unchanged])

    def test_inventory_drift_is_a_change(self):
        provider = _provider()
        seen = placement_records.Record(
            1, provider.traits, {'FPGA': {'total': 5}}, provider.traits)
        (change,) = self._plan([provider], [_rp()], {UUID: seen}).changes
        self.assertEqual((frozenset(), frozenset()),
                         (change.add, change.remove))
        self.assertTrue(change.writes)

    def test_found_by_name_under_another_uuid(self):
        other = 'c0a6c4a5-3c1e-4b8e-9f55-5a4d0d0f2d11'
        provider = _provider()
        rp = _rp(rp_uuid=other)
        plan = self._plan([provider], [rp], {other: _seen(
            provider.traits, placed=provider.traits)})
        self.assertEqual([rp], [change.rp for change in plan.unchanged])

    def test_unneeded_provider_of_cyborg_is_doomed_others_left(self):
        ours = _rp(HOST + '_gone')
        bare = _rp(HOST + '_cut_short')
        nova = _rp(HOST + '_pci_0000_81_00_0',
                   rp_uuid='0f1e2d3c-4b5a-4697-8877-665544332211')
        plan = self._plan([], [ours, bare, nova], {
            ours['uuid']: _seen({'OWNER_CYBORG'}),
            bare['uuid']: placement_records.Record(
                1, frozenset(), {}, frozenset()),
            nova['uuid']: _seen({'HW_CPU_X86_AVX2'})})
        self.assertEqual((ours, bare), plan.doomed)

    def test_provider_of_the_name_not_ours(self):
        provider = _provider()
        rp = _rp(rp_uuid='c0a6c4a5-3c1e-4b8e-9f55-5a4d0d0f2d11')
        plan = self._plan([provider], [rp], {rp['uuid']: _seen({'X'})})
        self.assertEqual(((provider, rp),), plan.not_ours)
        self.assertEqual(((), ()), (plan.changes, plan.doomed))

    def test_recorded_provider_of_openstack_cyborg_adopted(self):
        # openstack-cyborg 17.0.0 named the deployable otherwise; its
        # converted row records the provider, which keeps its uuid.
        legacy = _rp(HOST + '_old_name')
        provider = _provider(rp_uuid=legacy['uuid'])
        (change,) = self._plan([provider], [legacy], {
            legacy['uuid']: _seen({'CUSTOM_FPGA_INTEL'})}).changes
        self.assertEqual(legacy, change.rp)
        self.assertTrue(change.adopted)

    def test_unreadable_providers_are_neither_changed_nor_deleted(self):
        provider = _provider()
        gone = _rp(HOST + '_gone')
        error = exception.PlacementRequestFailed(
            method='GET', url='/x', status=500, detail='')
        plan = self._plan([provider], [_rp(), gone],
                          {UUID: error, gone['uuid']: error})
        self.assertEqual(((provider, _rp(), error),), plan.unread)
        self.assertEqual(((gone, error),), plan.kept)
        self.assertEqual(((), (), ()), (plan.changes, plan.unchanged,
                                        plan.doomed))
