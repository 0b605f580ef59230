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
"""Properties of the device profile group grammar, on generated groups.

Whatever strings a group holds, :func:`profile_group.normalize` either
accepts it or refuses it with the domain error; what it accepts is
stable (normalising again changes nothing) and reads back
(:func:`profile_group.parse`) as the same group.
"""

import hypothesis
from hypothesis import strategies as st

from cyborg.common import profile_group
from cyborg import exception
from cyborg.tests import base

# Names and values near the grammar's edges, and any text at all.
_NAMES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(['FPGA', 'fpga', ' pgpu ', 'CUSTOM_X', 'custom-acc-1',
                     'CUSTOM_', 'HW_CPU_X86_AVX', 'bitstream_id',
                     'Function-Name', 'attach_target', 'nope', 'ﬀ']))
_VALUES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(['1', ' 2 ', '0', '01', '1000000000', 'required',
                     'FORBIDDEN ', 'maybe', 'VM', 'host', 'none', 'a.b-c',
                     'd5ca2f11-3108-4426-a11c-a959987565df', '']))
_KEYS = st.one_of(st.text(max_size=12),
                  st.builds(lambda prefix, name: prefix + name,
                            st.sampled_from(profile_group.PREFIXES),
                            _NAMES))
GROUPS = st.lists(st.dictionaries(_KEYS, _VALUES, max_size=5), max_size=3)

# Entries the grammar accepts, in the spellings users write.
_SPACE = st.sampled_from(['', ' ', '  '])
_CUSTOM = st.from_regex(r'\A[a-zA-Z0-9][a-zA-Z0-9_-]{0,8}\Z')


def _spelled(name):
    return st.builds(lambda before, spelling, after: before + spelling +
                     after, _SPACE, st.sampled_from(
                         [name, name.lower(), name.replace('_', '-')]),
                     _SPACE)


_RESOURCE = st.builds(
    lambda name, amount: (profile_group.RESOURCES + name, amount),
    st.one_of(st.sampled_from(['FPGA', 'PGPU', 'VGPU']).flatmap(_spelled),
              _CUSTOM.map(lambda n: 'custom_' + n)),
    st.integers(1, 10 ** 9 - 1).map(str).flatmap(
        lambda n: st.sampled_from([n, ' %s ' % n])))
_TRAIT = st.builds(
    lambda name, value: (profile_group.TRAIT + name, value),
    st.one_of(st.sampled_from(['HW_CPU_X86_AVX', 'COMPUTE_VOLUME_EXTEND'])
              .flatmap(_spelled), _CUSTOM.map(lambda n: 'CUSTOM_' + n)),
    st.sampled_from(profile_group.TRAIT_VALUES).flatmap(
        lambda v: st.sampled_from([v, v.upper(), ' %s ' % v])))
_ACCEL = st.sampled_from([
    ('bitstream_id', '0c4d6a1e-7d3b-4f0a-9a57-4b2d8e1f6c90'),
    ('Bitstream-Name', 'crypto.v1'), ('function_id', '1'),
    ('function_name', ' gzip '), ('attach_target', 'VM')]).map(
        lambda kv: (profile_group.ACCEL + kv[0], kv[1]))
VALID_GROUPS = st.lists(
    st.lists(st.one_of(_RESOURCE, _TRAIT, _ACCEL), max_size=5).map(
        lambda entries: dict(entries)).flatmap(
        lambda group: st.builds(lambda resource: dict(group, **dict(
            [resource])), _RESOURCE)),
    min_size=1, max_size=3)


def _normalized_or_none(groups):
    try:
        return profile_group.normalize(groups)
    except exception.InvalidParameterValue:
        return None


def _written_back(group):
    """A parsed group in its stored spelling again."""
    parsed = profile_group.parse(group)
    written = {profile_group.RESOURCES + name: str(amount)
               for name, amount in parsed.resources.items()}
    written.update({profile_group.TRAIT + name: profile_group.REQUIRED
                    for name in parsed.required})
    written.update({profile_group.TRAIT + name: profile_group.FORBIDDEN
                    for name in parsed.forbidden})
    written.update({profile_group.ACCEL + name: value
                    for name, value in parsed.accel.items()})
    return written


class TestGroupProperties(base.TestCase):

    @base.property_settings(300)
    @hypothesis.given(GROUPS)
    def test_accepted_or_refused_with_the_domain_error(self, groups):
        # Any other exception fails the test.
        normalized = _normalized_or_none(groups)
        if normalized is not None:
            self.assertEqual(len(groups), len(normalized))

    @base.property_settings(150)
    @hypothesis.given(VALID_GROUPS)
    def test_accepted_groups_round_trip(self, groups):
        normalized = _normalized_or_none(groups)
        hypothesis.assume(normalized is not None)
        self.assertEqual(normalized, profile_group.normalize(normalized))
        for group in normalized:
            self.assertEqual(group, _written_back(group))
            parsed = profile_group.parse(group)
            self.assertEqual(sum(parsed.resources.values()), parsed.units)

    @base.property_settings(100)
    @hypothesis.given(VALID_GROUPS, st.integers(min_value=0,
                                                max_value=10 ** 6))
    def test_placement_parameters_carry_the_suffix(self, groups, index):
        normalized = _normalized_or_none(groups)
        hypothesis.assume(normalized)
        suffix = profile_group.suffix(index)
        self.assertEqual('device_profile_%d' % index, suffix)
        params = profile_group.placement_params(normalized[0], suffix)
        self.assertIn('resources' + suffix, params)
        self.assertLessEqual(set(params), {'resources' + suffix,
                                           'required' + suffix})
        parsed = profile_group.parse(normalized[0])
        self.assertEqual(len(parsed.resources), len(
            [p for p in params['resources' + suffix].split(',') if p]))
