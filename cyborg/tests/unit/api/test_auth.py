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
"""Authentication middleware and the service-token gate."""

import json

import webob

from cyborg.api import auth
from cyborg.api import errors
from cyborg import context
from cyborg import exception
from cyborg.tests import base


def _echo(environ, start_response):
    """Answers with the identity headers it was given."""
    identity = {key: value for key, value in environ.items()
                if key.startswith('HTTP_X_')}
    start_response('200 OK', [('Content-Type', 'application/json')])
    return [json.dumps(identity).encode()]


class TestNoAuth(base.TestCase):

    def _identity(self, headers):
        app = auth.NoAuth(_echo, self.conf.conf)
        return webob.Request.blank('/v2/devices', headers=headers
                                   ).get_response(app).json

    def test_defaults_for_a_caller_without_headers(self):
        identity = self._identity({})
        self.assertEqual('admin,member,reader', identity['HTTP_X_ROLES'])
        self.assertEqual('service', identity['HTTP_X_SERVICE_ROLES'])
        self.assertEqual('cyborg-dev', identity['HTTP_X_PROJECT_ID'])
        self.assertEqual('Confirmed', identity['HTTP_X_IDENTITY_STATUS'])

    def test_claimed_identity_is_kept(self):
        identity = self._identity({'X-Roles': 'reader',
                                   'X-Project-Id': 'p1'})
        self.assertEqual('reader', identity['HTTP_X_ROLES'])
        self.assertEqual('p1', identity['HTTP_X_PROJECT_ID'])
        self.assertNotIn('HTTP_X_SERVICE_ROLES', identity)


class TestKeystoneAuth(base.TestCase):
    """keystonemiddleware guards everything but discovery and OpenAPI."""

    def setUp(self):
        super().setUp()
        # Where clients are told to authenticate; nothing is fetched.
        self.conf.config(www_authenticate_uri='http://keystone.test/v3',
                         group='keystone_authtoken')
        self.app = errors.ErrorFormatter(
            auth.KeystoneAuth(_echo, self.conf.conf))

    def test_discovery_is_public_and_cannot_claim_identity(self):
        for path in ('/', '/v2', '/v2/', '/v2/openapi.json'):
            response = webob.Request.blank(path, headers={
                'X-Roles': 'admin'}).get_response(self.app)
            self.assertEqual(200, response.status_int, path)
            self.assertNotIn('HTTP_X_ROLES', response.json)

    def test_other_paths_need_a_token(self):
        response = webob.Request.blank('/v2/devices', headers={
            'X-Roles': 'admin'}).get_response(self.app)
        self.assertEqual(401, response.status_int)
        fault = json.loads(response.json['error_message'])
        self.assertEqual('Client', fault['faultcode'])

    def test_posting_to_discovery_needs_a_token(self):
        response = webob.Request.blank('/v2', method='POST').get_response(
            self.app)
        self.assertEqual(401, response.status_int)

    def test_service_tokens_need_their_roles(self):
        # openstack-cyborg required them whatever keystonemiddleware's
        # default; so does Cyborg.
        self.conf.set_default('service_token_roles_required', False,
                              group='keystone_authtoken')
        auth.KeystoneAuth(_echo, self.conf.conf)
        self.assertTrue(
            self.conf.conf.keystone_authtoken.service_token_roles_required)


class TestServiceToken(base.TestCase):

    def _context(self, service_roles):
        return context.RequestContext(project_id='p', roles=['member'],
                                      service_roles=service_roles)

    def test_required_by_default(self):
        self.assertRaises(exception.ServiceTokenRequired,
                          auth.require_service_token, self._context([]),
                          'Binding')
        auth.require_service_token(self._context(['service']), 'Binding')

    def test_roles_follow_keystone_authtoken(self):
        self.conf.config(service_token_roles=['nova'],
                         group='keystone_authtoken')
        self.assertRaises(exception.ServiceTokenRequired,
                          auth.require_service_token,
                          self._context(['service']), 'Binding')
        auth.require_service_token(self._context(['nova']), 'Binding')

    def test_gate_can_be_turned_off(self):
        self.conf.config(require_service_token=False, group='api')
        auth.require_service_token(self._context([]), 'Binding')
