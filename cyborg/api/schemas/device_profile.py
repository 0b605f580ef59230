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
"""Device profile requests: JSON Schemas, and the patches of 2.5.

The schemas check a request's shape; the group grammar itself (which keys
and values a group may hold, and their stored spelling) is
:mod:`cyborg.common.profile_group`'s. A PATCH (2.5) replaces the
description or the groups as a whole, under the same rules as a create.
The OpenAPI document describes the bodies with the grammar in full
(:data:`create_document`, :data:`patch_document`): a group in its stored
spelling.
"""

import copy
import itertools

from oslo_utils import uuidutils

from cyborg.api.schemas import parameter_types
from cyborg.common import placement_names
from cyborg.common import profile_group
from cyborg import exception
from cyborg.i18n import _

_group = {
    'type': 'object', 'minProperties': 1,
    'additionalProperties': {'type': 'string', 'maxLength': 255},
    'propertyNames': {'pattern': '^(%s)' % '|'.join(profile_group.PREFIXES),
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


def _create(profile):
    """A POST body: a list with one ``profile``, or the bare profile."""
    return {'anyOf': [
        {'type': 'array', 'minItems': 1, 'maxItems': 1, 'items': profile},
        profile]}


create = _create(_profile)

_ACCEL_VALUES = {
    'bitstream_id': parameter_types.uuid,
    'bitstream_name': {'type': 'string',
                       'pattern': profile_group.WORD.pattern},
    'function_id': {'type': 'string', 'pattern': profile_group.WORD.pattern},
    'function_name': {'type': 'string',
                      'pattern': profile_group.WORD.pattern},
    'attach_target': {'type': 'string',
                      'enum': list(profile_group.ATTACH_TARGETS)},
}

#: A group as :func:`profile_group.normalize` takes and stores it, with
#: every resource class and trait the service knows.
group_document = {
    'type': 'object', 'minProperties': 1,
    'description': (
        'A group of resources (resources:<class>: amount), traits '
        '(trait:<trait>: required or forbidden) and accel: options, in '
        'the spelling the service stores. A resource class or trait is '
        'a standard one (os-resource-classes, os-traits) or CUSTOM_ and '
        'upper-case letters, digits and underscores. The service also '
        'takes names in lower case or with hyphens for underscores, and '
        'names and values with spaces around them, and stores them in '
        'this spelling.'),
    'propertyNames': {'maxLength': 255},
    'properties': {profile_group.ACCEL + key: value
                   for key, value in _ACCEL_VALUES.items()},
    'patternProperties': {
        '^%s%s$' % (profile_group.RESOURCES,
                    placement_names.RESOURCE_CLASS_PATTERN): {
            'type': 'string', 'pattern': profile_group.AMOUNT.pattern},
        '^%s%s$' % (profile_group.TRAIT, placement_names.TRAIT_PATTERN): {
            'type': 'string', 'enum': list(profile_group.TRAIT_VALUES)},
    },
    'additionalProperties': False,
}

_groups_document = dict(_groups, items=group_document)

#: A name that ``uuidutils.is_uuid_like`` takes: 32 hexadecimal digits
#: once the hyphens are dropped.
_UUID_LIKE = '^-*([0-9A-Fa-f]-*){32}$'

#: POST body as the OpenAPI document describes it: groups as stored, a
#: name that is no UUID.
create_document = _create(dict(_profile, properties=dict(
    _profile['properties'], groups=_groups_document,
    name=dict(parameter_types.name, **{'not': {'pattern': _UUID_LIKE}}))))

#: What a PATCH may change, and the schema of the new value.
_PATCHABLE = {'/description': _description, '/groups': _groups}

#: The same, groups as the OpenAPI document describes them.
_PATCHABLE_DOCUMENT = {'/description': _description,
                       '/groups': _groups_document}

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


def _patch_operations(path, value):
    """The operations that set (or, for the description, clear) ``path``."""
    sets = {'type': 'object',
            'properties': {'op': {'enum': ['add', 'replace']},
                           'path': {'const': path}, 'value': value},
            'required': ['op', 'path', 'value'],
            'additionalProperties': False}
    if path != '/description':
        return sets
    # A remove needs no value; one given is checked all the same.
    return {'anyOf': [sets, {'type': 'object',
                             'properties': {'op': {'const': 'remove'},
                                            'path': {'const': path},
                                            'value': value},
                             'required': ['op', 'path'],
                             'additionalProperties': False}]}


#: What :func:`patch_values` accepts: each field changed once, in any
#: order. The OpenAPI document's exact shape; the controller checks a
#: body with :data:`patch` and :func:`patch_values`, for clearer messages.
patch_document = {'anyOf': [
    {'type': 'array', 'prefixItems': list(order), 'items': False,
     'minItems': len(order)}
    for count in range(1, len(_PATCHABLE) + 1)
    for order in itertools.permutations(
        [_patch_operations(path, value)
         for path, value in _PATCHABLE_DOCUMENT.items()], count)]}

list_query = {'name': {'type': 'string', 'minLength': 1}}

delete_query = {
    'type': 'object',
    'properties': {'value': {
        'type': 'string', 'pattern': '^[^,]+(,[^,]+)*$',
        'description_for_errors': 'must be a comma-separated list of '
                                  'names or uuids'}},
    'required': ['value'],
    'additionalProperties': False,
}

SORT_KEYS = ('created_at', 'updated_at', 'name', 'uuid')


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
    profile['groups'] = profile_group.normalize(profile['groups'])
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
        values['groups'] = profile_group.normalize(values['groups'])
    return values


#: A device profile as the API shows it; ``enabled`` from 2.5.
response = parameter_types.resource({
    'uuid': parameter_types.uuid,
    'name': {'type': 'string'},
    'description': parameter_types.nullable_string,
    'groups': {'type': 'array', 'items': parameter_types.string_dict},
    'enabled': {'type': 'boolean'},
    'created_at': parameter_types.timestamp,
    'updated_at': parameter_types.nullable_timestamp,
    'links': parameter_types.links,
}, since=('enabled',))


#: A time as openstack-cyborg 17.0.0 wrote a profile's, and the API does
#: before microversion 2.6: Python's ``isoformat(' ')``.
SPACED_TIME = ('^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}'
               '(\\.[0-9]+)?([+-][0-9]{2}:[0-9]{2})?$')


def _shown_alone(profile):
    """The schema ``profile``, its times as a profile shown alone has them."""
    shown = copy.deepcopy(profile)
    for name in ('created_at', 'updated_at'):
        time = shown['properties'][name]
        shown['properties'][name] = {
            'type': time['type'],
            'description': 'From microversion 2.6 an RFC 3339 date-time; '
                           'before, as openstack-cyborg 17.0.0 wrote it, '
                           'with a space instead of the T between the date '
                           'and the time.',
            'anyOf': [{'type': 'string', 'format': 'date-time'},
                      {'type': 'string', 'pattern': SPACED_TIME}]
            + ([{'type': 'null'}] if 'null' in time['type'] else [])}
    return shown


#: ``GET /v2/device_profiles/{uuid_or_name}``: the profile, wrapped.
show_response = {'type': 'object',
                 'properties': {'device_profile': _shown_alone(response)},
                 'required': ['device_profile'],
                 'additionalProperties': False}
