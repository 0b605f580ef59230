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
"""The OpenAPI document is served, lists every route and tells the truth.

The routes of the document are those the controllers serve (the walk of
:mod:`test_routes`); every schema in it is a valid JSON Schema; the
api-ref samples and the live responses of :mod:`test_samples` and of
the gabbi files (through :func:`checked`) validate against it (see
:func:`check_response`).
"""

import json
import re

import jsonschema
import os_resource_classes
import os_traits
from oslo_utils import uuidutils
import schemathesis
import webob

from cyborg.api import microversion
from cyborg.api import openapi
from cyborg.api.schemas import device_profile
from cyborg.api import validation
from cyborg import exception
from cyborg.tests import base
from cyborg.tests.functional.api import test_routes

DOCUMENT = openapi.document('http://controller/accelerator')


def _template_pattern(path):
    return re.compile('^%s$' % re.sub(r'\\\{[a-z_]+\\\}', '[^/]+',
                                      re.escape(path)))


_TEMPLATES = [(_template_pattern(path), path) for path in DOCUMENT['paths']]


def _find(method, url):
    path = url.split('?', 1)[0]
    if path.startswith('/accelerator'):
        path = path[len('/accelerator'):]
    if path not in ('', '/') and not path.startswith('/v2'):
        path = '/v2' + path
    for pattern, template in _TEMPLATES:
        if pattern.match(path):
            return DOCUMENT['paths'][template].get(method.lower())
    return None


def operation_of(method, url):
    """The document's operation for a call of ``method`` on ``url``.

    ``url`` may carry the mount prefix (``/accelerator``), the ``/v2``
    prefix or neither, and a query string.
    """
    operation = _find(method, url)
    if operation is None:
        raise AssertionError('%s %s is not in the OpenAPI document' % (
            method, url))
    return operation


def checked(app):
    """``app``, checking each answer to a documented call with the document.

    A call of a method or path that the document does not list (an
    unknown route, say) is not checked.
    """
    def call(environ, start_response):
        answer = {}

        def record(status, headers, exc_info=None):
            answer['status'] = int(status.split(' ', 1)[0])
            return start_response(status, headers, exc_info)
        body = b''.join(app(environ, record))
        method = environ['REQUEST_METHOD']
        if _find(method, environ['PATH_INFO']) is not None:
            check_response(method, environ['PATH_INFO'], answer['status'],
                           json.loads(body) if body else None)
        return [body]
    return call


def check_response(method, url, status, body):
    """Assert ``body`` is what the document says ``status`` answers.

    :param body: the decoded JSON body, or None for an empty one.
    """
    response = operation_of(method, url)['responses'].get(str(status))
    assert response is not None, '%s %s: %s is not documented' % (
        method, url, status)
    content = response.get('content')
    if content is None:
        assert body is None, '%s %s: %s has no body' % (method, url, status)
        return
    jsonschema.validate(body, content['application/json']['schema'],
                        cls=jsonschema.Draft202012Validator)
    if status >= 400:
        fault = json.loads(body['error_message'])
        jsonschema.validate(fault, content['application/json']['schema'][
            'properties']['error_message']['contentSchema'])


def _schemas(node):
    """Every schema object in a part of the document."""
    if isinstance(node, dict):
        if 'schema' in node:
            yield node['schema']
        for value in node.values():
            yield from _schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _schemas(value)


