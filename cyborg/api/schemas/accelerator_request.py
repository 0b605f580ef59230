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
"""Accelerator request (ARQ) requests: JSON Schemas and patch rules.

A PATCH body maps ARQ uuids to JSON-patch lists (from 2.8 the PATCH of
one ARQ takes its list alone). Binding adds
``/hostname``, ``/device_rp_uuid`` and ``/instance_uuid`` (and, from 2.1,
an administrator's ``/project_id``); unbinding removes the three.
"""

import itertools

from cyborg.api import microversion
from cyborg.api.schemas import parameter_types
from cyborg.api import validation
from cyborg import exception
from cyborg.i18n import _
from cyborg import states

create = {
    'type': 'object',
    'properties': {
        'device_profile_name': {'type': 'string', 'maxLength': 255},
        # Ignored; python-cyborgclient's --group-id sends a string.
        'device_profile_group_id': {
            'anyOf': [{'type': ['integer', 'null'], 'minimum': 0},
                      {'type': 'string', 'pattern': '^[0-9]+$'}]},
        'image_uuid': parameter_types.nullable_uuid,
    },
    'required': ['device_profile_name'],
    'additionalProperties': False,
}

RESOLVED = 'resolved'

list_query = {
    'instance': parameter_types.uuid,
    'bind_state': {'type': 'string', 'enum': [RESOLVED]},
}

#: The filters that came with paging.
list_query_since = {microversion.PAGING: {
    # A state no ARQ is in lists nothing.
    'state': parameter_types.non_empty_string,
    'hostname': parameter_types.hostname,
    'device_rp_uuid': parameter_types.uuid,
}}

SORT_KEYS = ('created_at', 'updated_at', 'uuid', 'state', 'hostname',
             'instance_uuid', 'device_profile_group_id')

delete_query = {
    'type': 'object',
    'properties': {
        'arqs': parameter_types.uuid_list,
        'instance': parameter_types.uuid,
    },
    'additionalProperties': False,
    # One or the other.
    'oneOf': [{'required': ['arqs']}, {'required': ['instance']}],
    'description_for_errors': 'give either arqs or instance',
}

BIND_PATHS = ('/hostname', '/device_rp_uuid', '/instance_uuid')
PROJECT_PATH = '/project_id'

_VALUE_SCHEMAS = {
    '/hostname': parameter_types.hostname,
    '/device_rp_uuid': parameter_types.uuid,
    '/instance_uuid': parameter_types.uuid,
    PROJECT_PATH: parameter_types.non_empty_string,
}

_operation = {
    'type': 'object',
    'properties': {
        'op': {'type': 'string', 'enum': ['add', 'remove']},
        'path': {'type': 'string', 'enum': list(_VALUE_SCHEMAS)},
        'value': {},
    },
    'required': ['op', 'path'],
    'additionalProperties': False,
}

#: The operations on one ARQ: the body of a PATCH of one from 2.8.
operations = {'type': 'array', 'minItems': 1, 'items': _operation}

patch = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {parameter_types.UUID_PATTERN: operations},
    'additionalProperties': False,
}


def _add(path):
    return {'type': 'object',
            'properties': {'op': {'const': 'add'}, 'path': {'const': path},
                           'value': _VALUE_SCHEMAS[path]},
            'required': ['op', 'path', 'value'],
            'additionalProperties': False}


def _remove(path):
    return {'type': 'object',
            'properties': {'op': {'const': 'remove'},
                           'path': {'const': path}, 'value': {}},
            'required': ['op', 'path'], 'additionalProperties': False}


def _in_any_order(operations):
    return [{'type': 'array', 'prefixItems': list(order), 'items': False,
             'minItems': len(order)}
            for order in itertools.permutations(operations)]


#: The operations of one ARQ, as :func:`patch_values` takes them (every
#: order of a bind, with or without /project_id, or of an unbind): the
#: OpenAPI document's exact shape. The controller checks a body with
#: :data:`patch` (or :data:`operations`) and :func:`patch_values`, for
#: clearer messages.
operations_document = {'anyOf': (
    _in_any_order([_add(path) for path in BIND_PATHS]) +
    _in_any_order([_add(path) for path in BIND_PATHS + (PROJECT_PATH,)]) +
    _in_any_order([_remove(path) for path in BIND_PATHS]))}

patch_document = {
    'type': 'object', 'minProperties': 1,
    'patternProperties': {
        parameter_types.UUID_PATTERN: operations_document},
    'additionalProperties': False,
}


def _invalid(uuid, reason):
    return exception.InvalidParameterValue(name=_('field %s') % uuid,
                                           reason=reason)


def patch_values(uuid, operations, version):
    """What the conductor is asked to do with one ARQ.

    :returns: the bind values ({'hostname', 'device_rp_uuid',
        'instance_uuid'[, 'project_id']}) or None to unbind.
    :raises InvalidParameterValue: the operations are not a bind or an
        unbind.
    """
    ops = {op['op'] for op in operations}
    if len(ops) != 1:
        raise _invalid(uuid, _('operations must be all add (bind) or all '
                               'remove (unbind)'))
    paths = [op['path'] for op in operations]
    if len(set(paths)) != len(paths):
        raise _invalid(uuid, _('a path is given more than once'))
    if ops == {'remove'}:
        if sorted(paths) != sorted(BIND_PATHS):
            raise _invalid(uuid, _('unbinding removes exactly %s') %
                           ', '.join(BIND_PATHS))
        return None
    wanted = set(BIND_PATHS)
    if PROJECT_PATH in paths:
        if version < microversion.PROJECT_ID_IN_BIND:
            raise _invalid(uuid, _('%(path)s needs microversion '
                                   '%(version)s') % {
                'path': PROJECT_PATH,
                'version': microversion.PROJECT_ID_IN_BIND})
        wanted.add(PROJECT_PATH)
    if set(paths) != wanted:
        raise _invalid(uuid, _('binding adds exactly %s') %
                       ', '.join(sorted(wanted)))
    values = {}
    for index, op in enumerate(operations):
        if 'value' not in op:
            raise _invalid(uuid, _('%s needs a value') % op['path'])
        validation.validate(_VALUE_SCHEMAS[op['path']], op['value'],
                            _('field %(uuid)s/%(index)d/value') % {
                                'uuid': uuid, 'index': index})
        values[op['path'][1:]] = op['value']
    for key in ('device_rp_uuid', 'instance_uuid'):
        values[key] = values[key].lower()
    return values


UNRESOLVED_STATES = sorted(set(states.ALL_STATES) - states.RESOLVED_STATES)

#: An ARQ as the API shows it.
response = parameter_types.resource({
    'uuid': parameter_types.uuid,
    'state': {'type': 'string', 'enum': list(states.ALL_STATES)},
    'device_profile_name': {'type': 'string'},
    'device_profile_group_id': {'type': 'integer', 'minimum': 0},
    'hostname': parameter_types.nullable_string,
    'device_rp_uuid': parameter_types.nullable_string,
    'instance_uuid': parameter_types.nullable_string,
    'project_id': parameter_types.nullable_string,
    'attach_handle_type': parameter_types.nullable_string,
    'attach_handle_uuid': parameter_types.nullable_string,
    'attach_handle_info': parameter_types.string_dict,
    'links': parameter_types.links,
    'created_at': parameter_types.timestamp,
    'updated_at': parameter_types.nullable_timestamp,
})

#: ``POST /v2/accelerator_requests``: the ARQs made.
create_response = {'type': 'object',
                   'properties': {'arqs': {'type': 'array',
                                           'items': response}},
                   'required': ['arqs'], 'additionalProperties': False}
