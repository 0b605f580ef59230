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
"""The ``openstack`` command line against a live API, two setups of it.

The ``openstack`` command of python-openstackclient 10.3.1 with
python-cyborgclient 3.0.0, and of python-openstackclient 10.5.0, from
the virtualenvs that ``tools/setup-client-venvs.sh`` makes
(``tools/run-tests.sh`` runs it), with ``--os-auth-type none`` against
the API of :class:`cyborg.tests.functional.api.test_clients.LiveTestCase`.
"""

import json
import os
import subprocess

import fixtures

from cyborg import context
from cyborg.db import api as db_api
from cyborg.tests.functional.api import test_clients
from cyborg.tests import openstack_fixtures
from cyborg_quickstart import nova_sim


class CLITests:
    """``openstack accelerator ...`` from the virtualenv ``VENV``.

    Mixed into a LiveTestCase per client setup, with how that client
    creates a profile and binds.
    """

    VENV = None

    def setUp(self):
        super().setUp()
        self.command = (openstack_fixtures.VENVS / self.VENV / 'bin' /
                        'openstack')
        if not self.command.exists():
            self.skipTest('%s is missing: run tools/setup-client-venvs.sh '
                          '(tools/run-tests.sh does)' % self.command)
        self.env = {'PATH': os.environ['PATH'],
                    'HOME': self.useFixture(fixtures.TempDir()).path}

    def run_openstack(self, *args, version=None, env=None):
        """Run the CLI; the completed process."""
        command = [str(self.command), '--os-auth-type', 'none',
                   '--os-endpoint', self.endpoint]
        if version:
            command += ['--os-accelerator-api-version', version]
        return subprocess.run(command + list(args), capture_output=True,
                              text=True, env=dict(self.env, **(env or {})),
                              timeout=120)

    def openstack(self, *args, version=None, env=None):
        """Run the CLI, which must succeed; JSON output is decoded."""
        result = self.run_openstack(*args, version=version, env=env)
        self.assertEqual(0, result.returncode,
                         '%s\n%s' % (' '.join(args), result.stderr))
        if '-f' in args and 'json' in args:
            return json.loads(result.stdout)
        return result.stdout

    def create_profile(self, name):
        raise NotImplementedError

    def bind(self, arq_uuid):
        raise NotImplementedError

    def test_device_profiles(self):
        created = self.create_profile('cli-dp')
        self.assertEqual('cli-dp', created['name'])
        listed = self.openstack('accelerator', 'device', 'profile', 'list',
                                '-f', 'json')
        self.assertEqual(['cli-dp'], [p['name'] for p in listed])
        shown = self.openstack('accelerator', 'device', 'profile', 'show',
                               created['uuid'], '-f', 'json')
        self.assertEqual([{'resources:FPGA': '1'}], shown['groups'])
        by_name = self.openstack('accelerator', 'device', 'profile', 'show',
                                 'cli-dp', '-f', 'json', version='2.2')
        self.assertEqual(created['uuid'], by_name['uuid'])
        self.openstack('accelerator', 'device', 'profile', 'delete',
                       'cli-dp')
        self.assertEqual([], self.openstack(
            'accelerator', 'device', 'profile', 'list', '-f', 'json'))

    def api(self):
        """A keystoneauth adapter to set up what a test needs quickly."""
        return nova_sim.cyborg_adapter(self.endpoint)

    def post_profile(self, name):
        response = self.api().post('/device_profiles', json=[
            {'name': name, 'groups': [{'resources:FPGA': '1'}]}])
        self.assertEqual(201, response.status_code, response.text)
        return response.json()

    def test_delete_device_profiles(self):
        profiles = [self.post_profile(name)
                    for name in ('cli-a', 'cli-b', 'cli-c', 'cli-d')]
        # By names and by uuid, several at once.
        self.openstack('accelerator', 'device', 'profile', 'delete',
                       'cli-a', 'cli-b', profiles[2]['uuid'])
        self.assertEqual(['cli-d'], [p['name'] for p in self.openstack(
            'accelerator', 'device', 'profile', 'list', '-f', 'json')])
        self.assertNotEqual(0, self.run_openstack(
            'accelerator', 'device', 'profile', 'delete', 'cli-a').returncode)

    def test_long_lists(self):
        self.post_profile('cli-dp')
        self.assertEqual(201, self.api().post('/accelerator_requests', json={
            'device_profile_name': 'cli-dp'}).status_code)
        [device] = self.openstack('accelerator', 'device', 'list', '--long',
                                  '-f', 'json', version='2.3')
        self.assertEqual(('PAC Arria10', 'enabled'),
                         (device['model'], device['status']))
        # Each list with a column only --long shows.
        for noun, key, value in (
                (['deployable'], 'num_accelerators',
                 self.deployable.num_accelerators),
                (['arq'], 'device_rp_uuid', None),
                (['device', 'profile'], 'created_at', None),
                (['device', 'attribute'], 'created_at', None)):
            listed = self.openstack('accelerator', *noun, 'list', '--long',
                                    '-f', 'json')
            self.assertNotEqual([], listed, noun)
            for row in listed:
                self.assertIn(key, row, noun)
                if value is not None:
                    self.assertEqual(value, row[key], noun)
                elif key == 'created_at':
                    self.assertIsNotNone(row[key], noun)

    def test_enable_and_disable_device(self):
        # python-openstackclient 10.5.0 calls openstacksdk 4.22's
        # enable_device and disable_device here: they are newer than the
        # upper-constraints' openstacksdk of TestOpenStackSDK.
        ctx = context.get_admin_context()
        self.openstack('accelerator', 'device', 'disable', self.device.uuid)
        self.assertEqual('maintaining',
                         db_api.get(ctx, 'device', self.device.uuid).status)
        self.openstack('accelerator', 'device', 'enable', self.device.uuid)
        self.assertEqual('enabled',
                         db_api.get(ctx, 'device', self.device.uuid).status)

    def test_accelerator_requests(self):
        self.create_profile('cli-dp')
        arq = self.openstack('accelerator', 'arq', 'create', 'cli-dp',
                             '-f', 'json')
        self.assertEqual('Initial', arq['state'])
        listed = self.openstack('accelerator', 'arq', 'list', '-f', 'json')
        self.assertEqual([arq['uuid']], [a['uuid'] for a in listed])
        bound = self.bind(arq['uuid'])
        self.assertEqual(('Bound', 'host1', test_clients.INSTANCE,
                          test_clients.RP_UUID),
                         (bound['state'], bound['hostname'],
                          bound['instance_uuid'], bound['device_rp_uuid']))
        unbound = self.openstack('accelerator', 'arq', 'unbind',
                                 arq['uuid'], '-f', 'json')
        self.assertEqual(('Unbound', None),
                         (unbound['state'], unbound['hostname']))
        shown = self.openstack('accelerator', 'arq', 'show', arq['uuid'],
                               '-f', 'json')
        self.assertEqual('Unbound', shown['state'])
        self.openstack('accelerator', 'arq', 'delete', arq['uuid'])
        self.assertEqual([], self.openstack('accelerator', 'arq', 'list',
                                            '-f', 'json'))

    def test_hardware(self):
        [device] = self.openstack('accelerator', 'device', 'list',
                                  '-f', 'json')
        self.assertEqual(self.device.uuid, device['uuid'])
        shown = self.openstack('accelerator', 'device', 'show',
                               self.device.uuid, '-f', 'json')
        self.assertEqual('host1', shown['hostname'])
        [deployable] = self.openstack('accelerator', 'deployable', 'list',
                                      '-f', 'json')
        self.assertEqual(self.deployable.uuid, deployable['uuid'])
        shown = self.openstack('accelerator', 'deployable', 'show',
                               self.deployable.uuid, '-f', 'json')
        self.assertEqual('host1_0000:5e:00.0', shown['name'])

    def test_attributes(self):
        created = self.openstack(
            'accelerator', 'device', 'attribute', 'create',
            str(self.deployable.id), 'trait0', 'CUSTOM_X', '-f', 'json')
        self.assertEqual(('trait0', 'CUSTOM_X'),
                         (created['key'], created['value']))
        listed = self.openstack('accelerator', 'device', 'attribute', 'list',
                                '-f', 'json')
        self.assertIn(created['uuid'], [a['uuid'] for a in listed])
        shown = self.openstack('accelerator', 'device', 'attribute', 'show',
                               created['uuid'], '-f', 'json')
        self.assertEqual('CUSTOM_X', shown['value'])
        self.openstack('accelerator', 'device', 'attribute', 'delete',
                       created['uuid'])
        self.assertNotIn(created['uuid'], [a['uuid'] for a in self.openstack(
            'accelerator', 'device', 'attribute', 'list', '-f', 'json')])


