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
"""Device requests: list filters."""

from cyborg.api.schemas import parameter_types
from cyborg import states

# Filter values are matched, not checked: a type, vendor or host that no
# device has lists nothing (as the Tempest plugin expects).
list_query = {
    'type': parameter_types.non_empty_string,
    'vendor': parameter_types.non_empty_string,
    'hostname': parameter_types.hostname,
}

SORT_KEYS = ('created_at', 'updated_at', 'uuid', 'type', 'vendor', 'model',
             'hostname')

#: The actions of ``POST /v2/devices/{uuid}/<action>`` and their status.
ACTIONS = {'enable': states.DEVICE_ENABLED,
           'disable': states.DEVICE_MAINTAINING}

#: A device's health as the API shows it, from 2.9 (devices and
#: deployables alike).
health = {
    'health': {'type': 'string',
               'enum': list(states.DEVICE_HEALTHS) + [
                   states.DEVICE_HEALTH_UNKNOWN],
               'description': 'What the host shows of the device: see the '
                              'administrator guide, device health.'},
    'health_reasons': {'type': 'array', 'items': {'type': 'string'},
                       'description': 'Why the device is unhealthy.'},
    'quarantined': {'type': 'boolean',
                    'description': 'Whether its inventory is reserved '
                                   'because it was unhealthy.'},
}

#: A device as the API shows it; ``status`` from 2.3, health from 2.9.
response = parameter_types.resource({
    'uuid': parameter_types.uuid,
    'type': {'type': 'string', 'enum': list(states.DEVICE_TYPES)},
    'vendor': {'type': 'string'},
    'model': {'type': 'string'},
    'std_board_info': parameter_types.nullable_string,
    'vendor_board_info': parameter_types.nullable_string,
    'hostname': {'type': 'string'},
    'status': {'type': 'string', 'enum': list(states.DEVICE_STATUSES)},
    **health,
    'links': parameter_types.links,
    'created_at': parameter_types.timestamp,
    'updated_at': parameter_types.nullable_timestamp,
}, since=('status',) + tuple(health))
