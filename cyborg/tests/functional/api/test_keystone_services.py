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
"""Cyborg and the services it calls, all behind the real Keystone.

The API checks tokens with keystonemiddleware; Placement (the real one)
runs with ``auth_strategy = keystone``; Glance (the real one) runs its
``keystone`` pipeline; Nova's event API is the demo receiver behind
keystonemiddleware's ``auth_token``. The
conductor and a real agent on a simulated host run in this process. Cyborg
reaches Placement and Nova with the password of its ``cyborg`` service
user, and Glance with the credentials of that user too, never a user's
token. Every log record of the run, DEBUG included, is kept and searched for
the tokens, passwords and request bodies it must never show.
"""

import logging
import time

import fixtures
from oslo_log import formatters
from oslo_log import log
from oslo_utils import uuidutils
from testtools import content

from cyborg.agent import service as agent_service
from cyborg.conductor import rpcapi as conductor_rpcapi
import cyborg.conf
from cyborg.drivers import base as drivers_base
from cyborg import exception
from cyborg.objects import host as host_obj
from cyborg.tests.functional.api import test_keystone
from cyborg.tests import openstack_fixtures
from cyborg.tests import stand_ins
from cyborg.tests import sysfs_tree
from cyborg_quickstart import keystone as keystone_demo
from cyborg_quickstart import nova_events
from cyborg_quickstart import server as demo_server

CONF = cyborg.conf.CONF

PAC = '0000:5e:00.0'
#: The identity keystonemiddleware found in a request's tokens.
IDENTITY = ('X-Identity-Status', 'X-User-Name', 'X-Project-Name', 'X-Roles',
            'X-Service-Identity-Status', 'X-Service-User-Name',
            'X-Service-Roles')
#: Every Fernet token starts so (its version byte, base64-encoded).
FERNET_PREFIX = 'gAAAAA'
V2_3 = {'OpenStack-API-Version': 'accelerator 2.3'}


class _Seen:
    """A WSGI app recording each request's identity, then serving ``app``.

    Behind ``auth_token``, the identity is what keystonemiddleware
    validated; ``tokens`` keeps the raw tokens (user, service).
    """

    def __init__(self, app):
        self.app = app
        self.identities = []
        self.tokens = []

    def __call__(self, environ, start_response):
        self.identities.append({
            header: environ.get('HTTP_' + header.upper().replace('-', '_'))
            for header in IDENTITY})
        self.tokens.append((environ.get('HTTP_X_AUTH_TOKEN'),
                            environ.get('HTTP_X_SERVICE_TOKEN')))
        return self.app(environ, start_response)


class _Records(logging.Handler):
    """Keeps every log record with its level, formatted as services do.

    oslo.log's formatter adds each record's request context, as the
    services' log files show it.
    """

    def __init__(self, conf):
        super().__init__(logging.DEBUG)
        log.register_options(conf)
        self.setFormatter(formatters.ContextFormatter(
            config=conf, project='cyborg', version='test'))
        self.records = []

    def emit(self, record):
        self.records.append((record.levelno, self.format(record)))

    def text(self, level):
        return '\n'.join(text for levelno, text in self.records
                         if levelno >= level)

    def lines_with(self, needles, level):
        """The lines at ``level`` or above holding any of ``needles``."""
        return [line[:300] for line in self.text(level).splitlines()
                if any(needle in line for needle in needles)]


class ServicesTestCase(test_keystone.KeystoneTestCase):

    def setUp(self):
        # Keystone's own setup (users, passwords) is the test's doing, and
        # not logged by Cyborg: Keystone starts before the logs are kept.
        if not openstack_fixtures.Keystone.missing():
            self.useFixture(openstack_fixtures.Keystone())
        # Every record from then on, whichever logger or thread.
        self.logs = _Records(CONF)
        self.useFixture(fixtures.LogHandler(self.logs, level=logging.DEBUG,
                                            nuke_handlers=False))
        self.addOnException(lambda exc_info: self.addDetail(
            'log', content.text_content(self.logs.text(logging.INFO))))
        super().setUp()
        self.placement = self.useFixture(
            openstack_fixtures.Placement(self.keystone))
        self.direct = self.placement.adapter()

    def guarded(self, app):
        """``app`` behind auth_token, served; returns its recorder and URL."""
        seen = _Seen(app)
        server = demo_server.LoopbackServer(
            keystone_demo.protect(seen, self.keystone.authtoken_options()),
            threads=4, name='guarded').start()
        self.addCleanup(server.stop)
        return seen, server.url

    def use_cyborg_user(self, group, **options):
        return openstack_fixtures.use_auth(
            self, group, 'password',
            **dict(self.keystone.credentials('cyborg'), **options))


