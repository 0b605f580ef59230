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
"""The grammar of a device profile group, in one place.

A group is a dict of ``resources:<RC>`` (a positive amount),
``trait:<TRAIT>`` (``required`` or ``forbidden``) and ``accel:<key>``
entries. :func:`normalize` checks a group as a user wrote it and returns
it in its stored spelling (names upper case with underscores, whitespace
after a prefix dropped); :func:`parse` reads a stored group. Nova turns
profile group N into the Placement request group with suffix
``device_profile_N`` (:func:`suffix`), made of the group's resources and
traits (:func:`placement_params`); ``accel:`` entries are Cyborg's alone.
"""

import dataclasses
import re

from oslo_utils import uuidutils

from cyborg.common import placement_names
from cyborg import exception
from cyborg.i18n import _

RESOURCES = 'resources:'
TRAIT = 'trait:'
ACCEL = 'accel:'
PREFIXES = (RESOURCES, TRAIT, ACCEL)

REQUIRED = 'required'
FORBIDDEN = 'forbidden'
TRAIT_VALUES = (REQUIRED, FORBIDDEN)
ATTACH_TARGETS = ('VM', 'host', 'none')

AMOUNT = re.compile('^[1-9][0-9]{0,8}$')
WORD = re.compile('^[A-Za-z0-9_.-]{1,255}$')


@dataclasses.dataclass(frozen=True)
class Group:
    """A stored group, read: what it asks of Placement and of Cyborg."""

    resources: dict
    required: frozenset
    forbidden: frozenset
    accel: dict

    @property
    def units(self):
        """How many accelerators the group asks for: one ARQ each."""
        return sum(self.resources.values())


def parse(group):
    """Read a stored (normalised) group."""
    resources, required, forbidden, accel = {}, set(), set(), {}
    for key, value in group.items():
        if key.startswith(RESOURCES):
            resources[key[len(RESOURCES):]] = int(value)
        elif key.startswith(TRAIT):
            name = key[len(TRAIT):]
            (required if value == REQUIRED else forbidden).add(name)
        elif key.startswith(ACCEL):
            accel[key[len(ACCEL):]] = value
    return Group(resources, frozenset(required), frozenset(forbidden),
                 accel)


def suffix(index):
    """The suffix of the Placement request group Nova makes of group N.

    Nova uses its request group's ``requester_id`` as the suffix as it is,
    so the parameters are ``resourcesdevice_profile_N`` and so on.
    """
    return 'device_profile_%d' % index


def placement_params(group, group_suffix=''):
    """The granular ``GET /allocation_candidates`` parameters of a group.

    :param group: a stored group.
    :returns: ``resources<suffix>`` and, if the group names traits,
        ``required<suffix>`` (forbidden traits with ``!``).
    """
    parsed = parse(group)
    params = {'resources' + group_suffix: ','.join(
        '%s:%d' % item for item in sorted(parsed.resources.items()))}
    traits = sorted(parsed.required) + sorted(
        '!' + trait for trait in parsed.forbidden)
    if traits:
        params['required' + group_suffix] = ','.join(traits)
    return params


def normalize_name(name):
    """A resource class or trait name as stored: upper case, underscores."""
    return name.strip().upper().replace('-', '_')


def rename(group, mapping):
    """Rename the resource classes and traits of a stored group.

    :param mapping: {old name: new name}.
    :returns: (new group, [(old key, new key)], [keys that two entries
        would both take, with different values]).
    """
    renamed, changes, conflicts = {}, [], []
    for key, value in group.items():
        prefix = next((p for p in (RESOURCES, TRAIT) if key.startswith(p)),
                      None)
        new_key = key
        if prefix and key[len(prefix):] in mapping:
            new_key = prefix + mapping[key[len(prefix):]]
            changes.append((key, new_key))
        if new_key in renamed and renamed[new_key] != value:
            conflicts.append(new_key)
        renamed[new_key] = value
    return renamed, changes, conflicts


# --- checking groups as users write them -----------------------------------

def _invalid(group_id, key, reason):
    return exception.InvalidParameterValue(
        name=_('field groups/%(group)d/%(key)s') % {'group': group_id,
                                                    'key': key},
        reason=reason)


def _resource(group_id, key, name, value):
    name = normalize_name(name)
    if not placement_names.is_resource_class(name):
        raise _invalid(group_id, key, _(
            '%s is neither a standard resource class nor CUSTOM_ followed '
            'by letters, digits and underscores') % name)
    if not AMOUNT.match(value.strip()):
        raise _invalid(group_id, key, _('the amount must be a positive '
                                        'integer'))
    return RESOURCES + name, value.strip()


def _trait(group_id, key, name, value):
    name = normalize_name(name)
    if not placement_names.is_trait(name):
        raise _invalid(group_id, key, _(
            '%s is neither a standard trait nor CUSTOM_ followed by '
            'letters, digits and underscores') % name)
    value = value.strip().lower()
    if value not in TRAIT_VALUES:
        raise _invalid(group_id, key, _('must be required or forbidden'))
    return TRAIT + name, value


def _accel_bitstream_id(value):
    return uuidutils.is_uuid_like(value), _('must be a UUID')


def _accel_word(value):
    return bool(WORD.match(value)), _(
        'must be 1 to 255 letters, digits, dots, underscores or hyphens')


def _accel_attach_target(value):
    return value in ATTACH_TARGETS, _('must be one of %s') % ', '.join(
        ATTACH_TARGETS)


#: Valid ``accel:`` keys and the check of their value.
ACCEL_KEYS = {
    'bitstream_id': _accel_bitstream_id,
    'bitstream_name': _accel_word,
    'function_id': _accel_word,
    'function_name': _accel_word,
    'attach_target': _accel_attach_target,
}


def _accel(group_id, key, name, value):
    name = name.strip().lower().replace('-', '_')
    check = ACCEL_KEYS.get(name)
    if check is None:
        raise _invalid(group_id, key, _('accel: keys are %s') % ', '.join(
            sorted(ACCEL_KEYS)))
    value = value.strip()
    valid, reason = check(value)
    if not valid:
        raise _invalid(group_id, key, reason)
    return ACCEL + name, value


_BY_PREFIX = ((RESOURCES, _resource), (TRAIT, _trait), (ACCEL, _accel))


def normalize(groups):
    """Check every group entry; return them in their stored spelling.

    :raises InvalidParameterValue: an entry breaks a rule, or two entries
        of one group mean the same thing.
    """
    result = []
    for group_id, group in enumerate(groups):
        normalized = {}
        for key, value in group.items():
            for prefix, normalize_entry in _BY_PREFIX:
                if key.startswith(prefix):
                    new_key, new_value = normalize_entry(
                        group_id, key, key[len(prefix):], value)
                    break
            else:
                raise _invalid(group_id, key, _('keys start with %s')
                               % ', '.join(PREFIXES))
            if new_key in normalized:
                raise _invalid(group_id, key, _('repeats %s') % new_key)
            normalized[new_key] = new_value
        result.append(normalized)
    return result
