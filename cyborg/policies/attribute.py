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
"""Policy rules of deployable attributes (they belong to no project)."""

from cyborg.policies import base

GET_ALL = 'cyborg:attribute:get_all'
GET_ONE = 'cyborg:attribute:get_one'
CREATE = 'cyborg:attribute:create'
DELETE = 'cyborg:attribute:delete'

PATH = '/v2/attributes'


def list_rules():
    return [
        base.rule(GET_ALL, base.PROJECT_MANAGER_OR_ADMIN, 'List attributes.',
                  [('GET', PATH)], base.LEGACY_ADMIN_API),
        base.rule(GET_ONE, base.PROJECT_MANAGER_OR_ADMIN, 'Show an attribute.',
                  [('GET', PATH + '/{attribute_uuid}')],
                  base.LEGACY_ADMIN_API),
        base.rule(CREATE, base.ADMIN, 'Create an attribute.',
                  [('POST', PATH)], base.LEGACY_ADMIN_API),
        base.rule(DELETE, base.ADMIN, 'Delete an attribute.',
                  [('DELETE', PATH + '/{attribute_uuid}')],
                  base.LEGACY_ADMIN_API),
    ]
