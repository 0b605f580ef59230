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
