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
"""Version 2 of the API: the whole HTTP surface.

Every route, also served without the ``/v2`` prefix but for the OpenAPI
document (a test walks the controllers and compares them with this list
and with :mod:`cyborg.api.openapi`; the PATCH, enable and disable of
device profiles need microversion 2.5)::

    GET    /v2
    GET    /v2/openapi.json
    GET    /v2/device_profiles
    POST   /v2/device_profiles
    DELETE /v2/device_profiles
    GET    /v2/device_profiles/{uuid_or_name}
    PATCH  /v2/device_profiles/{uuid_or_name}
    DELETE /v2/device_profiles/{uuid_or_name}
    POST   /v2/device_profiles/{uuid_or_name}/enable
    POST   /v2/device_profiles/{uuid_or_name}/disable
    GET    /v2/accelerator_requests
    POST   /v2/accelerator_requests
    PATCH  /v2/accelerator_requests
    DELETE /v2/accelerator_requests
    GET    /v2/accelerator_requests/{uuid}
    PATCH  /v2/accelerator_requests/{uuid}
    DELETE /v2/accelerator_requests/{uuid}
    GET    /v2/devices
    GET    /v2/devices/{uuid}
    POST   /v2/devices/{uuid}/enable
    POST   /v2/devices/{uuid}/disable
    GET    /v2/deployables
    GET    /v2/deployables/{uuid}
    PATCH  /v2/deployables/{uuid}/program
    PATCH  /v2/deployables/{uuid}/program/{uuid}
    GET    /v2/attributes
    POST   /v2/attributes
    GET    /v2/attributes/{uuid}
    DELETE /v2/attributes/{uuid}
"""

import pecan
from webob import exc

from cyborg.api.controllers import links
from cyborg.api.controllers.v2 import accelerator_request
from cyborg.api.controllers.v2 import attribute
from cyborg.api.controllers.v2 import deployable
from cyborg.api.controllers.v2 import device
from cyborg.api.controllers.v2 import device_profile
from cyborg.api import openapi
import cyborg.conf

CONF = cyborg.conf.CONF


class Controller:
    """``/v2``: its version document and its collections."""

    def __init__(self, version_document):
        self._version_document = version_document
        self.collections = {
            'device_profiles': device_profile.DeviceProfilesController(),
            'accelerator_requests':
                accelerator_request.AcceleratorRequestsController(),
            'devices': device.DevicesController(),
            'deployables': deployable.DeployablesController(),
            'attributes': attribute.AttributesController(),
        }

    @pecan.expose(generic=True, template='json')
    def index(self):
        raise exc.HTTPMethodNotAllowed()

    @index.when(method='GET', template='json')
    def index_get(self):
        return self._version_document('v2.0', links.base_url() + '/v2/')

    @pecan.expose(generic=True, template='json', route='openapi.json')
    def openapi(self):
        raise exc.HTTPMethodNotAllowed(headers={'Allow': 'GET'})

    @openapi.when(method='GET', template='json')
    def openapi_get(self):
        """The OpenAPI description of the API (public)."""
        return openapi.document(
            links.base_url(), token=CONF.api.auth_strategy != 'noauth')

    @pecan.expose()
    def _lookup(self, collection, *remainder):
        controller = self.collections.get(collection)
        if controller is None:
            raise exc.HTTPNotFound()
        return controller, remainder
