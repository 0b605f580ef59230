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
"""Policy rules of deployables (hardware belongs to no project)."""

from cyborg.policies import base

GET_ALL = 'cyborg:deployable:get_all'
GET_ONE = 'cyborg:deployable:get_one'
PROGRAM = 'cyborg:deployable:program'

PATH = '/v2/deployables'


def list_rules():
    return [
        base.rule(GET_ALL, base.PROJECT_MANAGER_OR_ADMIN, 'List deployables.',
                  [('GET', PATH)], base.LEGACY_ADMIN_API),
        base.rule(GET_ONE, base.PROJECT_MANAGER_OR_ADMIN, 'Show a deployable.',
                  [('GET', PATH + '/{deployable_uuid}')],
                  base.LEGACY_ADMIN_API),
        base.rule(PROGRAM, base.ADMIN,
                  'Program an FPGA deployable with a bitstream.',
                  [('PATCH', PATH + '/{deployable_uuid}/program')],
                  base.LEGACY_ADMIN_API),
    ]
