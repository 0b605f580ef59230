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
"""openstack-cyborg 17.0.0's WSGI application for requests from Nova.

tools/bench/legacy_wsgi.py's application (the paste pipeline without
``authtoken``) behind what Keystone's ``authtoken`` would add to Nova's
requests: Nova's service user is an admin with the ``service`` role. Nova
under tools/bench/nova_boots.py sends a token only; a request that says
who it is (the load generator's ``X-Roles``) is left as it is.
"""

from legacy_wsgi import application as _legacy

_ROLES = {'HTTP_X_ROLES': 'admin,member,reader,service',
          'HTTP_X_SERVICE_ROLES': 'service',
          'HTTP_X_USER_ID': '5f4e3d2c1b0a49f88e7d6c5b4a392817',
          'HTTP_X_PROJECT_ID': '0b1e7a6d5c4f4e3d9a8b7c6d5e4f3a2b',
          'HTTP_X_IDENTITY_STATUS': 'Confirmed'}


def application(environ, start_response):
    if 'HTTP_X_ROLES' not in environ:
        environ.update(_ROLES)
    return _legacy(environ, start_response)
