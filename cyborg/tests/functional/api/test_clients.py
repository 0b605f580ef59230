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
"""Real clients against a live API: openstacksdk and two ``openstack`` CLIs.

The API (with an in-process conductor on ``fake://``) serves on a free
127.0.0.1 port through the same cheroot server ``cyborg-api`` uses. The
clients run with ``--os-auth-type none`` against ``/v2`` as operators
and CI would: openstacksdk in this process (here), and the ``openstack``
commands (``test_openstack_cli``). :class:`LiveTestCase` serves the API
to those and to the other live tests.
"""

import json

import fixtures
import openstack
from openstack import exceptions as sdk_exceptions

from cyborg.cmd import api as api_cmd
import cyborg.conf
from cyborg import context
from cyborg.db import api as db_api
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import stand_ins
from cyborg_quickstart import server as demo_server

CONF = cyborg.conf.CONF

RP_UUID = '7c1f4c5e-6a0e-4f7e-9d0c-3d5a4f2b1e10'
INSTANCE = '5d7a0b4d-5a5b-4bd8-9f6b-0f3c8e3c0c11'
IMAGE = '9a17439a-85d0-4c53-a3d3-0f68a2eac896'


class Server(fixtures.Fixture):
    """``app`` served on loopback in a thread; ``url`` is where.

    :param make: builds the cheroot server for ``app`` (by default a
        small one of :class:`cyborg_quickstart.server.LoopbackServer`).
    """

    def __init__(self, app, make=None):
        super().__init__()
        self.app = app
        self.make = make

    def _setUp(self):
        server = demo_server.LoopbackServer(
            self.app, threads=2,
            server=self.make(self.app) if self.make else None).start()
        self.addCleanup(server.stop)
        self.url = server.url


def fake_nova(environ, start_response):
    """Stands in for the Nova API where a CLI looks up a server."""
    path = environ['PATH_INFO'].rstrip('/')
    if path == '/v2.1':
        body = {'version': {
            'id': 'v2.1', 'status': 'CURRENT', 'version': '2.1',
            'min_version': '2.1', 'links': [{
                'rel': 'self', 'href': 'http://%s/v2.1/' %
                environ['HTTP_HOST']}]}}
    elif path.startswith('/v2.1/servers/'):
        body = {'server': {'id': path.rsplit('/', 1)[1], 'name': 'vm1'}}
    else:
        start_response('404 Not Found', [('Content-Type', 'text/plain')])
        return [b'not found']
    start_response('200 OK', [('Content-Type', 'application/json')])
    return [json.dumps(body).encode()]


class LiveTestCase(base.TestCase):
    """A live API on a free port, seeded with one host's hardware."""

    USES_DB = True

    def setUp(self):
        super().setUp()
        self.useFixture(cyborg_fixtures.RPC())
        self.conductor = self.useFixture(self.conductor_fixture())
        self.useFixture(stand_ins.StandInAgent('host1'))
        app = self.useFixture(self.api_fixture()).app
        self.conf.config(host_ip='127.0.0.1', port=0, group='api')
        server = self.useFixture(Server(
            app, make=lambda a: api_cmd.make_server(CONF, a)))
        self.endpoint = server.url + '/v2'
        ctx = context.get_admin_context()
        # Named as our drivers name it; shown as host1_0000:5e:00.0.
        self.device, deployable, _ = db_utils.create_device_tree(
            ctx, hostname='host1', name='0000:5e:00.0',
            resource_class='FPGA')
        self.deployable = db_api.update(ctx, 'deployable', deployable.uuid,
                                        {'rp_uuid': RP_UUID})

    def conductor_fixture(self):
        """The conductor; this one binds in the background at once."""
        return cyborg_fixtures.Conductor()

    def connect(self, microversion=None):
        """The accelerator proxy, sending ``microversion`` if given."""
        options = {}
        if microversion:
            options['accelerator_default_microversion'] = microversion
        connection = openstack.connect(
            auth_type='none', auth={'endpoint': self.endpoint},
            load_yaml_config=False, load_envvars=False, **options)
        self.addCleanup(connection.close)
        return connection.accelerator

    def api_fixture(self):
        """The API under test; this one trusts every caller (noauth)."""
        return cyborg_fixtures.API()

    def bind_patch(self):
        return [{'op': 'add', 'path': '/hostname', 'value': 'host1'},
                {'op': 'add', 'path': '/device_rp_uuid', 'value': RP_UUID},
                {'op': 'add', 'path': '/instance_uuid', 'value': INSTANCE}]