class TestServiceCredentials(ServicesTestCase):
    """A full flow: report, profile, ARQ, bind, program, unbind, delete."""

    def setUp(self):
        super().setUp()
        self.hostname = 'ks-' + uuidutils.generate_uuid()
        self.compute_rp = self.direct.post('/resource_providers', json={
            'name': self.hostname}).json()['uuid']
        self.nova = nova_events.EventReceiver()
        self.nova_seen, nova_url = self.guarded(self.nova)
        self.use_cyborg_user('nova', endpoint_override=nova_url)
        missing = openstack_fixtures.Glance.missing()
        if missing:
            self.skipTest(missing)
        glance = self.useFixture(openstack_fixtures.Glance(self.conf,
                                                           self.keystone))
        self.image = glance.add_image(b'bitstream')['id']
        # A member's image: Glance shows it to Cyborg's user (an
        # administrator), and Cyborg does not trust it.
        self.planted = glance.add_image(
            b'red bitstream', owner=self.keystone.session(
                'member').get_project_id())['id']
        self.glance_url = glance.url
        # What Cyborg sends to Glance from now on.
        self.sent = self.useFixture(openstack_fixtures.SentRequests())
        self.use_cyborg_user('glance', endpoint_override=glance.url)
        self.fpgaconf = self.useFixture(
            stand_ins.StandInTool('fpgaconf'))
        self.conf.config(fpgaconf_path=self.fpgaconf.path, group='fpga')
        self.conf.config(download_dir=self.useFixture(
            fixtures.TempDir()).path, group='glance')
        self.conf.config(host=self.hostname)
        self.conf.config(enable_hotplug_monitor=False,
                         resource_provider_name=self.hostname,
                         group='agent')
        self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('intel_fpga', PAC, dict(vfs=2))]))
        # As cyborg-agent starts: the conductor finds the compute node's
        # provider in Placement.
        self.assertEqual(self.hostname, agent_service.wait_for_compute_node(
            conductor_rpcapi.ConductorAPI()))
        self.conductor.serve_agent(self.hostname)
        agent = agent_service.AgentService(
            drivers_base.load(['intel_fpga_driver']), host=self.hostname)
        agent.start()
        self.addCleanup(agent.stop)

    def wait_for_provider(self):
        """The host's FPGA provider and its inventory, once reported."""
        deadline = time.monotonic() + 30
        while True:
            for rp in self.direct.get('/resource_providers', params={
                    'in_tree': self.compute_rp}).json()['resource_providers']:
                inventory = self.direct.get(
                    '/resource_providers/%s/inventories' % rp['uuid']).json()
                if 'FPGA' in inventory['inventories']:
                    return rp, inventory['inventories']
            if time.monotonic() > deadline:
                self.fail('No FPGA provider in Placement after 30 s')
            time.sleep(0.2)

    def test_full_flow(self):
        # The agent's report reached Placement through the conductor.
        rp, inventory = self.wait_for_provider()
        self.assertEqual(self.compute_rp, rp['parent_provider_uuid'])
        self.assertEqual(2, inventory['FPGA']['total'])

        marker = 'body-' + uuidutils.generate_uuid()
        response = self.call('POST', '/device_profiles', 'admin', json=[{
            'name': 'ks-flow', 'description': marker, 'groups': [{
                'resources:FPGA': '1', 'accel:bitstream_id': self.image}]}])
        self.assertEqual(201, response.status_code, response.text)
        response = self.call('POST', '/accelerator_requests', 'member',
                             json={'device_profile_name': 'ks-flow'})
        self.assertEqual(201, response.status_code, response.text)
        [arq] = response.json()['arqs']
        path = '/accelerator_requests/' + arq['uuid']
        instance = uuidutils.generate_uuid()
        bind = [{'op': 'add', 'path': '/' + field, 'value': value}
                for field, value in (('hostname', self.hostname),
                                     ('device_rp_uuid', rp['uuid']),
                                     ('instance_uuid', instance))]
        self.assertEqual(202, self.call('PATCH', path, 'member', 'service',
                                        json={arq['uuid']: bind}).status_code)
        self.assertEqual('Bound', self.call('GET', path,
                                            'member').json()['state'])

        # The agent got the bitstream from Glance, which checks tokens,
        # as Cyborg's own user, whichever user asked; the image is of its
        # project, so trusted.
        self.assertEqual(1, len(self.fpgaconf.calls))
        self.assertTrue(self.glance_tokens())
        for user, service in self.glance_tokens():
            name, roles = self.identity(user)
            self.assertEqual('cyborg', name)
            self.assertIsNone(service)

        # Nova heard of the bind from the cyborg user with the service
        # role.
        [event] = self.nova.wait_for(instance, 1, 30)
        self.assertTrue(self.nova_seen.identities)
        self.assertEqual(('accelerator-request-bound', 'completed'),
                         (event['name'], event['status']))
        for identity in self.nova_seen.identities:
            self.assertEqual(('Confirmed', 'cyborg', 'service'), (
                identity['X-Identity-Status'], identity['X-User-Name'],
                identity['X-Project-Name']))
            self.assertIn('service', identity['X-Roles'].split(','))

        self.assertEqual(202, self.call(
            'PATCH', path, 'member', 'service',
            json={arq['uuid']: self.unbind_patch()}).status_code)
        [deployable] = [d for d in self.call(
            'GET', '/deployables', 'admin').json()['deployables']
            if d['rp_uuid'] == rp['uuid']]
        self.assertEqual(200, self.call(
            'PATCH', '/deployables/%s/program' % deployable['uuid'], 'admin',
            json=[{'op': 'replace', 'path': '/program',
                   'value': [{'image_uuid': self.image}]}]).status_code)
        # Programming asked by the administrator: Glance sees Cyborg.
        self.assertEqual(2, len(self.fpgaconf.calls))
        user, service = self.glance_tokens()[-1]
        self.assertEqual(('cyborg', None), (self.identity(user)[0], service))
        response = self.call(
            'PATCH', '/deployables/%s/program' % deployable['uuid'], 'admin',
            json=[{'op': 'replace', 'path': '/program',
                   'value': [{'image_uuid': self.planted}]}])
        self.assertEqual(400, response.status_code, response.text)
        self.assertIn('not a trusted image owner', response.text)
        self.assertEqual(2, len(self.fpgaconf.calls))
        self.assertEqual(204, self.call('DELETE', path, 'member').status_code)
        self.assertEqual(204, self.call('DELETE', '/device_profiles/ks-flow',
                                        'admin').status_code)

        self.assert_no_secrets(marker)

    def glance_tokens(self):
        """(user token, service token) of each request sent to Glance."""
        return [(headers.get('X-Auth-Token'), headers.get('X-Service-Token'))
                for _method, _url, headers in self.sent.to(self.glance_url)]

    def identity(self, token):
        """The user name and role names Keystone finds in ``token``."""
        found = self.keystone.session('admin').get(
            self.keystone.auth_url + '/auth/tokens',
            headers={'X-Subject-Token': token}).json()['token']
        return found['user']['name'], {r['name'] for r in found['roles']}

    def assert_no_secrets(self, body):
        """No token, password or ``body`` in any log record."""
        # The options as the services log them when they start.
        self.conf.conf.log_opt_values(logging.getLogger('cyborg.test'),
                                      logging.INFO)
        tokens = {token for seen in (self.glance_tokens(),
                                     self.nova_seen.tokens)
                  for pair in seen for token in pair if token}
        tokens |= {self.keystone.token(persona) for persona in (
            'admin', 'member', 'service', 'cyborg')}
        secrets = tokens | {self.keystone.credentials('cyborg')['password'],
                            FERNET_PREFIX}
        self.assertIn('PATCH /v2/accelerator_requests',
                      self.logs.text(logging.INFO))
        self.assertEqual([], self.logs.lines_with(secrets, logging.DEBUG))
        self.assertEqual([], self.logs.lines_with({body}, logging.DEBUG))


