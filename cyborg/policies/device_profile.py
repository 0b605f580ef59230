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
"""Policy rules of device profiles (they belong to no project)."""

from cyborg.policies import base

GET_ALL = 'cyborg:device_profile:get_all'
GET_ONE = 'cyborg:device_profile:get_one'
CREATE = 'cyborg:device_profile:create'
DELETE = 'cyborg:device_profile:delete'

PATH = '/v2/device_profiles'


def list_rules():
    return [
        base.rule(GET_ALL, base.ADMIN_OR_ANY_READER,
                  'List device profiles.', [('GET', PATH)],
                  base.LEGACY_ANYONE),
        base.rule(GET_ONE, base.ADMIN_OR_ANY_READER,
                  'Show a device profile.',
                  [('GET', PATH + '/{device_profile_uuid_or_name}')],
                  base.LEGACY_ANYONE),
        base.rule(CREATE, base.ADMIN, 'Create a device profile.',
                  [('POST', PATH)], base.LEGACY_ADMIN),
        base.rule(DELETE, base.ADMIN, 'Delete device profiles.',
                  [('DELETE', PATH + '/{device_profile_uuid_or_name}'),
                   ('DELETE', PATH + '?value={names_or_uuids}')],
                  base.LEGACY_ADMIN),
    ]
