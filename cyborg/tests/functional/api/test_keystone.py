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
"""The live API behind keystonemiddleware, with tokens of a real Keystone.

Keystone (:class:`cyborg.tests.fixtures.Keystone`) issues a token per
persona of :data:`cyborg.demo.keystone.PERSONAS`; the API checks them
with keystonemiddleware as Cyborg's ``cyborg`` service user, and the
policies decide. ``service`` stands for Nova: its token goes in
``X-Service-Token`` beside the user's.
"""

import os

import fixtures
import openstack
from openstack import config as openstack_config
import requests

from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.api import test_clients

PROFILE = 'ks-dp'


class KeystoneTestCase(test_clients.LiveTestCase):

    def setUp(self):
        missing = cyborg_fixtures.Keystone.missing()
        if missing:
            self.skipTest(missing)
        self.keystone_fixture = cyborg_fixtures.Keystone()
        super().setUp()
        self.keystone = self.keystone_fixture.keystone
        self.assertEqual(201, self.call('POST', '/device_profiles', 'admin',
                                        json=[{'name': PROFILE, 'groups': [
                                            {'resources:FPGA': '1'}]}]
                                        ).status_code)

    def api_fixture(self):
        self.useFixture(self.keystone_fixture)
        return cyborg_fixtures.API(self.keystone_fixture)

    def call(self, method, path, persona=None, service=None, token=None,
             system_scope=None, **kwargs):
        """``method`` ``path`` with ``persona``'s token (or ``token``).

        ``service`` names the persona whose token goes in
        ``X-Service-Token``.
        """
        headers = {}
        if persona is not None:
            token = self.keystone.token(persona, system_scope)
        if token is not None:
            headers['X-Auth-Token'] = token
        if service is not None:
            headers['X-Service-Token'] = self.keystone.token(service)
        return requests.request(method, self.endpoint + path,
                                headers=headers, timeout=60, **kwargs)

    def create_arq(self, persona='member'):
        response = self.call('POST', '/accelerator_requests', persona,
                             json={'device_profile_name': PROFILE})
        self.assertEqual(201, response.status_code, response.text)
        [arq] = response.json()['arqs']
        return arq['uuid']

    def arq_uuids(self, persona):
        response = self.call('GET', '/accelerator_requests', persona)
        self.assertEqual(200, response.status_code, response.text)
        return {arq['uuid'] for arq in response.json()['arqs']}


class TestTokens(KeystoneTestCase):

    def test_a_token_is_needed(self):
        self.assertEqual(401, self.call('GET', '/device_profiles').status_code)
        self.assertEqual(401, self.call('GET', '/device_profiles',
                                        token='not-a-token').status_code)
        # Version discovery stays public.
        self.assertEqual(200, requests.get(self.endpoint,
                                           timeout=60).status_code)

    def test_personas_of_hardware_and_profile_rules(self):
        expected = {
            # persona: (GET /devices, GET /device_profiles, POST profile)
            'admin': (200, 200, 201),
            'manager': (200, 200, 403),
            'member': (403, 200, 403),
            'reader': (403, 200, 403),
            'service': (403, 403, 403),
            'other': (403, 403, 403),
        }
        actual = {}
        for persona in expected:
            actual[persona] = (
                self.call('GET', '/devices', persona).status_code,
                self.call('GET', '/device_profiles', persona).status_code,
                self.call('POST', '/device_profiles', persona, json=[{
                    'name': 'dp-' + persona,
                    'groups': [{'resources:FPGA': '1'}]}]).status_code)
        self.assertEqual(expected, actual)

    def test_a_system_scoped_token_is_refused(self):
        for path in ('/devices', '/device_profiles', '/accelerator_requests'):
            self.assertEqual(403, self.call('GET', path, 'admin',
                                            system_scope='all').status_code,
                             path)

    def test_a_role_less_user_is_refused(self):
        self.create_arq()
        for path in ('/device_profiles', '/accelerator_requests',
                     '/deployables', '/attributes'):
            self.assertEqual(403, self.call('GET', path, 'other').status_code,
                             path)
        self.assertEqual(403, self.call(
            'POST', '/accelerator_requests', 'other',
            json={'device_profile_name': PROFILE}).status_code)


class TestCloudsYaml(KeystoneTestCase):
    """openstacksdk finds the API in the catalog with a persona's cloud."""

    def test_clouds(self):
        self.keystone.register_endpoint('accelerator', self.endpoint)
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'clouds.yaml')
        self.keystone.write_clouds_yaml(path)
        clouds = openstack_config.OpenStackConfig(config_files=[path],
                                                  load_envvars=False)
        uuids = {}
        for persona in ('member', 'member-b'):
            connection = openstack.connection.Connection(
                config=clouds.get_one(cloud='cyborg-' + persona))
            self.addCleanup(connection.close)
            acc = connection.accelerator
            uuids[persona] = acc.create_accelerator_request(
                device_profile_name=PROFILE).uuid
            self.assertEqual([uuids[persona]],
                             [a.uuid for a in acc.accelerator_requests()])
        self.assertEqual(set(uuids.values()), self.arq_uuids('admin'))