class TestDocument(base.TestCase):

    def test_lists_every_route_the_controllers_serve(self):
        described = {(method.upper(), path)
                     for path, operations in DOCUMENT['paths'].items()
                     for method in operations}
        # Version discovery at the root, and every route of version 2.
        walked = test_routes.walked_routes() | {('GET', '/')}
        self.assertEqual(sorted(walked),
                         sorted(test_routes.shaped(described)))

    def test_every_schema_is_valid(self):
        schemas = list(_schemas(DOCUMENT['paths']))
        schemas += DOCUMENT['components']['schemas'].values()
        self.assertGreater(len(schemas), 100)
        for schema in schemas:
            jsonschema.Draft202012Validator.check_schema(schema)

    def test_schemathesis_reads_every_operation(self):
        schema = schemathesis.openapi.from_dict(DOCUMENT)
        operations = [result.ok() for result in schema.get_all_operations()]
        self.assertEqual(len(openapi.OPERATIONS), len(operations))

    def test_microversion_fields_are_optional(self):
        profile = DOCUMENT['paths']['/v2/device_profiles/{uuid_or_name}'][
            'get']['responses']['200']['content']['application/json'][
                'schema']['properties']['device_profile']
        self.assertIn('enabled', profile['properties'])
        self.assertNotIn('enabled', profile['required'])
        self.assertIn('name', profile['required'])

    def test_says_which_microversion_it_describes(self):
        self.assertEqual(str(microversion.MAX_VERSION),
                         DOCUMENT['info']['version'])
        self.assertEqual('accelerator %s' % (microversion.MAX_VERSION,),
                         DOCUMENT['info']['x-openstack-microversion'])

    def test_the_version_header_is_optional_its_default_stated(self):
        pattern = re.compile(openapi.VERSION_PATTERN)
        for value in ('accelerator latest', 'accelerator 2.0',
                      'accelerator %s' % (microversion.MAX_VERSION,),
                      'compute 2.95, accelerator latest',
                      'accelerator 2.0, accelerator latest'):
            self.assertRegex(value, pattern)
            # What the document allows is served.
            microversion.from_header(value)
        for value in ('accelerator 2.99', 'accelerator 1.0', 'compute 2.1',
                      '', 'accelerator latest, accelerator 2.99'):
            self.assertNotRegex(value, pattern)
        for path, operations in DOCUMENT['paths'].items():
            for method, operation in operations.items():
                headers = [p for p in operation['parameters']
                           if p['in'] == 'header']
                if operation.get('security') == []:
                    self.assertEqual([], headers, (method, path))
                    continue
                self.assertEqual([microversion.HEADER],
                                 [h['name'] for h in headers])
                self.assertFalse(headers[0]['required'])
                self.assertEqual('accelerator 2.0',
                                 headers[0]['schema']['default'])
                self.assertEqual(microversion.MIN_VERSION,
                                 microversion.from_header(None))

    def test_times_of_a_profile_shown_alone_at_every_version(self):
        schema = DOCUMENT['paths']['/v2/device_profiles/{uuid_or_name}'][
            'get']['responses']['200']['content']['application/json'][
                'schema']['properties']['device_profile']
        validator = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.
            FORMAT_CHECKER)
        profile = {'uuid': '00000000-0000-0000-0000-000000000000',
                   'name': 'p', 'description': None, 'groups': [],
                   'links': [{'href': 'http://cyborg/v2/device_profiles/p',
                              'rel': 'self'}], 'updated_at': None}
        for time in ('2026-01-02 03:04:05.678901+00:00',  # before 2.6
                     '2026-01-02T03:04:05.678901+00:00'):
            validator.validate(dict(profile, created_at=time))
        self.assertFalse(validator.is_valid(dict(profile, created_at=5)))

    def test_release_may_answer_locked(self):
        self.assertIn('423', DOCUMENT['paths'][
            '/v2/devices/{uuid}/release']['post']['responses'])

    def test_exclusive_query_parameters(self):
        operation = DOCUMENT['paths']['/v2/accelerator_requests']['delete']
        query = [p for p in operation['parameters'] if p['in'] == 'query']
        self.assertEqual(1, len(query))
        self.assertEqual(('form', True),
                         (query[0]['style'], query[0]['explode']))
        validator = jsonschema.Draft202012Validator(query[0]['schema'])
        uuid = '00000000-0000-0000-0000-000000000000'
        self.assertTrue(validator.is_valid({'arqs': uuid}))
        self.assertTrue(validator.is_valid({'instance': uuid}))
        self.assertFalse(validator.is_valid({}))
        self.assertFalse(validator.is_valid({'arqs': uuid,
                                             'instance': uuid}))

    def test_creates_link_to_what_they_made(self):
        ids = {operation['operationId']
               for operations in DOCUMENT['paths'].values()
               for operation in operations.values()}
        linked = set()
        for path in ('/v2/device_profiles', '/v2/accelerator_requests',
                     '/v2/attributes'):
            links = DOCUMENT['paths'][path]['post']['responses']['201'][
                'links']
            for link in links.values():
                self.assertIn(link['operationId'], ids)
                linked.add(link['operationId'].split()[0])
        self.assertEqual({'GET', 'DELETE'}, linked)

    def test_every_call_may_refuse_a_content_type(self):
        for operations in DOCUMENT['paths'].values():
            for operation in operations.values():
                self.assertIn('415', operation['responses'])
                self.assertIn('400', operation['responses'])

    def test_matching_a_url(self):
        self.assertEqual('GET /v2/devices/{uuid}', operation_of(
            'GET', '/accelerator/v2/devices/abc?x=1')['operationId'])
        self.assertEqual('PATCH /v2/deployables/{uuid}/program/{again}',
                         operation_of('PATCH', '/deployables/a/program/a')[
                             'operationId'])
        self.assertRaises(AssertionError, operation_of, 'GET', '/v2/nope')


