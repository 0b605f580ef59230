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
"""Version discovery and errors: what ``GET /v2`` and a failure answer."""

from cyborg.api.schemas import parameter_types

_microversion = {'type': 'string', 'pattern': '^[0-9]+\\.[0-9]+$'}

#: One version of the API, as ``GET /`` lists it and ``GET /v2`` shows it.
response = parameter_types.resource({
    'id': {'type': 'string'},
    'status': {'type': 'string', 'enum': ['CURRENT']},
    'min_version': _microversion,
    'max_version': _microversion,
    'links': parameter_types.links,
})

#: ``GET /``: every version.
list_response = parameter_types.resource({
    'name': {'type': 'string'},
    'description': {'type': 'string'},
    'versions': {'type': 'array', 'items': response},
    'default_version': response,
})

#: Every error: ``error_message`` holds JSON text, ``{"faultcode":
#: "Client" | "Server", "faultstring": <message>, "debuginfo": null}``.
fault = {
    'type': 'object',
    'properties': {'error_message': {
        'type': 'string',
        'contentMediaType': 'application/json',
        'contentSchema': parameter_types.resource({
            'faultcode': {'type': 'string', 'enum': ['Client', 'Server']},
            'faultstring': {'type': 'string'},
            'debuginfo': {'type': 'null'},
        }),
    }},
    'required': ['error_message'],
    'additionalProperties': False,
}
