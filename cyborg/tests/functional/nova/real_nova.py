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
"""The cloud the real-Nova tests boot servers in, started once per class.

Nova 34 (api, conductor, scheduler, compute with the fake virt driver,
from its own virtualenv: ``tools/setup-client-venvs.sh``) runs against the
real Placement and Cyborg's API, conductor and agent as processes, the
agent serving the quickstart's simulated host. The compute node is named
by the host's FQDN while the agent's host is the short name, as on most
real hosts. Each process talks over a RabbitMQ virtual host of its own.
:class:`RealNovaTestCase` starts the :class:`Cloud` for a test class and
gives its tests the calls that boot, act on and check servers.
"""

import json
import os
import shutil
import sqlite3
import tempfile
import uuid

from cyborg.tests import functional
from cyborg.tests import openstack_fixtures
from cyborg_quickstart import nova
from cyborg_quickstart import nova_sim
from cyborg_quickstart import placement
from cyborg_quickstart import quickstart
from cyborg_quickstart import quickstart_demo

VENV = os.environ.get('CYBORG_TEST_NOVA_VENV', nova.VENV)
HOST = quickstart_demo.HOST
NODENAME = HOST + '.example.org'
#: The agent reports every REPORT_INTERVAL seconds, and a recovered device
#: leaves quarantine on the report that finds it healthy.
REPORT_INTERVAL = 2
TIMEOUT = 120


def _vhost(name):
    url = functional.vhost(name)
    if url is None:
        raise RuntimeError('cannot make RabbitMQ virtual host %s' % name)
    return url


class _Quickstart(quickstart.Quickstart):
    """The quickstart's services, health read every REPORT_INTERVAL."""

    def _config(self, rabbit, db):
        # oslo.config merges a section given twice, the later value winning.
        return super()._config(rabbit, db) + '\n'.join([
            '', '[agent]', 'report_interval = %d' % REPORT_INTERVAL,
            '[conductor]', 'quarantine_quiet_period = 0', ''])


class Cloud:
    """Placement, the image service, Cyborg and Nova, on loopback."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix='cyborg-nova-')
        suffix = uuid.uuid4().hex[:8]
        self.vhosts = ['cyborg-nova-%s-%s' % (part, suffix)
                       for part in ('cyborg', 'nova')]
        self.quickstart = None
        self.nova = None

    def start(self):
        cyborg_rabbit, nova_rabbit = (_vhost(v) for v in self.vhosts)
        ports = functional.free_ports(5)
        self.quickstart = _Quickstart(
            os.path.join(self.tmp, 'cyborg'),
            dict(zip(('api', 'placement', 'glance', 'nova'), ports)),
            nodename=NODENAME, glance_venv=openstack_fixtures.Glance.VENV)
        self.nova = nova.NovaServices(
            os.path.join(self.tmp, 'nova'), VENV,
            {'api': ports[3], 'neutron': ports[4]},
            self.quickstart.url('placement'),
            self.quickstart.url('api') + '/v2',
            self.quickstart.url('glance'), nova_rabbit, HOST,
            nodename=NODENAME)
        os.makedirs(self.nova.state, exist_ok=True)
        self.nova.setup()
        self.quickstart.start(cyborg_rabbit, register_host=False)
        self.image = self.quickstart.demo.image('disk', b'a disk')
        self.nova.start()
        self.quickstart.demo.wait_for_devices(timeout=TIMEOUT)
        self.compute = self.nova.adapter()
        self.cyborg = nova_sim.cyborg_adapter(
            self.quickstart.url('api') + '/v2')
        self.placement = placement.adapter(self.quickstart.url('placement'),
                                           '1.39')

    def stop(self):
        if self.nova is not None:
            self.nova.stop()
        if self.quickstart is not None:
            self.quickstart.stop()
        for vhost in self.vhosts:
            functional.rabbitmqctl('delete_vhost', vhost)

    def logs(self):
        """The end of every service's log, for a failing test."""
        return functional.log_tails((self.quickstart.path('logs'),
                                     self.nova.path('logs')))