class TestDeviceProfileGroups(base.TestCase):
    """The document's groups: those the service takes, as it stores them."""

    def setUp(self):
        super().setUp()
        schema = DOCUMENT['components']['schemas']['DeviceProfileGroup']
        jsonschema.Draft202012Validator.check_schema(schema)
        self.validator = jsonschema.Draft202012Validator(schema)

    def _taken(self, group):
        """``group`` as the service stores it (it raises if refused)."""
        body = {'name': 'n', 'groups': [group]}
        validation.validate(device_profile.create, body, 'body')
        return device_profile.profile_from_body(body)['groups'][0]

    def test_what_the_document_allows_is_taken_as_it_is(self):
        groups = [{'resources:%s' % name: '1'}
                  for name in os_resource_classes.STANDARDS]
        groups += [{'trait:%s' % name: value}
                   for name in os_traits.get_traits()
                   for value in ('required', 'forbidden')]
        groups.append({
            'resources:CUSTOM_FPGA_INTEL_PAC_ARRIA10': '999999999',
            'trait:CUSTOM_' + 'A' * 242: 'required',
            'accel:bitstream_id': '9a17439a-85d0-4c53-a3d3-0f68a2eac896',
            'accel:bitstream_name': 'a.gbs', 'accel:function_id': 'f-1',
            'accel:function_name': 'F_1', 'accel:attach_target': 'none'})
        for group in groups:
            self.assertTrue(self.validator.is_valid(group), group)
            self.assertEqual(group, self._taken(group))

    def test_other_spellings_are_stored_as_the_document_spells_them(self):
        for group in ({'resources: fpga ': ' 1 '},
                      {'trait:custom-fpga-intel': 'Required'},
                      {'accel:Attach-Target': ' VM'}):
            self.assertFalse(self.validator.is_valid(group), group)
            self.assertTrue(self.validator.is_valid(self._taken(group)),
                            group)

    def test_what_the_service_refuses_the_document_does_not_allow(self):
        for group in ({'resources:FPGA_X': '1'}, {'resources:FPGA': '0'},
                      {'resources:FPGA': '1000000000'},
                      {'trait:HW_NOT_A_TRAIT': 'required'},
                      {'trait:CUSTOM_X': 'wanted'}, {'resources:CUSTOM_': '1'},
                      {'trait:CUSTOM_' + 'A' * 243: 'required'},
                      {'accel:bitstream_id': 'x'}, {'accel:other': 'x'},
                      {'accel:attach_target': 'vm'}, {'other:FPGA': '1'}):
            self.assertFalse(self.validator.is_valid(group), group)
            self.assertRaises(exception.InvalidParameterValue,
                              self._taken, group)

    def test_a_profile_name_is_no_uuid(self):
        profile = DOCUMENT['paths']['/v2/device_profiles']['post'][
            'requestBody']['content']['application/json']['schema'][
                'anyOf'][1]
        self.assertEqual({'$ref': '#/components/schemas/DeviceProfileGroup'},
                         profile['properties']['groups']['items'])
        name = jsonschema.Draft202012Validator(profile['properties']['name'])
        for uuid_like in ('9a17439a-85d0-4c53-a3d3-0f68a2eac896',
                          '9A17439A85D04C53A3D30F68A2EAC896',
                          '-9a17439a85d04c53a3d30f68a2eac-896-'):
            self.assertTrue(uuidutils.is_uuid_like(uuid_like))
            self.assertFalse(name.is_valid(uuid_like), uuid_like)
        for other in ('fpga', '9a17439a85d04c53a3d30f68a2eac89',
                      '9a17439a85d04c53a3d30f68a2eac896a'):
            self.assertFalse(uuidutils.is_uuid_like(other))
            self.assertTrue(name.is_valid(other), other)


class TestServed(test_routes.APITestCase):

    def _get(self, **headers):
        request = webob.Request.blank('/v2/openapi.json',
                                      base_url='http://cloud:8080',
                                      headers=headers)
        request.script_name = '/accelerator'
        return request.get_response(self.app)

    def test_served_with_the_public_url(self):
        response = self._get(Accept='application/json')
        self.assertEqual(200, response.status_int)
        self.assertEqual('application/json', response.content_type)
        self.assertEqual([{'url': 'http://cloud:8080/accelerator'}],
                         response.json['servers'])
        self.assertEqual(DOCUMENT['paths'], response.json['paths'])
        check_response('GET', '/v2/openapi.json', 200, response.json)

    def test_without_authentication_no_token_is_asked_for(self):
        # The APITestCase API runs with [api] auth_strategy = noauth.
        self.assertEqual('noauth', self.conf.conf.api.auth_strategy)
        self.assertEqual([{'token': []}], DOCUMENT['security'])
        self.assertEqual([], self._get().json['security'])

    def test_other_methods_are_refused(self):
        for method in ('POST', 'PATCH', 'DELETE'):
            request = webob.Request.blank('/v2/openapi.json', method=method)
            response = request.get_response(self.app)
            self.assertEqual(405, response.status_int, method)
            self.assertEqual('GET', response.headers['Allow'])
