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
"""Policy rules of devices (hardware belongs to no project)."""

from cyborg.policies import base

GET_ALL = 'cyborg:device:get_all'
GET_ONE = 'cyborg:device:get_one'
ENABLE = 'cyborg:device:enable'
DISABLE = 'cyborg:device:disable'
RELEASE = 'cyborg:device:release'

PATH = '/v2/devices'


def list_rules():
    return [
        base.rule(GET_ALL, base.PROJECT_MANAGER_OR_ADMIN, 'List devices.',
                  [('GET', PATH)], base.LEGACY_ADMIN_API),
        base.rule(GET_ONE, base.PROJECT_MANAGER_OR_ADMIN, 'Show a device.',
                  [('GET', PATH + '/{device_uuid}')], base.LEGACY_ADMIN_API),
        base.rule(ENABLE, base.ADMIN,
                  'Enable a device: its inventory is offered again.',
                  [('POST', PATH + '/{device_uuid}/enable')],
                  base.LEGACY_ADMIN_API),
        base.rule(DISABLE, base.ADMIN,
                  'Disable a device: its whole inventory is reserved.',
                  [('POST', PATH + '/{device_uuid}/disable')],
                  base.LEGACY_ADMIN_API),
        base.rule(RELEASE, base.ADMIN,
                  'Release a quarantined device: its inventory is offered '
                  'again (microversion 2.9).',
                  [('POST', PATH + '/{device_uuid}/release')],
                  base.LEGACY_ADMIN_API),
    ]
