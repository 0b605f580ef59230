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
"""Deployable requests: the program patch."""

from cyborg.api.schemas import device
from cyborg.api.schemas import parameter_types

list_query = {}

SORT_KEYS = ('created_at', 'updated_at', 'uuid', 'name', 'device_id',
             'driver_name')

#: ``[{"op": "replace", "path": "/program", "value": [{"image_uuid": U}]}]``
program = {
    'type': 'array', 'minItems': 1, 'maxItems': 1,
    'items': {
        'type': 'object',
        'properties': {
            'op': {'type': 'string', 'enum': ['replace']},
            'path': {'type': 'string', 'enum': ['/program']},
            'value': {
                'type': 'array', 'minItems': 1, 'maxItems': 1,
                'items': {
                    'type': 'object',
                    'properties': {'image_uuid': parameter_types.uuid},
                    'required': ['image_uuid'],
                    'additionalProperties': False,
                },
            },
        },
        'required': ['op', 'path', 'value'],
        'additionalProperties': False,
    },
}

#: A deployable as the API shows it, with its attributes; from 2.9 its
#: device's health.
response = parameter_types.resource({
    'uuid': parameter_types.uuid,
    'parent_id': parameter_types.nullable_integer,
    'root_id': parameter_types.nullable_integer,
    'name': {'type': 'string',
             'description': 'The name of its resource provider, '
                            '<host>_<name on the host>.'},
    'num_accelerators': {'type': 'integer', 'minimum': 0},
    'device_id': parameter_types.nullable_integer,
    # Typed as an array and a string: the document describes the latest
    # microversion, but every answer is checked against it.
    'attributes_list': {
        'type': ['array', 'string'], 'items': parameter_types.string_dict,
        'description': 'An array of one-entry {key: value} objects; '
                       'before microversion 2.6 that array as a JSON '
                       'string.'},
    'rp_uuid': parameter_types.nullable_string,
    'driver_name': parameter_types.nullable_string,
    'bitstream_id': parameter_types.nullable_string,
    # Its device's, from 2.9.
    **device.health,
    'links': parameter_types.links,
    'created_at': parameter_types.timestamp,
    'updated_at': parameter_types.nullable_timestamp,
}, since=tuple(device.health))
