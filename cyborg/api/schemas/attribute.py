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
"""Attribute requests: create body and list filters."""

from cyborg.api import microversion
from cyborg.api.schemas import parameter_types

# The integer id of a deployable (as listed) or its UUID; clients send
# the id as a number or as a string.
deployable_ref = {
    'anyOf': [
        parameter_types.db_id,
        parameter_types.db_id_string,
        parameter_types.uuid,
    ],
    'description_for_errors': 'must be the id or the UUID of a deployable',
}

_attribute = {
    'type': 'object',
    'properties': {
        'deployable_id': deployable_ref,
        'key': parameter_types.non_empty_string,
        'value': {'type': 'string', 'maxLength': 255},
    },
    'required': ['deployable_id', 'key', 'value'],
    'additionalProperties': False,
}

#: POST body: the attribute, or openstacksdk's ``{"attribute": {...}}``.
create = {
    'anyOf': [
        _attribute,
        {'type': 'object', 'properties': {'attribute': _attribute},
         'required': ['attribute'], 'additionalProperties': False},
    ],
}

list_query = {
    'deployable_id': dict(parameter_types.db_id_string,
                          description_for_errors='must be a deployable id'),
    'key': parameter_types.non_empty_string,
}

#: Since objects are named by UUID the filter takes a deployable's UUID
#: too, which deployables show (they do not show their id).
list_query_since = {microversion.NAMED_OBJECTS: {
    'deployable_id': {
        'anyOf': [parameter_types.db_id_string, parameter_types.uuid],
        'description_for_errors': 'must be the id or the UUID of a '
                                  'deployable'},
}}

SORT_KEYS = ('created_at', 'updated_at', 'uuid', 'key', 'deployable_id')

#: An attribute as the API shows it.
response = parameter_types.resource({
    'uuid': parameter_types.uuid,
    'deployable_id': {'type': 'integer'},
    'key': {'type': 'string'},
    'value': {'type': 'string'},
    'created_at': parameter_types.timestamp,
    'updated_at': parameter_types.nullable_timestamp,
    'links': parameter_types.links,
})