class TestWrongPassword(ServicesTestCase):
    """Keystone refuses Cyborg's password: Placement calls fail clearly."""

    def test_placement_is_not_reached_and_the_api_answers(self):
        name = 'ks-' + uuidutils.generate_uuid()
        compute_rp = self.direct.post('/resource_providers', json={
            'name': name}).json()['uuid']
        wrong = 'not-' + self.keystone.credentials('cyborg')['password']
        self.conf.config(password=wrong, group='placement')
        error = self.assertRaises(
            exception.PlacementUnavailable,
            conductor_rpcapi.ConductorAPI().compute_node_rp,
            self.admin_context, hostname='host1', rp_name=name)
        self.assertIn('HTTP 401', str(error))
        # A change made through the API is kept; its sync waits.
        host_obj.Host.set_compute_rp(self.admin_context, 'host1', compute_rp)
        response = self.call('POST', '/devices/%s/disable' % self.device.uuid,
                             'admin', headers=V2_3)
        self.assertEqual(204, response.status_code, response.text)
        self.assertEqual('maintaining', self.call(
            'GET', '/devices/' + self.device.uuid, 'admin',
            headers=V2_3).json()['status'])
        self.assertEqual(1, len(self.logs.lines_with(
            {'Placement sync of host host1 postponed'}, logging.WARNING)))
        self.assertEqual([], self.logs.lines_with({wrong}, logging.DEBUG))
