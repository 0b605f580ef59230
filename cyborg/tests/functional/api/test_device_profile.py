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
"""Lists of device profiles, kept by the API until a profile changes.

In one process, and in two ``cyborg-api`` processes of two workers each,
where a write through one must show in the lists of all.
"""

import requests
import sqlalchemy as sa
import webob

from cyborg.db import api as db_api
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional import services

LATEST = {'OpenStack-API-Version': 'accelerator latest'}
GROUPS = [{'resources:FPGA': '1'}]


class TestListKept(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        # The personas alone: a caller with no known role is refused.
        self.app = self.useFixture(cyborg_fixtures.API(
            enforce_new_defaults=True)).app
        self.statements = []
        engine = db_api.main_context_manager.reader.get_engine()
        sa.event.listen(engine, 'before_cursor_execute', self._count)
        self.addCleanup(sa.event.remove, engine, 'before_cursor_execute',
                        self._count)

    def _count(self, conn, cursor, statement, *args):
        self.statements.append(statement)

    def call(self, method, path, body=None, headers=LATEST):
        request = webob.Request.blank('/v2/device_profiles' + path,
                                      method=method, headers=headers)
        if body is not None:
            request.json = body
        return request.get_response(self.app)

    def names(self, path='', headers=LATEST):
        del self.statements[:]
        response = self.call('GET', path, headers=headers)
        self.assertEqual(200, response.status_int, response.body)
        return [p['name'] for p in response.json['device_profiles']]

    def test_a_kept_list_costs_one_read_and_changes_with_each_write(self):
        for name in ('a', 'b'):
            self.assertEqual(201, self.call('POST', '', [{
                'name': name, 'groups': GROUPS}]).status_int)
        self.assertEqual(['a', 'b'], self.names())
        first = self.call('GET', '').body
        self.assertEqual(['a', 'b'], self.names())
        # The generation alone: the rows were not read again.
        selects = [s for s in self.statements if s.startswith('SELECT')]
        self.assertEqual(1, len(selects), selects)
        self.assertIn('FROM generations', selects[0])

        response = self.call('PATCH', '/a', [{
            'op': 'replace', 'path': '/description', 'value': 'new'}])
        self.assertEqual(200, response.status_int, response.body)
        body = self.call('GET', '').json
        self.assertEqual('new', body['device_profiles'][0]['description'])
        self.assertNotEqual(first, self.call('GET', '').body)
        self.assertEqual(204, self.call('POST', '/b/disable').status_int)
        self.assertEqual([True, False], [
            p['enabled'] for p in self.call('GET', '').json[
                'device_profiles']])
        self.assertEqual(204, self.call('DELETE', '/a').status_int)
        self.assertEqual(['b'], self.names())

    def test_kept_by_microversion_query_and_host(self):
        for name in ('a', 'b'):
            self.call('POST', '', [{'name': name, 'groups': GROUPS}])
        old = self.call('GET', '', headers={}).json
        self.assertNotIn('enabled', old['device_profiles'][0])
        self.assertNotIn('next', old)
        self.assertIn('enabled',
                      self.call('GET', '').json['device_profiles'][0])
        self.assertEqual(['b'], self.names('?name=b'))
        self.assertEqual(['a'], self.names('?name=a'))
        self.assertEqual(['a'], self.names('?limit=1'))
        other = dict(LATEST, Host='other.example.com')
        self.assertTrue(self.call('GET', '', headers=other).json[
            'device_profiles'][0]['links'][0]['href'].startswith(
                'http://other.example.com/v2/'))

    def test_a_refused_query_is_refused_each_time(self):
        for _ in range(2):
            self.assertEqual(400, self.call('GET', '?bogus=1').status_int)
        refused = self.call('GET', '', headers=dict(LATEST, **{
            'X-Roles': 'nothing'}))
        self.assertEqual(403, refused.status_int)


class TestListKeptByProcesses(services.ServicesTestCase):
    """Two cyborg-api processes of two workers each, one conductor.

    Each read opens a connection of its own, which the kernel hands to
    either worker of a process (SO_REUSEPORT): every worker has kept the
    list before each write, and each is read after it.
    """

    READS = 8

    def setUp(self):
        super().setUp()
        self.use_vhost()
        self.start_conductor(0)
        self.apis = []
        for _ in range(2):
            self.start_api()
            self.apis.append(self.api_url)

    def call(self, api, method, path='', body=None):
        response = requests.request(
            method, api + '/device_profiles' + path, json=body,
            headers=LATEST, timeout=30)
        self.assertLess(response.status_code, 300, response.text)
        return response

    def assert_everywhere(self, expected):
        for api in self.apis:
            for _ in range(self.READS):
                self.assertEqual(expected, [
                    (p['name'], p['description'], p['enabled'])
                    for p in self.call(api, 'GET').json()['device_profiles']])

    def test_a_write_through_one_process_shows_in_all(self):
        first, second = self.apis
        self.call(first, 'POST', body=[{'name': 'a', 'groups': GROUPS}])
        self.assert_everywhere([('a', None, True)])
        self.call(second, 'POST', body=[{'name': 'b', 'groups': GROUPS}])
        self.assert_everywhere([('a', None, True), ('b', None, True)])
        self.call(first, 'PATCH', '/a', [{
            'op': 'replace', 'path': '/description', 'value': 'new'}])
        self.assert_everywhere([('a', 'new', True), ('b', None, True)])
        self.call(second, 'POST', '/b/disable')
        self.assert_everywhere([('a', 'new', True), ('b', None, False)])
        self.call(first, 'DELETE', '/a')
        self.assert_everywhere([('b', None, False)])
