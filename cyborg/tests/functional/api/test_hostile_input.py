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
"""Regression tests of what fuzzing the live API (test_fuzz.py) found.

Each answered a 5xx, or changed something, for bad input.
"""

import gc
import json
import warnings

import fixtures as fixtures_lib
import webob

from cyborg.api import openapi
from cyborg.api.schemas import parameter_types
from cyborg import context
from cyborg.tests import db_utils
from cyborg.tests.functional.api import test_routes

#: Content-Type values the API does not take: none names a JSON body.
#: WebOb, parsing a form body for pecan's routing, raised on the first
#: ones (a 500).
BAD_CONTENT_TYPES = {
    'multipart/form-data': 415,
    'multipart/form-data; boundary=': 415,
    'multipart/form-data; boundary=x': 415,
    'application/x-www-form-urlencoded': 415,
    'application/x-www-form-urlencoded; charset=klingon': 415,
    'text/plain': 415,
    'application/xml': 415,
    'garbage': 400,
    ';;;': 400,
    '/json': 400,
}


def _documented_calls():
    """(method, url) of every operation the OpenAPI document lists."""
    uuid = '00000000-0000-0000-0000-000000000000'
    for path, operations in openapi.document('')['paths'].items():
        url = path.replace('{uuid_or_name}', 'kept')
        for name in ('{uuid}', '{again}'):
            url = url.replace(name, uuid)
        for method in operations:
            yield method.upper(), url