class TestAcceleratorRequests(KeystoneTestCase):

    def test_projects_are_isolated(self):
        mine = self.create_arq('member')
        theirs = self.create_arq('member-b')
        self.assertEqual({mine}, self.arq_uuids('member'))
        self.assertEqual({mine}, self.arq_uuids('reader'))
        self.assertEqual({theirs}, self.arq_uuids('member-b'))
        self.assertEqual({mine, theirs}, self.arq_uuids('admin'))
        path = '/accelerator_requests/' + mine
        self.assertEqual(200, self.call('GET', path, 'reader').status_code)
        self.assertEqual(404, self.call('GET', path, 'member-b').status_code)
        self.assertEqual(404, self.call('DELETE', path,
                                        'member-b').status_code)
        self.assertEqual(404, self.call(
            'DELETE', '/accelerator_requests?arqs=%s,%s' % (mine, theirs),
            'member-b').status_code)
        self.assertEqual(404, self.call(
            'PATCH', path, 'member-b', service='service',
            json={mine: self.bind_patch()}).status_code)
        self.assertEqual({mine}, self.arq_uuids('member'))

    def test_readers_cannot_write(self):
        uuid = self.create_arq('member')
        self.assertEqual(403, self.call(
            'POST', '/accelerator_requests', 'reader',
            json={'device_profile_name': PROFILE}).status_code)
        self.assertEqual(403, self.call(
            'DELETE', '/accelerator_requests/' + uuid, 'reader').status_code)
        self.assertEqual({uuid}, self.arq_uuids('member'))

    def test_the_service_role_writes_but_does_not_read(self):
        uuid = self.create_arq('service')
        self.assertEqual(set(), self.arq_uuids('member'))
        self.assertEqual(403, self.call('GET', '/accelerator_requests',
                                        'service').status_code)
        self.assertEqual({uuid}, self.arq_uuids('admin'))
        self.assertEqual(204, self.call(
            'DELETE', '/accelerator_requests/' + uuid, 'service').status_code)
        self.assertEqual(set(), self.arq_uuids('admin'))

    def test_unbound_arqs_are_deleted_without_a_service_token(self):
        first, second = self.create_arq(), self.create_arq()
        self.assertEqual(204, self.call(
            'DELETE', '/accelerator_requests/' + first, 'member').status_code)
        self.assertEqual(204, self.call(
            'DELETE', '/accelerator_requests?arqs=' + second,
            'member').status_code)
        self.assertEqual(set(), self.arq_uuids('member'))


class TestServiceTokenGates(KeystoneTestCase):
    """Binding, unbinding and deleting what is bound need Nova's token."""

    def setUp(self):
        super().setUp()
        self.uuid = self.create_arq()
        self.path = '/accelerator_requests/' + self.uuid

    def state(self):
        return self.call('GET', self.path, 'member').json()['state']

    def patch(self, ops, service=None):
        return self.call('PATCH', self.path, 'member', service=service,
                         json={self.uuid: ops}).status_code

    def bind(self, service='service'):
        return self.patch(self.bind_patch(), service)

    def unbind(self, service='service'):
        return self.patch([{'op': 'remove', 'path': '/' + field}
                           for field in ('hostname', 'device_rp_uuid',
                                         'instance_uuid')], service)

    def test_bind_and_unbind(self):
        self.assertEqual(403, self.bind(service=None))
        # keystonemiddleware refuses a service token without the service
        # role as it refuses a bad token.
        self.assertEqual(401, self.bind(service='member'))
        self.assertEqual('Initial', self.state())
        self.assertEqual(202, self.bind())
        self.assertEqual('Bound', self.state())
        self.assertEqual(403, self.unbind(service=None))
        self.assertEqual('Bound', self.state())
        self.assertEqual(202, self.unbind())
        self.assertEqual('Unbound', self.state())

    def test_deleting_a_bound_arq(self):
        self.assertEqual(202, self.bind())
        for path in (self.path, '/accelerator_requests?arqs=' + self.uuid):
            self.assertEqual(403, self.call('DELETE', path,
                                            'member').status_code, path)
            self.assertEqual(401, self.call('DELETE', path, 'member',
                                            service='member').status_code,
                             path)
        self.assertEqual('Bound', self.state())
        self.assertEqual(204, self.call('DELETE', self.path, 'member',
                                        service='service').status_code)
        self.assertEqual(set(), self.arq_uuids('member'))

    def test_deleting_by_instance(self):
        self.assertEqual(202, self.bind())
        path = '/accelerator_requests?instance=' + test_clients.INSTANCE
        self.assertEqual(403, self.call('DELETE', path, 'member').status_code)
        self.assertEqual({self.uuid}, self.arq_uuids('member'))
        self.assertEqual(204, self.call('DELETE', path, 'member',
                                        service='service').status_code)
        self.assertEqual(set(), self.arq_uuids('member'))
