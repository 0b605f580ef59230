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

Keystone (:class:`cyborg.tests.openstack_fixtures.Keystone`) issues a
token per persona of :data:`cyborg_quickstart.keystone.PERSONAS`; the API
checks them with keystonemiddleware as Cyborg's ``cyborg`` service user,
and the policies decide: project isolation and the service-token gates
here, every rule against every persona and a system-scoped token in
``test_keystone_policy_matrix``. ``service`` stands for Nova: its token
goes in ``X-Service-Token`` beside the user's.
"""

import os

import fixtures
import openstack
from openstack import config as openstack_config
from oslo_utils import uuidutils
import requests

from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.api import test_clients
from cyborg.tests import openstack_fixtures

PROFILE = 'ks-dp'


class KeystoneLiveTestCase(test_clients.LiveTestCase):
    """The API behind keystonemiddleware and the real Keystone.

    With ``[oslo_policy] enforce_new_defaults = True``: the personas
    alone. A test case that sets ``ENFORCE_NEW_DEFAULTS = None`` runs with
    the default, 17.0.0's legacy decisions.
    """

    ENFORCE_NEW_DEFAULTS = True

    def setUp(self):
        missing = openstack_fixtures.Keystone.missing()
        if missing:
            self.skipTest(missing)
        self.keystone_fixture = openstack_fixtures.Keystone()
        super().setUp()
        self.keystone = self.keystone_fixture.keystone

    def api_fixture(self):
        self.useFixture(self.keystone_fixture)
        return cyborg_fixtures.API(
            self.keystone_fixture,
            enforce_new_defaults=self.ENFORCE_NEW_DEFAULTS)


class KeystoneTestCase(KeystoneLiveTestCase):

    def setUp(self):
        super().setUp()
        self.assertEqual(201, self.call('POST', '/device_profiles', 'admin',
                                        json=[{'name': PROFILE, 'groups': [
                                            {'resources:FPGA': '1'}]}]
                                        ).status_code)

    def call(self, method, path, persona=None, service=None, token=None,
             system_scope=None, headers=None, **kwargs):
        """``method`` ``path`` with ``persona``'s token (or ``token``).

        ``service`` names the persona whose token goes in
        ``X-Service-Token``.
        """
        headers = dict(headers or {})
        if persona is not None:
            token = self.keystone.token(persona, system_scope)
        if token is not None:
            headers['X-Auth-Token'] = token
        if service is not None:
            headers['X-Service-Token'] = self.keystone.token(service)
        # A path outside /v2 (``/metrics``) comes whole.
        url = path if path.startswith('http') else self.endpoint + path
        return requests.request(method, url, headers=headers, timeout=60,
                                **kwargs)

    def create_arq(self, persona='member'):
        response = self.call('POST', '/accelerator_requests', persona,
                             json={'device_profile_name': PROFILE})
        self.assertEqual(201, response.status_code, response.text)
        [arq] = response.json()['arqs']
        return arq['uuid']

    @staticmethod
    def unbind_patch():
        return [{'op': 'remove', 'path': '/' + field}
                for field in ('hostname', 'device_rp_uuid', 'instance_uuid')]

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

    def patch_as(self, ops, persona, service=None, system_scope=None):
        return self.call('PATCH', self.path, persona, service=service,
                         system_scope=system_scope,
                         json={self.uuid: ops}).status_code

    def patch(self, ops, service=None):
        return self.patch_as(ops, 'member', service)

    def bind(self, service='service'):
        return self.patch(self.bind_patch(), service)

    def unbind(self, service='service'):
        return self.patch(self.unbind_patch(), service)

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

    def test_a_system_scoped_user_token_stays_system_scoped(self):
        # keystonemiddleware sets OpenStack-System-Scope from the service
        # token after the user's: a project-scoped service token must not
        # make the system administrator's token pass as unscoped.
        self.assertEqual(403, self.patch_as(
            self.bind_patch(), 'admin', 'service', system_scope='all'))
        self.assertEqual('Initial', self.state())
        self.assertEqual(202, self.patch_as(self.bind_patch(), 'admin',
                                            'service'))
        self.assertEqual('Bound', self.state())
        self.assertEqual(403, self.patch_as(
            self.unbind_patch(), 'admin', 'service', system_scope='all'))
        self.assertEqual('Bound', self.state())

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

    def test_deleting_by_instance_of_another_project(self):
        # A service account (Nova's user, service role only) or a member
        # of another project, with a service token: nothing is deleted,
        # and the answer is the same as for an instance with no ARQs.
        self.assertEqual(202, self.bind())
        path = '/accelerator_requests?instance='
        for persona in ('service', 'member-b'):
            for instance in (test_clients.INSTANCE,
                             uuidutils.generate_uuid()):
                self.assertEqual(204, self.call(
                    'DELETE', path + instance, persona,
                    service='service').status_code, (persona, instance))
            self.assertEqual('Bound', self.state(), persona)
        self.assertEqual({self.uuid}, self.arq_uuids('member'))
        # The owner's deletion, as Nova makes it, still deletes.
        self.assertEqual(204, self.call(
            'DELETE', path + test_clients.INSTANCE, 'member',
            service='service').status_code)
        self.assertEqual(set(), self.arq_uuids('member'))

    def test_an_administrator_deletes_by_instance(self):
        self.assertEqual(202, self.bind())
        self.assertEqual(204, self.call(
            'DELETE', '/accelerator_requests?instance=' +
            test_clients.INSTANCE, 'admin', service='service').status_code)
        self.assertEqual(set(), self.arq_uuids('member'))


class TestDocumentedPolicyFile(KeystoneTestCase):
    """The example policy.yaml of the policy guide, loaded as it is shown."""

    def _documented_policy(self):
        guide = os.path.join(os.path.dirname(__file__), *(['..'] * 4),
                             'doc', 'source', 'configuration', 'policy.rst')
        with open(guide) as f:
            text = f.read()
        block = text.split('An example policy file', 1)[1].split(
            '.. code-block:: yaml', 1)[1]
        lines = []
        for line in block.splitlines()[1:]:
            if line and not line.startswith('   '):
                break
            lines.append(line[3:])
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'policy.yaml')
        with open(path, 'w') as f:
            f.write('\n'.join(lines))
        return path

    def test_the_example_takes_effect(self):
        profile = {'name': 'example', 'groups': [{'resources:FPGA': '1'}]}
        self.assertEqual(403, self.call('GET', '/devices',
                                        'member').status_code)
        self.useFixture(cyborg_fixtures.Policy(self._documented_policy(),
                                               enforce_new_defaults=True))
        self.assertEqual(200, self.call('GET', '/devices',
                                        'member').status_code)
        self.assertEqual(200, self.call('GET', '/devices',
                                        'reader').status_code)
        # admin is no longer enough to administer Cyborg.
        self.assertEqual(403, self.call('POST', '/device_profiles', 'admin',
                                        json=[profile]).status_code)
