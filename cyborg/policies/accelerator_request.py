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
"""Policy rules of accelerator requests; the target is the ARQ's project."""

from cyborg.policies import base

GET_ALL = 'cyborg:arq:get_all'
GET_ONE = 'cyborg:arq:get_one'
CREATE = 'cyborg:arq:create'
UPDATE = 'cyborg:arq:update'
DELETE = 'cyborg:arq:delete'

PATH = '/v2/accelerator_requests'


def list_rules():
    return [
        base.rule(GET_ALL, base.PROJECT_READER_OR_ADMIN,
                  'List accelerator requests; only an administrator sees '
                  'those of other projects.', [('GET', PATH)],
                  base.LEGACY_ADMIN_OR_OWNER),
        base.rule(GET_ONE, base.PROJECT_READER_OR_ADMIN,
                  'Show an accelerator request.',
                  [('GET', PATH + '/{accelerator_request_uuid}')],
                  base.LEGACY_ADMIN_OR_OWNER),
        base.rule(CREATE, base.PROJECT_MEMBER_OR_SERVICE_OR_ADMIN,
                  'Create accelerator requests for the caller\'s project.',
                  [('POST', PATH)], base.LEGACY_PROJECT_MEMBER_OR_ADMIN),
        base.rule(UPDATE, base.PROJECT_MEMBER_OR_SERVICE_OR_ADMIN,
                  'Bind or unbind accelerator requests.',
                  [('PATCH', PATH),
                   ('PATCH', PATH + '/{accelerator_request_uuid}')],
                  base.LEGACY_ADMIN_OR_OWNER),
        base.rule(DELETE, base.PROJECT_MEMBER_OR_SERVICE_OR_ADMIN,
                  'Delete accelerator requests by uuid or by instance.',
                  [('DELETE', PATH + '?arqs={uuids}'),
                   ('DELETE', PATH + '?instance={instance_uuid}')],
                  base.LEGACY_ADMIN_OR_OWNER),
    ]