class RealNovaTestCase(functional.ServicesTestCase):
    """Nova and the services it calls, started once for the test class."""

    cloud = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not os.path.exists(os.path.join(VENV, 'bin', 'nova-compute')):
            cls.skip_reason = ('needs Nova %s in %s: run '
                               'tools/setup-client-venvs.sh' % (
                                   nova.NOVA_VERSION, VENV))
            return
        if functional.rabbitmqctl('status'):
            cls.skip_reason = 'needs rabbitmqctl for virtual hosts'
            return
        cls.skip_reason = openstack_fixtures.Glance.missing()
        if cls.skip_reason:
            return
        cls.cloud = Cloud()
        try:
            cls.cloud.start()
        except Exception:
            cls.start_logs = cls.cloud.logs() if cls.cloud.nova else ''
            cls.cloud.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.cloud is not None:
            cls.cloud.stop()
            if os.environ.get('CYBORG_TEST_KEEP_NOVA') is None:
                shutil.rmtree(cls.cloud.tmp, ignore_errors=True)
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.compute = self.cloud.compute
        self.cyborg = self.cloud.cyborg
        self.placement = self.cloud.placement

    def logs(self):
        return self.cloud.logs()

    # --- helpers ----------------------------------------------------------

    def _profile(self, groups):
        name = 'p-' + uuid.uuid4().hex[:8]
        response = self.cyborg.post('/device_profiles', json=[
            {'name': name, 'groups': groups}])
        self.assertEqual(201, response.status_code, response.text)
        self.addCleanup(self.cyborg.delete, '/device_profiles/%s' % name)
        return name

    def _flavor(self, profile):
        response = self.compute.post('/flavors', json={'flavor': {
            'name': 'f-' + uuid.uuid4().hex[:8], 'ram': 64, 'vcpus': 1,
            'disk': 0}})
        self.assertEqual(200, response.status_code, response.text)
        flavor = response.json()['flavor']['id']
        response = self.compute.post('/flavors/%s/os-extra_specs' % flavor,
                                     json={'extra_specs': {
                                         'accel:device_profile': profile}})
        self.assertEqual(200, response.status_code, response.text)
        return flavor

    def _create_server(self, flavor):
        response = self.compute.post('/servers', json={'server': {
            'name': 's-' + uuid.uuid4().hex[:8],
            'imageRef': self.cloud.image['id'], 'flavorRef': flavor,
            'networks': 'none'}})
        self.assertEqual(202, response.status_code, response.text)
        server = response.json()['server']['id']
        self.addCleanup(self.compute.delete, '/servers/%s' % server)
        return server

    def _server(self, server):
        response = self.compute.get('/servers/%s' % server)
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['server']

    def _wait_settled(self, server):
        """The server once it has left BUILD and has no task."""
        def settled():
            found = self._server(server)
            if found['status'] != 'BUILD' and not found.get(
                    'OS-EXT-STS:task_state'):
                return found
            return None
        return functional.wait('server %s settled' % server, settled,
                               TIMEOUT)

    def _wait_status(self, server, status):
        def reached():
            found = self._server(server)
            if found['status'] == status and not found.get(
                    'OS-EXT-STS:task_state'):
                return found
            if found['status'] == 'ERROR' and status != 'ERROR':
                raise AssertionError('server %s failed: %s' % (
                    server, found.get('fault')))
            return None
        return functional.wait('server %s %s' % (server, status), reached,
                               TIMEOUT)

    def _action(self, server, action, body=None):
        response = self.compute.post('/servers/%s/action' % server,
                                     json={action: body})
        self.assertEqual(202, response.status_code, response.text)

    def _delete_server(self, server):
        response = self.compute.delete('/servers/%s' % server)
        self.assertEqual(204, response.status_code, response.text)
        functional.wait('server %s gone' % server, lambda: self.compute.get(
            '/servers/%s' % server).status_code == 404)

    def _arqs(self, server):
        response = self.cyborg.get('/accelerator_requests',
                                   params={'instance': server})
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['arqs']

    def _allocations(self, consumer):
        response = self.placement.get('/allocations/%s' % consumer)
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['allocations']

    def _compute_rp(self):
        response = self.placement.get('/resource_providers',
                                      params={'name': NODENAME})
        (rp,) = response.json()['resource_providers']
        return rp['uuid']

    def _assert_bound(self, server, groups):
        """The server's ARQs, one per group, are Bound and allocated.

        Each is on a child provider of the compute node, which has the
        allocation of its group's resources.
        """
        arqs = self._arqs(server)
        self.assertEqual(list(range(len(groups))), sorted(
            a['device_profile_group_id'] for a in arqs))
        compute_rp = self._compute_rp()
        allocations = self._allocations(server)
        for arq in arqs:
            self.assertEqual(('Bound', NODENAME, server),
                             (arq['state'], arq['hostname'],
                              arq['instance_uuid']))
            rp = self.placement.get('/resource_providers/%s' %
                                    arq['device_rp_uuid']).json()
            self.assertEqual(compute_rp, rp['parent_provider_uuid'])
            group = groups[arq['device_profile_group_id']]
            wanted = {key.split(':', 1)[1]: int(value)
                      for key, value in group.items()
                      if key.startswith('resources:')}
            self.assertEqual(wanted, allocations[
                arq['device_rp_uuid']]['resources'])
        return arqs

    def _driver_calls(self, server, call):
        return [r['accel_info'] for r in self.cloud.nova.records()
                if r['instance'] == server and r['call'] == call]

    @staticmethod
    def _handles(accel_info):
        return sorted((a['uuid'], a['attach_handle_uuid'],
                       json.dumps(a['attach_handle_info'], sort_keys=True))
                      for a in accel_info)

    def _handles_in_use(self):
        """The uuids of the attach handles Cyborg's database has in use."""
        db = sqlite3.connect(self.cloud.quickstart.path('cyborg.sqlite'))
        try:
            return {row[0] for row in db.execute(
                'SELECT uuid FROM attach_handles WHERE in_use')}
        finally:
            db.close()

    def _log(self, path):
        with open(path, errors='replace') as f:
            return f.read()

    def _assert_released(self, server, handles=()):
        """Nothing of ``server`` is left in Cyborg or Placement."""
        self.assertEqual([], self._arqs(server))
        self.assertEqual({}, self._allocations(server))
        self.assertFalse(set(handles) & self._handles_in_use())