class TestOpenStackSDK(LiveTestCase):
    """openstacksdk's ``accelerator`` proxy."""

    def setUp(self):
        super().setUp()
        self.accelerator = self.connect()

    def test_device_profiles(self):
        acc = self.accelerator
        created = acc.create_device_profile(
            name='sdk-dp', description=None,
            groups=[{'resources:FPGA': '1',
                     'trait:CUSTOM_FPGA_INTEL': 'required'}])
        self.assertEqual('sdk-dp', created.name)
        self.assertEqual(['sdk-dp'], [p.name for p in acc.device_profiles()])
        self.assertEqual(created.groups,
                         acc.get_device_profile(created.uuid).groups)
        acc.delete_device_profile(created.uuid, ignore_missing=False)
        self.assertEqual([], list(acc.device_profiles()))
        self.assertRaises(sdk_exceptions.NotFoundException,
                          acc.delete_device_profile, created.uuid,
                          ignore_missing=False)

    def test_device_profiles_by_name(self):
        acc = self.accelerator
        for name in ('sdk-dp', 'other'):
            acc.create_device_profile(name=name,
                                      groups=[{'resources:FPGA': '1'}])
        # As in Cyborg 17.0.0, showing by name needs 2.2.
        error = self.assertRaises(sdk_exceptions.HttpException,
                                  acc.get_device_profile, 'sdk-dp')
        self.assertEqual(406, error.status_code)
        self.assertEqual('sdk-dp', self.connect('2.2').get_device_profile(
            'sdk-dp').name)
        acc.delete_device_profile('sdk-dp', ignore_missing=False)
        self.assertEqual(['other'], [p.name for p in acc.device_profiles()])
        error = self.assertRaises(sdk_exceptions.NotFoundException,
                                  acc.delete_device_profile, 'sdk-dp',
                                  ignore_missing=False)
        self.assertIn('sdk-dp', str(error))
        self.assertIsNone(acc.delete_device_profile('sdk-dp'))
        # A comma-separated list of names and uuids in the path.
        third = acc.create_device_profile(name='third',
                                          groups=[{'resources:FPGA': '1'}])
        response = acc.delete('/device_profiles/other,%s' % third.uuid)
        self.assertEqual(204, response.status_code, response.text)
        self.assertEqual([], list(acc.device_profiles()))

    def test_accelerator_requests(self):
        acc = self.accelerator
        acc.create_device_profile(name='sdk-dp',
                                  groups=[{'resources:FPGA': '1'}])
        arq = acc.create_accelerator_request(device_profile_name='sdk-dp')
        self.assertEqual('Initial', arq.state)
        self.assertEqual([arq.uuid],
                         [a.uuid for a in acc.accelerator_requests()])
        acc.patch_accelerator_request(arq.uuid, self.bind_patch())
        bound = acc.get_accelerator_request(arq.uuid)
        self.assertEqual(('Bound', 'host1', INSTANCE),
                         (bound.state, bound.hostname, bound.instance_uuid))
        self.assertEqual('PCI', bound.attach_handle_type)
        self.assertEqual({'domain': '0000', 'bus': '5e', 'device': '00',
                          'function': '1'}, bound.attach_handle_info)
        acc.patch_accelerator_request(arq.uuid, [
            {'op': 'remove', 'path': '/' + field}
            for field in ('hostname', 'device_rp_uuid', 'instance_uuid')])
        self.assertEqual('Unbound',
                         acc.get_accelerator_request(arq.uuid).state)
        # The older spelling of the same PATCH.
        acc.update_accelerator_request(arq.uuid, self.bind_patch())
        self.assertEqual('Bound', acc.get_accelerator_request(arq.uuid).state)
        acc.delete_accelerator_request(arq.uuid, ignore_missing=False)
        self.assertEqual([], list(acc.accelerator_requests()))
        self.assertRaises(sdk_exceptions.NotFoundException,
                          acc.delete_accelerator_request, arq.uuid,
                          ignore_missing=False)

    def test_bind_that_does_not_fit_is_refused(self):
        acc = self.accelerator
        acc.create_device_profile(name='sdk-dp',
                                  groups=[{'resources:PGPU': '1'}])
        arq = acc.create_accelerator_request(device_profile_name='sdk-dp')
        error = self.assertRaises(
            sdk_exceptions.BadRequestException,
            acc.patch_accelerator_request, arq.uuid, self.bind_patch())
        self.assertIn('it offers FPGA, the group asks for PGPU', str(error))
        self.assertEqual('Initial',
                         acc.get_accelerator_request(arq.uuid).state)

    def test_hardware(self):
        acc = self.accelerator
        [device] = acc.devices()
        self.assertEqual(self.device.uuid, device.uuid)
        self.assertEqual('host1', acc.get_device(device.uuid).hostname)
        [deployable] = acc.deployables()
        self.assertEqual('host1_0000:5e:00.0',
                         acc.get_deployable(deployable.id).name)
        programmed = acc.patch_deployable(deployable.id, [
            {'op': 'replace', 'path': '/program',
             'value': [{'image_uuid': IMAGE}]}])
        self.assertEqual(deployable.id, programmed.id)
        # openstacksdk's Deployable has no bitstream_id: read it raw.
        shown = acc.get('/deployables/%s' % deployable.id).json()
        self.assertEqual(IMAGE, shown['bitstream_id'])
        self.assertEqual(IMAGE, db_api.get(
            context.get_admin_context(), 'deployable',
            deployable.id).bitstream_id)

    def test_paging(self):
        ctx = context.get_admin_context()
        other, _, _ = db_utils.create_device_tree(
            ctx, hostname='host2', resource_class='FPGA')
        acc = self.connect('2.4')
        # openstacksdk walks the pages with marker.
        self.assertEqual(sorted([self.device.uuid, other.uuid]),
                         sorted(d.uuid for d in acc.devices(limit=1)))
        self.assertEqual(2, len(list(acc.deployables(limit=1))))

    def test_list_filters(self):
        # openstacksdk has no filter arguments; its raw GET sends them.
        # A second host's device keeps each filter honest.
        db_utils.create_device_tree(context.get_admin_context(),
                                    hostname='host2', resource_class='FPGA')
        acc = self.accelerator
        wrong = []
        for path, key, query, expected in (
                ('/devices', 'devices', 'hostname=host1', 1),
                ('/devices', 'devices', 'hostname=nowhere', 0),
                ('/devices', 'devices', 'type=GPU', 0),
                # A type no driver reports matches nothing, as in 17.0.0.
                ('/devices', 'devices', 'type=TPU', 0),
                ('/devices', 'devices', 'vendor=10de', 0),
                ('/accelerator_requests', 'arqs', 'instance=' + INSTANCE, 0),
                ('/device_profiles', 'device_profiles', 'name=nothing', 0),
                ('/attributes', 'attributes',
                 'deployable_id=%d' % self.deployable.id, 1),
                ('/attributes', 'attributes', 'key=no_such_key', 0)):
            response = acc.get(path + '?' + query)
            found = (response.status_code,
                     len(response.json().get(key) or ()))
            if found != (200, expected):
                wrong.append('%s?%s: %s %s' % (path, query, found,
                                               response.text))
        self.assertEqual([], wrong)

    def test_attributes(self):
        acc = self.accelerator
        # The deployable already has its ``rc`` attribute.
        created = acc.create_attribute(deployable_id=self.deployable.id,
                                       key='trait0', value='CUSTOM_X')
        self.assertEqual('CUSTOM_X', acc.get_attribute(created.uuid).value)
        self.assertEqual(['rc', 'trait0'],
                         sorted(a.key for a in acc.attributes()))
        acc.delete_attribute(created.uuid, ignore_missing=False)
        self.assertEqual(['rc'], [a.key for a in acc.attributes()])