class TestCyborgClient(CLITests, test_clients.LiveTestCase):
    """python-openstackclient 10.3.1 with python-cyborgclient 3.0.0."""

    VENV = 'osc-10.3.1'

    def create_profile(self, name):
        return self.openstack('accelerator', 'device', 'profile', 'create',
                              name, json.dumps([{'resources:FPGA': '1'}]),
                              '-f', 'json')

    def test_create_options(self):
        # Sent as strings (the first as "0"); Cyborg ignores them as 17.0.0.
        self.create_profile('cli-dp')
        arq = self.openstack('accelerator', 'arq', 'create', 'cli-dp',
                             '--group-id', '0', '--image-uuid',
                             test_clients.IMAGE, '-f', 'json')
        self.assertEqual(('Initial', 'cli-dp'),
                         (arq['state'], arq['device_profile_name']))

    def bind(self, arq_uuid):
        # The last argument, a project, is required but not sent.
        return self.openstack('accelerator', 'arq', 'bind', arq_uuid,
                              'host1', test_clients.INSTANCE,
                              test_clients.RP_UUID, 'unused', '-f', 'json')


class TestOpenStackClient(CLITests, test_clients.LiveTestCase):
    """python-openstackclient 10.5.0's in-tree accelerator commands."""

    VENV = 'osc-10.5.0'

    def create_profile(self, name):
        return self.openstack('accelerator', 'device', 'profile', 'create',
                              name, '--group', 'resources:FPGA=1',
                              '-f', 'json')

    def test_program_deployable(self):
        # This client checks the image in Glance first. (10.3.1's program
        # cannot work: openstacksdk 4.22's update_deployable, which it
        # calls, calls itself.)
        missing = openstack_fixtures.Glance.missing()
        if missing:
            self.skipTest(missing)
        glance = self.useFixture(openstack_fixtures.Glance(self.conf))
        image = glance.add_image()['id']
        env = {'OS_IMAGE_ENDPOINT_OVERRIDE': glance.url}
        shown = self.openstack('accelerator', 'deployable', 'program',
                               self.deployable.uuid, image, '-f', 'json',
                               env=env)
        self.assertEqual(self.deployable.uuid, shown['uuid'])
        self.assertEqual(image, db_api.get(
            context.get_admin_context(), 'deployable',
            self.deployable.uuid).bitstream_id)
        result = self.run_openstack(
            'accelerator', 'deployable', 'program', self.deployable.uuid,
            test_clients.IMAGE, env=env)
        self.assertIn('image not found', result.stderr)

    def bind(self, arq_uuid):
        # This client looks the server up in Nova first.
        nova = self.useFixture(test_clients.Server(test_clients.fake_nova))
        return self.openstack(
            'accelerator', 'arq', 'bind', arq_uuid, 'host1',
            test_clients.INSTANCE, test_clients.RP_UUID, '-f', 'json',
            env={'OS_COMPUTE_ENDPOINT_OVERRIDE': nova.url + '/v2.1'})