class TestHostileInput(test_routes.APITestCase):

    def setUp(self):
        super().setUp()
        ctx = context.get_admin_context()
        self.profile = db_utils.create_profile(ctx, name='kept')
        _, self.deployable, _ = db_utils.create_device_tree(ctx)

    def _call(self, method, url, body=None, raw=None):
        request = webob.Request.blank(url, method=method, headers={
            'Accept': 'application/json'})
        if body is not None or raw is not None:
            request.body = raw if raw is not None else json.dumps(
                body).encode()
            request.content_type = 'application/json'
        response = request.get_response(self.app)
        self.assertLess(response.status_int, 500, response.body)
        return response

    def _profiles(self):
        return [p['name'] for p in self._call(
            'GET', '/v2/device_profiles').json['device_profiles']]

    def test_body_members_are_no_path_arguments(self):
        # pecan made {"ident": ...} the ident of DELETE /{ident}.
        for ident in ('kept', self.profile.uuid, 5, ['kept']):
            response = self._call('DELETE', '/v2/device_profiles',
                                  {'ident': ident})
            self.assertEqual(400, response.status_int, ident)
            self.assertEqual(['kept'], self._profiles())

    def test_query_parameters_are_no_path_arguments(self):
        response = self._call('DELETE', '/v2/device_profiles?ident=kept')
        self.assertEqual(400, response.status_int)
        self.assertEqual(['kept'], self._profiles())

    def test_a_body_that_is_not_utf8(self):
        log = self.useFixture(fixtures_lib.FakeLogger())
        response = self._call('POST', '/v2/device_profiles',
                              raw=b'{"name": "\xcb\x01"}')
        self.assertEqual(400, response.status_int)
        self.assertNotIn('Traceback', log.output)
        self.assertEqual(['kept'], self._profiles())

    def test_a_large_body_leaves_no_open_file(self):
        # webob copied a body over 10 KiB into a temporary file that was
        # never closed (a ResourceWarning, an error in the tests).
        body = {'name': 'big', 'description': 'x' * 200,
                'groups': [{'resources:FPGA': '1',
                            'accel:function_name': 'f%d' % i}
                           for i in range(200)]}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            request = webob.Request.blank(
                '/v2/device_profiles', method='POST',
                body=json.dumps(body).encode(),
                content_type='application/json')
            # As a server hands it over: a stream that cannot seek.
            request.environ['webob.is_body_seekable'] = False
            self.assertGreater(request.content_length, 10 * 1024)
            self.assertEqual(201, request.get_response(self.app).status_int)
            del request
            gc.collect()
        self.assertEqual([], [w for w in caught
                              if issubclass(w.category, ResourceWarning)])

    def test_a_content_type_that_is_not_json(self):
        calls = list(_documented_calls())
        self.assertEqual(len(openapi.OPERATIONS), len(calls))
        for method, url in calls:
            for content_type, status in BAD_CONTENT_TYPES.items():
                headers = {'Content-Type': content_type,
                           'OpenStack-API-Version': 'accelerator latest'}
                # Without a body the media type means nothing (wsgiref
                # gives every request text/plain): it is not read.
                if method == 'GET':
                    response = webob.Request.blank(
                        url, headers=headers).get_response(self.app)
                    where = (url, content_type)
                    self.assertIn(response.status_int, (200, 404), where)
                for body in (b'{}',):
                    request = webob.Request.blank(url, method=method,
                                                  body=body, headers=headers)
                    response = request.get_response(self.app)
                    where = (method, url, content_type, body)
                    self.assertEqual(status, response.status_int, where)
                    fault = json.loads(response.json['error_message'])
                    self.assertEqual('Client', fault['faultcode'], where)
                    self.assertIn(content_type.split(';')[0],
                                  fault['faultstring'], where)
        self.assertEqual(['kept'], self._profiles())

    def test_an_undeclared_method_is_405_whatever_the_version(self):
        # The route is found before the version header is read.
        for method in ('TRACE', 'PUT', 'CONNECT', 'PATCH'):
            for version in ('0', 'accelerator 9.9', 'accelerator 2.0'):
                request = webob.Request.blank(
                    '/v2/device_profiles', method=method,
                    headers={'OpenStack-API-Version': version})
                response = request.get_response(self.app)
                self.assertEqual(405, response.status_int, (method, version))
                self.assertEqual('DELETE, GET, POST',
                                 response.headers['Allow'])

    def test_json_with_parameters_is_taken(self):
        for content_type in ('application/json; charset=UTF-8',
                             'Application/JSON', 'application/merge+json'):
            request = webob.Request.blank(
                '/v2/device_profiles', method='POST', headers={
                    'Content-Type': content_type},
                body=json.dumps({'name': 'json', 'groups': [
                    {'resources:FPGA': '1'}]}).encode())
            self.assertEqual(201, request.get_response(self.app).status_int,
                             content_type)
            self._call('DELETE', '/v2/device_profiles/json')

    def test_ids_beyond_an_integer_column(self):
        # The database cannot hold them: 500 from SQLite's driver before,
        # and PostgreSQL refuses them in a filter.
        too_big = parameter_types.MAX_ID + 1
        for deployable_id in (too_big, str(too_big), 10 ** 30):
            response = self._call('POST', '/v2/attributes', {
                'deployable_id': deployable_id, 'key': 'k', 'value': 'v'})
            self.assertEqual(400, response.status_int, deployable_id)
        response = self._call('GET', '/v2/attributes?deployable_id=%d'
                              % too_big)
        self.assertEqual(400, response.status_int)
        self.assertEqual([], self._call('GET', '/v2/attributes').json[
            'attributes'])
        # The largest id passes the schema: there is no such deployable.
        response = self._call('POST', '/v2/attributes', {
            'deployable_id': parameter_types.MAX_ID, 'key': 'k',
            'value': 'v'})
        self.assertEqual(400, response.status_int)
        self.assertIn('refers to a missing row', json.loads(
            response.json['error_message'])['faultstring'])
        response = self._call('GET', '/v2/attributes?deployable_id=%d'
                              % parameter_types.MAX_ID)
        self.assertEqual([], response.json['attributes'])

    def test_the_id_pattern_is_exact(self):
        pattern = parameter_types.db_id_string['pattern']
        for number in (1, 9, 10, 999999999, 1000000000, 2099999999,
                       2147483639, parameter_types.MAX_ID):
            self.assertRegex(str(number), pattern)
        for text in ('0', '01', '-1', '2147483648', '2147483650',
                     '2200000000', '9999999999', '1 '):
            self.assertNotRegex(text, pattern)

    def test_a_deeply_nested_body(self):
        # json.loads raised RecursionError: a 500. Every documented call
        # that reads a body, at depths the decoder takes and at depths it
        # does not, answers 400 and changes nothing.
        log = self.useFixture(fixtures_lib.FakeLogger())
        for depth in (50000, 5000, 500):
            for opener, closer in (('[', ']'), ('{"a":', '}')):
                raw = (opener * depth + '1' + closer * depth).encode()
                if len(raw) > 100 * 1024:
                    # The body size limit would answer first (413).
                    raw = (opener * 15000 + '1' + closer * 15000).encode()
                refused = set()
                for method, url in _documented_calls():
                    if method == 'DELETE':
                        continue    # Takes no body; would delete 'kept'.
                    request = webob.Request.blank(
                        url, method=method, body=raw, headers={
                            'Content-Type': 'application/json',
                            'OpenStack-API-Version': 'accelerator latest'})
                    response = request.get_response(self.app)
                    where = (method, url, depth, opener)
                    self.assertLess(response.status_int, 500, where)
                    if 'nested more than' in response.text:
                        self.assertEqual(400, response.status_int, where)
                        refused.add((method, url.split('/')[2]))
                self.assertLessEqual({
                    ('POST', 'device_profiles'),
                    ('PATCH', 'device_profiles'),
                    ('POST', 'accelerator_requests'),
                    ('PATCH', 'accelerator_requests'),
                    ('POST', 'attributes'),
                    ('PATCH', 'deployables')}, refused)
        self.assertNotIn('Traceback', log.output)
        self.assertEqual(['kept'], self._profiles())
