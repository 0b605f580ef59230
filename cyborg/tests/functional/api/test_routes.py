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
"""Every route refuses a caller without roles; the route list is true."""

import inspect
import json
import re

import fixtures as fixtures_lib
import webob

from cyborg.api.controllers import v2
from cyborg import context
from cyborg.db import api as db_api
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import fixtures

ROUTE = re.compile(r'^\s+(GET|POST|PATCH|DELETE)\s+(/v2\S*)$', re.M)

PUBLIC = {('GET', '/v2'), ('GET', '/v2/openapi.json')}


def documented_routes():
    return set(ROUTE.findall(v2.__doc__))


def _shape(path):
    """A route with its placeholders and action words made generic."""
    parts = path.split('/')
    shaped = []
    for index, part in enumerate(parts):
        if part.startswith('{'):
            shaped.append('{}')
        elif index == 4:
            shaped.append('{action}')
        else:
            shaped.append(part)
    return '/'.join(shaped)


def _routes_of(collection, controller):
    """The routes a RestController's methods accept."""
    prefix = '/v2/' + collection
    # Path arguments after the collection, by how many there are.
    shapes = ('', '/{}', '/{}/{action}', '/{}/{action}/{}')
    routes = set()
    for name, method in (('GET', 'get_all'), ('GET', 'get_one'),
                         ('POST', 'post'), ('PATCH', 'patch'),
                         ('DELETE', 'delete')):
        func = getattr(controller, method, None)
        if func is None:
            continue
        if method == 'get_all':
            routes.add((name, prefix))
            continue
        params = list(inspect.signature(func).parameters.values())
        required = [p for p in params if p.default is p.empty]
        for count in range(len(required), len(params) + 1):
            routes.add((name, prefix + shapes[count]))
    # pecan's custom actions: POST /{collection}/{uuid}/<action>.
    for action, methods in getattr(controller, '_custom_actions',
                                   {}).items():
        params = inspect.signature(getattr(controller, action)).parameters
        for name in methods:
            routes.add((name, prefix + '/{}' * len(params) + '/{action}'))
    return routes


def walked_routes():
    """Every (method, shaped path) the controllers serve."""
    walked = set(PUBLIC)
    controller = v2.Controller(lambda *a: None)
    for collection, sub in controller.collections.items():
        walked |= _routes_of(collection, sub)
    return walked


def shaped(routes):
    return {(method, _shape(path)) for method, path in routes}


class TestRoutes(base.TestCase):

    def test_docstring_lists_every_route(self):
        self.assertEqual(sorted(shaped(documented_routes())),
                         sorted(walked_routes()))


class APITestCase(base.TestCase):
    """The API application on a private database, with a conductor."""

    USES_DB = True
    #: ``[oslo_policy] enforce_new_defaults``; None: the default.
    ENFORCE_NEW_DEFAULTS = None

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.RPC())
        self.useFixture(fixtures.Conductor())
        self.app = self.useFixture(fixtures.API(
            enforce_new_defaults=self.ENFORCE_NEW_DEFAULTS)).app


