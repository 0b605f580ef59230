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
"""The ``authtoken`` filter of openstack-cyborg's ``api-paste.ini``.

``cyborg.api.middleware.auth_token:AuthTokenMiddleware.factory``: the
application that ``cyborg.api.app:app_factory`` builds authenticates
every request itself, as ``[api] auth_strategy`` says
(:mod:`cyborg.api.auth`), with its own public paths; the filter passes
requests on, so that they are not checked twice.
"""

from oslo_log import log

import cyborg.conf

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


class AuthTokenMiddleware:
    """A filter that leaves authentication to the application."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        return self.app(environ, start_response)

    @classmethod
    def factory(cls, global_config, **local_conf):
        """paste.deploy's filter factory; its options are not read.

        ``acl_public_routes`` named the paths open without a token; the
        application's are version discovery and the OpenAPI document.
        """
        LOG.info('api-paste.ini: the authtoken filter leaves '
                 'authentication to the application ([api] auth_strategy '
                 '= %s); its options are not read', CONF.api.auth_strategy)
        return cls
