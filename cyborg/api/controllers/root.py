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
"""``GET /``: the API versions this server offers. Public."""

import pecan
from webob import exc

from cyborg.api.controllers import links
from cyborg.api.controllers import v2
from cyborg.api import microversion

NAME = 'OpenStack Cyborg API'
DESCRIPTION = 'Accelerator lifecycle management for OpenStack.'


def version_document(version_id, href):
    return {'id': version_id, 'status': 'CURRENT',
            'min_version': str(microversion.MIN_VERSION),
            'max_version': str(microversion.MAX_VERSION),
            'links': [{'href': href, 'rel': 'self'}]}


class RootController:

    v2 = v2.Controller(version_document)

    @pecan.expose(generic=True, template='json')
    def index(self):
        raise exc.HTTPMethodNotAllowed()

    @index.when(method='GET', template='json')
    def index_get(self):
        version = version_document('v2', links.base_url() + '/v2')
        return {'name': NAME, 'description': DESCRIPTION,
                'versions': [version], 'default_version': version}

    @pecan.expose()
    def _lookup(self, collection, *remainder):
        # Paths without the /v2 prefix are served as v2.
        controller = self.v2.collections.get(collection)
        if controller is None:
            raise exc.HTTPNotFound()
        return controller, remainder