class TestRolelessCaller(APITestCase):
    """A caller with no roles at all is refused everywhere (403).

    With the new defaults: 17.0.0's legacy rules, the default, let anyone
    of a project read and request accelerators (``test_policy_cyborg17``).
    """

    ENFORCE_NEW_DEFAULTS = True

    def setUp(self):
        super().setUp()
        ctx = context.get_admin_context()
        device, deployable, _ = db_utils.create_device_tree(ctx)
        attribute = db_api.create(ctx, 'attribute', {
            'deployable_id': deployable.id, 'key': 'k', 'value': 'v'})
        profile = db_utils.create_profile(ctx)
        arq = db_utils.create_arqs(ctx, profile, project_id='roleless')[0]
        self.values = {
            'device_profiles': profile.uuid,
            'accelerator_requests': arq.uuid,
            'devices': device.uuid,
            'deployables': deployable.uuid,
            'attributes': attribute.uuid,
        }
        unbind = [{'op': 'remove', 'path': '/hostname'},
                  {'op': 'remove', 'path': '/device_rp_uuid'},
                  {'op': 'remove', 'path': '/instance_uuid'}]
        self.bodies = {
            ('POST', 'device_profiles'): [{'name': 'x', 'groups': [
                {'resources:FPGA': '1'}]}],
            ('PATCH', 'device_profiles'): [{
                'op': 'replace', 'path': '/description', 'value': 'x'}],
            ('POST', 'accelerator_requests'): {
                'device_profile_name': profile.name},
            ('PATCH', 'accelerator_requests'): {arq.uuid: unbind},
            # From 2.8 the operations on one ARQ alone.
            ('PATCH', '/v2/accelerator_requests/{uuid}'): unbind,
            ('PATCH', 'deployables'): [{
                'op': 'replace', 'path': '/program',
                'value': [{'image_uuid': profile.uuid}]}],
            ('POST', 'attributes'): {'deployable_id': deployable.id,
                                     'key': 'k2', 'value': 'v'},
        }
        self.queries = {
            ('DELETE', '/v2/device_profiles'): 'value=%s' % profile.name,
            ('DELETE', '/v2/accelerator_requests'): 'arqs=%s' % arq.uuid,
        }

    def _request(self, method, path, prefix='/v2'):
        """Send a documented /v2 route, with its prefix replaced."""
        collection = path.split('/')[2] if path.count('/') > 1 else None
        url = re.sub(r'\{[a-z_]+\}', self.values.get(collection, ''), path)
        query = self.queries.get((method, path))
        if query:
            url += '?' + query
        url = prefix + url[len('/v2'):]
        # The newest microversion, for the routes added by later ones.
        request = webob.Request.blank(url, method=method, headers={
            'X-Roles': '', 'X-Project-Id': 'roleless',
            'Accept': 'application/json',
            'OpenStack-API-Version': 'accelerator latest'})
        body = self.bodies.get((method, path),
                               self.bodies.get((method, collection)))
        if body is not None:
            request.body = json.dumps(body).encode()
            request.content_type = 'application/json'
        return request.get_response(self.app)

    def test_every_route_refuses_a_roleless_caller(self):
        routes = documented_routes()
        self.assertGreater(len(routes), 20)
        for method, path in sorted(routes - PUBLIC):
            response = self._request(method, path)
            self.assertEqual(403, response.status_int,
                             '%s %s: %s' % (method, path, response.body))
            fault = json.loads(json.loads(response.body)['error_message'])
            self.assertIn('Policy does not allow', fault['faultstring'])
            # Also without the /v2 prefix.
            response = self._request(method, path, prefix='')
            self.assertEqual(403, response.status_int, path)

    def test_version_discovery_is_public(self):
        self.assertEqual(200, self._request('GET', '/v2').status_int)
        self.assertEqual(200,
                         self._request('GET', '/v2', prefix='').status_int)
        self.assertEqual(200, self._request('GET',
                                            '/v2/openapi.json').status_int)


class TestShortPaths(APITestCase):
    """A path short of an argument its method needs is no 500."""

    def test_every_method_on_every_prefix_of_a_route(self):
        uuid = '1b2c3d4e-0000-4000-8000-000000000000'
        prefixes = set()
        for _method, path in documented_routes():
            parts = re.sub(r'\{[a-z_]+\}', uuid, path).split('/')
            prefixes |= {'/'.join(parts[:end])
                         for end in range(2, len(parts) + 1)}
        for url in sorted(prefixes):
            for method in ('GET', 'POST', 'PATCH', 'DELETE'):
                request = webob.Request.blank(url, method=method, headers={
                    'Accept': 'application/json',
                    'OpenStack-API-Version': 'accelerator latest'})
                response = request.get_response(self.app)
                self.assertLess(response.status_int, 500,
                                '%s %s: %s' % (method, url, response.body))
                if response.status_int == 405:
                    self.assertTrue(response.headers.get('Allow'), url)

    def test_urls_that_are_not_utf8(self):
        log = self.useFixture(fixtures_lib.FakeLogger())
        for url in ('/v2/devices/%ff', '/v2/%ff/x',
                    '/v2/accelerator_requests?instance=%ff',
                    '/v2/device_profiles?name=a%ffb',
                    # A raw byte, as a client that does not escape sends it.
                    '/v2/devices?type=\xe9'):
            path, _, query = url.partition('?')
            request = webob.Request.blank(path, headers={
                'Accept': 'application/json'})
            request.environ['QUERY_STRING'] = query
            response = request.get_response(self.app)
            self.assertEqual(400, response.status_int, url)
            fault = json.loads(json.loads(response.body)['error_message'])
            self.assertEqual('The URL is not valid UTF-8.',
                             fault['faultstring'])
        self.assertNotIn('Traceback', log.output)


class TestMountedUnderAPrefix(APITestCase):
    """Mounted at /accelerator, every link keeps the prefix."""

    def setUp(self):
        super().setUp()
        self.profile = db_utils.create_profile(context.get_admin_context())

    def _get(self, path):
        request = webob.Request.blank(path, base_url='http://cloud:8080',
                                      headers={'Accept': 'application/json'})
        request.script_name = '/accelerator'
        return request.get_response(self.app).json

    def test_links_follow_script_name(self):
        root = self._get('/')
        self.assertEqual('http://cloud:8080/accelerator/v2',
                         root['versions'][0]['links'][0]['href'])
        self.assertEqual('http://cloud:8080/accelerator/v2/',
                         self._get('/v2')['links'][0]['href'])
        profile = self._get('/v2/device_profiles')['device_profiles'][0]
        self.assertEqual('http://cloud:8080/accelerator/v2/device_profiles/'
                         + self.profile.uuid, profile['links'][0]['href'])
