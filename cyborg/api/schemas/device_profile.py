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
"""Device profile requests: JSON Schemas, the group rules and patches.

A group is a dict of ``resources:<RC>`` (a positive amount), ``trait:<T>``
(``required`` or ``forbidden``) and ``accel:<key>`` entries. Resource class
and trait names may be written in lower case with hyphens: they are stored
upper case with underscores. Whitespace after a prefix is dropped. A
PATCH (2.5) replaces the description or the groups as a whole, under the
same rules as a create.
"""

import re

import os_resource_classes
import os_traits
from oslo_utils import uuidutils

from cyborg.api.schemas import parameter_types
from cyborg import exception
from cyborg.i18n import _

RESOURCES = 'resources:'
TRAIT = 'trait:'
ACCEL = 'accel:'

_CUSTOM = re.compile('^CUSTOM_[A-Z0-9_]+$')
_AMOUNT = re.compile('^[1-9][0-9]{0,8}$')
_WORD = re.compile('^[A-Za-z0-9_.-]{1,255}$')
_STANDARD_TRAITS = frozenset(os_traits.get_traits())
_STANDARD_CLASSES = frozenset(os_resource_classes.STANDARDS)

TRAIT_VALUES = ('required', 'forbidden')
ATTACH_TARGETS = ('VM', 'host', 'none')

_group = {
    'type': 'object', 'minProperties': 1,
    'additionalProperties': {'type': 'string', 'maxLength': 255},
    'propertyNames': {'pattern': '^(resources|trait|accel):',
                      'maxLength': 255},
}

_description = {'type': ['string', 'null'], 'maxLength': 255}
_groups = {'type': 'array', 'minItems': 1, 'items': _group}

_profile = {
    'type': 'object',
    'properties': {
        'name': parameter_types.name,
        'uuid': parameter_types.uuid,
        'description': _description,
        'groups': _groups,
    },
    'required': ['name', 'groups'],
    'additionalProperties': False,
}

#: POST body: a list with one profile, or the bare profile.
create = {
    'anyOf': [
        {'type': 'array', 'minItems': 1, 'maxItems': 1, 'items': _profile},
        _profile,
    ],
}

#: What a PATCH may change, and the schema of the new value.
_PATCHABLE = {'/description': _description, '/groups': _groups}

#: PATCH body (2.5): JSON Patch operations; see :func:`patch_values`.
patch = {
    'type': 'array', 'minItems': 1,
    'items': {
        'type': 'object',
        'properties': {
            'op': {'type': 'string', 'enum': ['add', 'replace', 'remove']},
            'path': {'type': 'string'},
            'value': {},
        },
        'required': ['op', 'path'],
        'additionalProperties': False,
        'allOf': [{'if': {'properties': {'path': {'const': path}}},
                   'then': {'properties': {'value': value}}}
                  for path, value in _PATCHABLE.items()],
    },
}

list_query = {'name': {'type': 'string', 'minLength': 1}}

delete_query = {
    'type': 'object',
    'properties': {'value': {'type': 'string', 'minLength': 1}},
    'required': ['value'],
    'additionalProperties': False,
}

SORT_KEYS = ('created_at', 'updated_at', 'name', 'uuid')


def _invalid(group_id, key, reason):
    return exception.InvalidParameterValue(
        name=_('field groups/%(group)d/%(key)s') % {'group': group_id,
                                                    'key': key},
        reason=reason)


def _upper(name):
    return name.strip().upper().replace('-', '_')


def _resource(group_id, key, name, value):
    name = _upper(name)
    if name not in _STANDARD_CLASSES and not _CUSTOM.match(name):
        raise _invalid(group_id, key, _(
            '%s is neither a standard resource class nor CUSTOM_ followed '
            'by letters, digits and underscores') % name)
    if not _AMOUNT.match(value.strip()):
        raise _invalid(group_id, key, _('the amount must be a positive '
                                        'integer'))
    return RESOURCES + name, value.strip()


def _trait(group_id, key, name, value):
    name = _upper(name)
    if name not in _STANDARD_TRAITS and not _CUSTOM.match(name):
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
    return bool(_WORD.match(value)), _(
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


def normalize_groups(groups):
    """Check every group entry; return them in their stored spelling.

    :raises InvalidParameterValue: an entry breaks a rule, or two entries
        of one group mean the same thing.
    """
    result = []
    for group_id, group in enumerate(groups):
        normalized = {}
        for key, value in group.items():
            for prefix, normalize in _BY_PREFIX:
                if key.startswith(prefix):
                    new_key, new_value = normalize(
                        group_id, key, key[len(prefix):], value)
                    break
            if new_key in normalized:
                raise _invalid(group_id, key, _('repeats %s') % new_key)
            normalized[new_key] = new_value
        result.append(normalized)
    return result


def profile_from_body(body):
    """The one profile of a validated POST body, normalised."""
    profile = dict(body[0] if isinstance(body, list) else body)
    if uuidutils.is_uuid_like(profile['name']):
        raise exception.InvalidParameterValue(
            name=_('field name'),
            reason=_('a UUID cannot be a name: profiles are found by '
                     'either'))
    if profile.get('uuid'):
        profile['uuid'] = profile['uuid'].lower()
    profile['groups'] = normalize_groups(profile['groups'])
    return profile


#: What a PATCH may not change, and why.
_FIXED = {
    '/name': _('a device profile keeps its name: flavors refer to it by '
               'name'),
    '/uuid': _('a device profile keeps its uuid'),
    '/enabled': _('a device profile is enabled and disabled with POST '
                  '/v2/device_profiles/{uuid}/enable and .../disable'),
}


def patch_values(operations):
    """The changes a PATCH body asks for, checked and normalised.

    ``add`` and ``replace`` set the whole value (JSON Patch's ``add`` of
    a member that exists replaces it); ``remove`` clears the description.
    The groups follow the rules of a create.

    :param operations: a body valid under :data:`patch` (which checks
        the values).
    :returns: {'description': ..., 'groups': [...]}, with the fields the
        operations change.
    :raises InvalidParameterValue: an operation changes something else,
        changes a field twice, or gives a value that breaks the rules.
    """
    values = {}
    for index, operation in enumerate(operations):
        path = operation['path']
        where = _('field %d') % index
        if path in _FIXED:
            raise exception.InvalidParameterValue(name=where + '/path',
                                                  reason=_FIXED[path])
        if path not in _PATCHABLE:
            raise exception.InvalidParameterValue(
                name=where + '/path', reason=_(
                    '%s is not one of the fields a patch changes: %s') % (
                    path, ', '.join(sorted(_PATCHABLE))))
        field = path[1:]
        if field in values:
            raise exception.InvalidParameterValue(
                name=where + '/path', reason=_('%s is changed twice') % path)
        if operation['op'] == 'remove':
            if path != '/description':
                raise exception.InvalidParameterValue(
                    name=where + '/op',
                    reason=_('a device profile cannot be without %s') % path)
            values[field] = None
            continue
        if 'value' not in operation:
            raise exception.InvalidParameterValue(
                name=where + '/value',
                reason=_('%s needs a value') % operation['op'])
        values[field] = operation['value']
    if 'groups' in values:
        values['groups'] = normalize_groups(values['groups'])
    return values
