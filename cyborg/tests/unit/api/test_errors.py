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
"""The exception table and the error body."""

import json

from oslo_db import exception as db_exc
import webob

from cyborg.api import errors
from cyborg.api import microversion
from cyborg import exception
from cyborg.tests import base


class TestStatus(base.TestCase):

    def test_families(self):
        for exc, status in (
                (exception.InvalidParameterValue(name='a', reason='b'), 400),
                (exception.PolicyNotAuthorized(action='x'), 403),
                (exception.DeviceNotFound(uuid='u'), 404),
                (exception.NotAcceptable(reason='r'), 406),
                (exception.DuplicateEntry(kind='k', field='f', value='v'),
                 409),
                (exception.AcceleratorRequestInvalidState(
                    uuid='u', state='s', allowed='a'), 409),
                (exception.AcceleratorRequestsUnresolved(instance='i'), 423),
                (exception.ServiceUnavailable(reason='r'), 503),
                (exception.ProgrammingFailed(deployable='d', reason='r'),
                 502),
                (exception.CyborgException(), 500),
                (ValueError(), 500)):
            self.assertEqual(status, errors.status_of(exc), repr(exc))

    def test_statuses_from_a_microversion(self):
        # Well-formed requests that name what is missing, or what cannot
        # take the call: 400 before 2.7, as the older service answered.
        for exc, status in (
                (exception.MarkerNotFound(marker='m'), 404),
                (exception.MissingReference(name='n', reason='r'), 404),
                (exception.NotProgrammable(deployable='d', reason='r'),
                 409)):
            self.assertEqual(400, errors.status_of(exc), repr(exc))
            for version in (None, microversion.MIN_VERSION,
                            microversion.OWN_FORMATS):
                self.assertEqual(400, errors.status_of(exc, version))
            self.assertEqual(status, errors.status_of(
                exc, microversion.NAMED_OBJECTS))
            self.assertEqual(status, errors.response_for(
                exc, microversion.MAX_VERSION).status_int)
        self.assertEqual(400, errors.status_of(
            exception.InvalidParameterValue(name='a', reason='b'),
            microversion.MAX_VERSION))

    def test_every_family_is_mapped(self):
        # A new direct subclass of CyborgException needs a row.
        families = exception.CyborgException.__subclasses__()
        mapped = {family for family, _status in errors.STATUS_BY_FAMILY
                  if issubclass(family, exception.CyborgException)}
        self.assertEqual(set(families), mapped)


def _fault(body):
    return json.loads(json.loads(body)['error_message'])


class TestBody(base.TestCase):

    def test_client_error(self):
        fault = _fault(errors.fault_body(404, 'gone'))
        self.assertEqual({'faultcode': 'Client', 'faultstring': 'gone',
                          'debuginfo': None}, fault)

    def test_host_failure_says_why(self):
        response = errors.response_for(exception.ProgrammingFailed(
            deployable='d1', reason='fpgaconf exited with 1'))
        self.assertEqual(502, response.status_int)
        self.assertIn('fpgaconf exited with 1',
                      _fault(response.body)['faultstring'])

    def test_database_unreachable_is_unavailable(self):
        response = errors.response_for(db_exc.DBConnectionError(
            'connection to server at "db.example" failed'))
        self.assertEqual(503, response.status_int)
        fault = _fault(response.body)
        self.assertEqual('Server', fault['faultcode'])
        self.assertEqual(errors.DATABASE_UNAVAILABLE, fault['faultstring'])

    def test_server_error_hides_details(self):
        response = errors.response_for(RuntimeError('secret detail'))
        self.assertEqual(500, response.status_int)
        fault = _fault(response.body)
        self.assertEqual('Server', fault['faultcode'])
        self.assertNotIn('secret', fault['faultstring'])

    def test_remote_traceback_is_not_shown(self):
        exc = exception.DeviceNotFound(uuid='u')
        # What oslo.messaging makes of an exception raised remotely.
        remote = type('DeviceNotFound_Remote', (type(exc),), {
            '__str__': lambda self: 'message\nTraceback: secret'})(uuid='u')
        fault = _fault(errors.response_for(remote).body)
        self.assertEqual('Device u could not be found.', fault['faultstring'])


class TestFormatter(base.TestCase):

    def _app(self, status, body, content_type='text/plain'):
        def app(environ, start_response):
            start_response(status, [('Content-Type', content_type)])
            return [body]
        return errors.ErrorFormatter(app)

    def test_plain_error_is_wrapped(self):
        response = webob.Request.blank('/').get_response(
            self._app('401 Unauthorized', b'Authentication required'))
        self.assertEqual(401, response.status_int)
        self.assertEqual('application/json', response.content_type)
        self.assertEqual('Authentication required',
                         _fault(response.body)['faultstring'])

    def test_keystonemiddleware_error_is_wrapped(self):
        body = json.dumps({'error': {'code': 401, 'title': 'Unauthorized',
                                     'message': 'The request you have made '
                                                'requires authentication.'}})
        response = webob.Request.blank('/').get_response(
            self._app('401 Unauthorized', body.encode(), 'application/json'))
        self.assertIn('requires authentication',
                      _fault(response.body)['faultstring'])

    def test_formatted_error_passes(self):
        body = errors.fault_body(409, 'clash')
        response = webob.Request.blank('/').get_response(
            self._app('409 Conflict', body, 'application/json'))
        self.assertEqual(body, response.body)

    def test_success_passes(self):
        response = webob.Request.blank('/').get_response(
            self._app('200 OK', b'{"a": 1}', 'application/json'))
        self.assertEqual(b'{"a": 1}', response.body)

    def test_exception_becomes_500(self):
        def app(environ, start_response):
            raise RuntimeError('boom')
        response = webob.Request.blank('/').get_response(
            errors.ErrorFormatter(app))
        self.assertEqual(500, response.status_int)
        self.assertEqual('Server', _fault(response.body)['faultcode'])
