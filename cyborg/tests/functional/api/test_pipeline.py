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
"""The middleware around the API: health check, size limit, logs, audit."""

import json
import os

import fixtures
import webob

from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures

AUDIT_MAP = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..',
                         'etc', 'cyborg', 'api_audit_map.conf')


class TestPipeline(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.logs = self.useFixture(fixtures.FakeLogger(
            level='INFO', format='%(name)s %(message)s'))

    def _app(self):
        return self.useFixture(cyborg_fixtures.API()).app

    def _call(self, path, **kwargs):
        return webob.Request.blank(path, **kwargs).get_response(self.app)

    def test_health_check_without_token_is_plain(self):
        self.app = self._app()
        response = self._call('/healthcheck')
        self.assertEqual(200, response.status_int)
        response = self._call('/healthcheck',
                              headers={'Accept': 'application/json'})
        self.assertFalse(response.json['detailed'])

    def test_health_check_backends_from_config(self):
        disable = os.path.join(self.useFixture(fixtures.TempDir()).path,
                               'disable')
        # The middleware registers [healthcheck] as it is made: the
        # first app may be this process's first.
        self._app()
        self.conf.config(backends=['disable_by_file'], group='healthcheck')
        from cyborg.api import app
        self.app = app.setup_app()
        # The backend registers its own option as it loads.
        self.conf.config(disable_by_file_path=disable, group='healthcheck')
        self.assertEqual(200, self._call('/healthcheck').status_int)
        open(disable, 'w').close()
        response = self._call('/healthcheck')
        self.assertEqual((503, b'DISABLED BY FILE'),
                         (response.status_int, response.body))

    def test_health_check_details_for_admins_only(self):
        self.app = self._app()

        def detailed(roles):
            return self._call('/healthcheck', headers={
                'X-Auth-Token': 'any', 'X-Roles': roles,
                'Accept': 'application/json'}).json['detailed']
        self.assertTrue(detailed('admin,member,reader'))
        self.assertFalse(detailed('member,reader'))

    def test_health_check_needs_no_keystone(self):
        self.conf.config(www_authenticate_uri='http://keystone.test/v3',
                         group='keystone_authtoken')
        self.app = self._app()
        self.conf.config(auth_strategy='keystone', group='api')
        from cyborg.api import app
        self.app = app.setup_app()
        self.assertEqual(200, self._call('/healthcheck').status_int)
        self.assertEqual(401, self._call('/v2/devices').status_int)

    def test_oversized_body_is_refused_and_nothing_made(self):
        self.conf.config(max_request_body_size=1024,
                         group='oslo_middleware')
        self.app = self._app()
        profile = [{'name': 'big', 'description': 'x' * 2048,
                    'groups': [{'resources:FPGA': '1'}]}]
        response = self._call('/v2/device_profiles', method='POST',
                              content_type='application/json',
                              body=json.dumps(profile).encode())
        self.assertEqual(413, response.status_int)
        self.assertIn('error_message', response.json)
        self.assertEqual([], self._call('/v2/device_profiles').json[
            'device_profiles'])
        profile[0]['description'] = 'small'
        self.assertEqual(201, self._call(
            '/v2/device_profiles', method='POST',
            content_type='application/json',
            body=json.dumps(profile).encode()).status_int)

    def test_one_access_log_line_per_request(self):
        self.app = self._app()
        response = self._call('/v2/devices?type=GPU')
        request_id = response.headers['x-openstack-request-id']
        lines = [line for line in self.logs.output.splitlines()
                 if line.startswith('cyborg.api.app ')]
        self.assertEqual(1, len(lines), lines)
        self.assertRegex(lines[0], r'^cyborg\.api\.app %s "GET '
                         r'/v2/devices\?type=GPU" status: %d time: '
                         r'\d+\.\d{3}$' % (request_id, response.status_int))

    def test_audit_by_config(self):
        self.app = self._app()
        self._call('/v2/device_profiles')
        self.assertNotIn('audit.http', self.logs.output)
        self.conf.config(enabled=True, audit_map_file=AUDIT_MAP,
                         group='audit')
        self.conf.config(use_oslo_messaging=False,
                         group='audit_middleware_notifications')
        from cyborg.api import app
        self.app = app.setup_app()
        user = '8f2b7e4c-2a7d-4c1e-9d55-3b1f0e6a9c21'
        # What auth_token passes on: ids are uuids, the catalog names
        # this service's endpoint.
        catalog = [{'type': 'accelerator', 'name': 'cyborg', 'endpoints': [{
            'id': '0c5a7d4e-55a1-4d0b-8a53-1c7e2f9b6d30',
            'publicURL': 'http://localhost/'}]}]
        self._call('/v2/device_profiles', headers={
            'X-User-Id': user,
            'X-Project-Id': '1d6e3a9b-7c2f-4e58-b0a4-9f3c2d1e5a76',
            'X-Service-Catalog': json.dumps(catalog)})
        events = [line for line in self.logs.output.splitlines()
                  if 'Event type: audit.http.' in line]
        self.assertEqual(2, len(events), events)
        self.assertIn("'typeURI': 'service/accelerator/device_profiles'",
                      events[0])
        self.assertIn("'id': '%s'" % user, events[0])
