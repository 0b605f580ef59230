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
"""Tests of the ARQ transition table."""

from cyborg import states
from cyborg.tests import base


class TestStates(base.TestCase):

    def test_every_state_is_in_the_table(self):
        self.assertEqual(set(states.ALL_STATES), set(states.TRANSITIONS))
        for targets in states.TRANSITIONS.values():
            self.assertLessEqual(targets, set(states.ALL_STATES))

    def test_documented_transitions(self):
        self.assertEqual({states.INITIAL, states.UNBOUND},
                         states.sources_of(states.BIND_STARTED))
        self.assertEqual({states.BIND_STARTED},
                         states.sources_of(states.BOUND))
        self.assertEqual(set(states.ALL_STATES) - {states.DELETING},
                         states.sources_of(states.DELETING))
        self.assertLessEqual(
            {states.BOUND, states.BIND_FAILED, states.INITIAL,
             states.BIND_STARTED}, states.sources_of(states.UNBOUND))
        self.assertFalse(states.can_transition(states.DELETING,
                                               states.BOUND))

    def test_unknown_target(self):
        self.assertRaises(ValueError, states.sources_of, 'Exploded')
