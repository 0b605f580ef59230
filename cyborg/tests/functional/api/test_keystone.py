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
policies decide: every rule against every persona and a system-scoped
token, project isolation, and the service-token gates. ``service`` stands
for Nova: its token goes in ``X-Service-Token`` beside the user's.
"""

import os

import fixtures
import openstack
from openstack import config as openstack_config
from oslo_utils import uuidutils
import requests

from cyborg import policies
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.api import test_clients

PROFILE = 'ks-dp'


class KeystoneLiveTestCase(test_clients.LiveTestCase):
    """The API behind keystonemiddleware and the real Keystone.

    With ``[oslo_policy] enforce_new_defaults = True``: the personas
    alone. A test case that sets ``ENFORCE_NEW_DEFAULTS = None`` runs with
    the default, 17.0.0's legacy decisions.
    """

    ENFORCE_NEW_DEFAULTS = True

    def setUp(self):
        missing = cyborg_fixtures.Keystone.missing()
        if missing:
            self.skipTest(missing)
        self.keystone_fixture = cyborg_fixtures.Keystone()
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


#: The callers of the policy matrix; ``system`` is the administrator with
#: a system-scoped token.
MATRIX_PERSONAS = ('admin', 'manager', 'member', 'reader', 'member-b',
                   'service', 'other', 'system')
V2_5 = {'OpenStack-API-Version': 'accelerator 2.5'}
V2_9 = {'OpenStack-API-Version': 'accelerator 2.9'}


class PolicyMatrixCase(KeystoneTestCase):
    """Policy rules against every persona, with real tokens.

    The controllers authorise before they validate, so a write that
    policy allows is answered ``400`` for the bad query or body it is
    sent with, and changes nothing. Reads and the writes of accelerator
    requests use real objects: those of ``project-a``, which the other
    projects cannot find (``404``).
    """

    def api_fixture(self):
        # /metrics is served only while enabled.
        self.conf.config(enabled=True, group='metrics')
        return super().api_fixture()

    def _requests(self):
        """Per rule: the request, or a callable that makes it per persona."""
        def admin_get(path):
            [item] = self.call('GET', path, 'admin').json()[
                path.strip('/')][:1]
            return item

        profile = admin_get('/device_profiles')['uuid']
        device = admin_get('/devices')['uuid']
        deployable = admin_get('/deployables')['uuid']
        attribute = admin_get('/attributes')['uuid']
        arq = self.create_arq()
        arqs = 'accelerator_requests'

        def arq_update(persona):
            uuid = self.create_arq()
            return {'method': 'PATCH', 'path': '/%s/%s' % (arqs, uuid),
                    'service': 'service', 'json': {uuid: self.unbind_patch()}}

        def arq_delete(persona):
            return {'method': 'DELETE',
                    'path': '/%s/%s' % (arqs, self.create_arq())}

        def req(method, path, **kwargs):
            return dict(kwargs, method=method, path=path)

        dp = '/device_profiles/' + PROFILE
        return {
            'cyborg:device:get_all': req('GET', '/devices'),
            'cyborg:device:get_one': req('GET', '/devices/' + device),
            'cyborg:device:enable': req(
                'POST', '/devices/%s/enable?bad=1' % device),
            'cyborg:device:disable': req(
                'POST', '/devices/%s/disable?bad=1' % device),
            'cyborg:device:release': req(
                'POST', '/devices/%s/release?bad=1' % device,
                headers=V2_9),
            'cyborg:deployable:get_all': req('GET', '/deployables'),
            'cyborg:deployable:get_one': req(
                'GET', '/deployables/' + deployable),
            'cyborg:deployable:program': req(
                'PATCH', '/deployables/%s/program' % deployable, json={}),
            'cyborg:attribute:get_all': req('GET', '/attributes'),
            'cyborg:attribute:get_one': req(
                'GET', '/attributes/' + attribute),
            'cyborg:attribute:create': req('POST', '/attributes', json={}),
            'cyborg:attribute:delete': req(
                'DELETE', '/attributes/%s?bad=1' % attribute),
            'cyborg:device_profile:get_all': req('GET', '/device_profiles'),
            'cyborg:device_profile:get_one': req(
                'GET', '/device_profiles/' + profile),
            'cyborg:device_profile:create': req(
                'POST', '/device_profiles', json={}),
            'cyborg:device_profile:delete': req('DELETE', dp + '?bad=1'),
            'cyborg:device_profile:update': req(
                'PATCH', dp, json={}, headers=V2_5),
            'cyborg:device_profile:enable': req(
                'POST', dp + '/enable?bad=1', headers=V2_5),
            'cyborg:device_profile:disable': req(
                'POST', dp + '/disable?bad=1', headers=V2_5),
            'cyborg:arq:get_all': req('GET', '/' + arqs),
            'cyborg:arq:get_one': req('GET', '/%s/%s' % (arqs, arq)),
            'cyborg:arq:create': req('POST', '/' + arqs, json={}),
            'cyborg:arq:update': arq_update,
            'cyborg:arq:delete': arq_delete,
            'cyborg:metrics:get': req(
                'GET', self.endpoint.rsplit('/v2', 1)[0] + '/metrics'),
        }

    def statuses(self, rules):
        """{rule: the status of each of MATRIX_PERSONAS}."""
        actual = {}
        for rule, request in sorted(self._requests().items()):
            if rule not in rules:
                continue
            statuses = []
            for persona in MATRIX_PERSONAS:
                kwargs = request(persona) if callable(request) else request
                if persona == 'system':
                    kwargs = dict(kwargs, persona='admin',
                                  system_scope='all')
                else:
                    kwargs = dict(kwargs, persona=persona)
                statuses.append(self.call(**kwargs).status_code)
            actual[rule] = tuple(statuses)
        return actual


class TestPolicyMatrix(PolicyMatrixCase):
    """Every rule, with ``enforce_new_defaults = True``."""

    def test_every_rule(self):
        admin_only = (400, 403, 403, 403, 403, 403, 403, 403)
        managers = (200, 200, 403, 403, 403, 403, 403, 403)
        readers = (200, 200, 200, 200, 200, 403, 403, 403)
        expected = {
            # persona: admin manager member reader member-b service other
            # system
            'cyborg:device:get_all': managers,
            'cyborg:device:get_one': managers,
            'cyborg:device:enable': admin_only,
            'cyborg:device:disable': admin_only,
            'cyborg:device:release': admin_only,
            'cyborg:deployable:get_all': managers,
            'cyborg:deployable:get_one': managers,
            'cyborg:deployable:program': admin_only,
            'cyborg:attribute:get_all': managers,
            'cyborg:attribute:get_one': managers,
            'cyborg:attribute:create': admin_only,
            'cyborg:attribute:delete': admin_only,
            'cyborg:device_profile:get_all': readers,
            'cyborg:device_profile:get_one': readers,
            'cyborg:device_profile:create': admin_only,
            'cyborg:device_profile:delete': admin_only,
            'cyborg:device_profile:update': admin_only,
            'cyborg:device_profile:enable': admin_only,
            'cyborg:device_profile:disable': admin_only,
            'cyborg:arq:get_all': readers,
            'cyborg:arq:get_one': (200, 200, 200, 200, 404, 404, 403, 403),
            'cyborg:arq:create': (400, 400, 400, 403, 400, 400, 403, 403),
            'cyborg:arq:update': (202, 202, 202, 403, 404, 404, 403, 403),
            'cyborg:arq:delete': (204, 204, 204, 403, 404, 404, 403, 403),
            'cyborg:metrics:get': (200, 403, 403, 403, 403, 403, 403, 403),
        }
        self.assertEqual(
            sorted(rule.name for rule in policies.list_rules()
                   if rule.name.startswith('cyborg:')),
            sorted(expected))
        self.assertEqual(expected, self.statuses(expected))


class TestLegacyPolicyMatrix(PolicyMatrixCase):
    """With the default configuration the decisions are 17.0.0's.

    The rows where they differ from the new defaults (the whole matrix,
    against 17.0.0 itself, is ``cyborg.tests.unit.test_policy_cyborg17``):
    17.0.0's ``project_*_or_*`` rules fall back to ``admin_or_owner``, so
    anyone with a token of a project (``other`` has only a custom role)
    reads the hardware and the profiles, and reads and requests the
    accelerators of the project.
    """

    ENFORCE_NEW_DEFAULTS = None

    def test_17_decisions(self):
        anyone = (200, 200, 200, 200, 200, 200, 200, 403)
        expected = {
            # persona: admin manager member reader member-b service other
            # system
            'cyborg:device:get_all': anyone,
            'cyborg:deployable:get_one': anyone,
            'cyborg:attribute:get_all': anyone,
            'cyborg:device_profile:get_one': anyone,
            'cyborg:arq:get_all': anyone,
            'cyborg:arq:get_one': (200, 200, 200, 200, 404, 404, 200, 403),
            'cyborg:arq:create': (400, 400, 400, 400, 400, 400, 400, 403),
            # Administrators only, as in 17.0.0.
            'cyborg:device:enable': (400, 403, 403, 403, 403, 403, 403, 403),
        }
        self.assertEqual(expected, self.statuses(expected))


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
