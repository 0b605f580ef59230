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
UPDATE = 'cyborg:device_profile:update'
ENABLE = 'cyborg:device_profile:enable'
DISABLE = 'cyborg:device_profile:disable'

PATH = '/v2/device_profiles'


def list_rules():
    return [
        base.rule(GET_ALL, base.PROJECT_READER_OR_ADMIN,
                  'List device profiles.', [('GET', PATH)],
                  base.LEGACY_ADMIN_OR_OWNER),
        base.rule(GET_ONE, base.PROJECT_READER_OR_ADMIN,
                  'Show a device profile.',
                  [('GET', PATH + '/{device_profile_uuid_or_name}')],
                  base.LEGACY_ADMIN_OR_OWNER),
        base.rule(CREATE, base.ADMIN, 'Create a device profile.',
                  [('POST', PATH)], base.LEGACY_ADMIN),
        base.rule(DELETE, base.ADMIN, 'Delete device profiles.',
                  [('DELETE', PATH + '/{device_profile_uuid_or_name}'),
                   ('DELETE', PATH + '?value={names_or_uuids}')],
                  base.LEGACY_ADMIN),
        base.rule(UPDATE, base.ADMIN,
                  'Change the description or the groups of a device '
                  'profile (microversion 2.5).',
                  [('PATCH', PATH + '/{device_profile_uuid_or_name}')],
                  base.LEGACY_ADMIN),
        base.rule(ENABLE, base.ADMIN,
                  'Enable a device profile: accelerator requests may be '
                  'created from it again (microversion 2.5).',
                  [('POST', PATH + '/{device_profile_uuid_or_name}/enable')],
                  base.LEGACY_ADMIN),
        base.rule(DISABLE, base.ADMIN,
                  'Disable a device profile: no accelerator request can be '
                  'created from it (microversion 2.5).',
                  [('POST',
                    PATH + '/{device_profile_uuid_or_name}/disable')],
                  base.LEGACY_ADMIN),
    ]
