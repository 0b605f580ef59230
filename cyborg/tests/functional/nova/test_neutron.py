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
"""The real Neutron; a server booted through the real Nova with a NIC VF.

The real Neutron (:mod:`cyborg.demo.neutron`: ML2, no agents, MariaDB)
takes the place of Nova's Neutron stand-in. A port with ``vnic_type``
``accelerator-direct`` names a Cyborg device profile of an Intel NIC VF;
Nova asks Cyborg for that VF, and writes its physical network and PCI
slot into the port's ``binding:profile``, where Neutron binds it. Cyborg's
agent serves the quickstart's simulated host with an Intel X710 port
besides, its two VFs on :data:`PHYSNET`. Each service talks over a
RabbitMQ virtual host of its own.

Behind the real Keystone, Neutron lets Nova's service user (role
``service``) bind ports with a ``binding:profile``, as Neutron's policies
want, and its mechanism driver binds a VF port only on the physical
network the profile names.
"""

import os
import shutil
import tempfile
import uuid

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from oslo_db import exception as db_exception
from oslo_db.sqlalchemy import provision
import pytest
import testtools

from cyborg.demo import neutron
from cyborg.demo import nova
from cyborg.demo import nova_runner
from cyborg.demo import nova_sim
from cyborg.demo import quickstart
from cyborg.demo import quickstart_demo
from cyborg.demo import sysfs
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional

NOVA_VENV = os.environ.get('CYBORG_TEST_NOVA_VENV', nova.VENV)
NEUTRON_VENV = os.environ.get('CYBORG_TEST_NEUTRON_VENV', neutron.VENV)
HOST = quickstart_demo.HOST
PHYSNET = neutron.PHYSNET
#: The simulated host's Intel X710 port and its VFs (16 routing ids on).
NIC = '0000:18:00.0'
VFS = ('0000:18:02.0', '0000:18:02.1')
NIC_IFNAME = 'ens785f0'
#: A VF of an Intel NIC on PHYSNET, as openstack-cyborg 17.0.0 names it.
NIC_VF = {'resources:CUSTOM_NIC': '1',
          'trait:CUSTOM_PHYSNET_%s' % PHYSNET.upper(): 'required'}
TIMEOUT = 120


class _NicQuickstart(quickstart.Quickstart):
    """The quickstart's services; its host has an Intel NIC port besides."""

    def prepare(self, rabbit=None, db=None):
        super().prepare(rabbit, db)
        tree = sysfs.SysfsTree(self.path('sysfs'))
        if not os.path.exists(tree.path(NIC)):
            tree.intel_nic(NIC, ifname=NIC_IFNAME, vfs=len(VFS))
        # Later values in cyborg.conf win over the quickstart's.
        with open(self.conf, 'a') as f:
            f.write('\n[agent]\nenabled_drivers = %s,intel_nic_driver\n'
                    '\n[nic]\nphysical_device_mappings = %s:%s\n' % (
                        quickstart.DRIVERS, PHYSNET, NIC_IFNAME))


class _NovaWithNeutron(nova.NovaServices):
    """Nova's services, the real Neutron on their ``neutron`` port."""

    def commands(self):
        return [(name, argv) for name, argv in super().commands()
                if name != 'neutron']


def _mysql():
    """oslo.db's MySQL backend, or why there is none."""
    try:
        return provision.Backend.backend_for_database_type('mysql'), None
    except db_exception.BackendNotAvailable as e:
        return None, 'needs MySQL or MariaDB for Neutron: %s' % e


def _missing_neutron():
    """Why the real Neutron cannot run here, or None."""
    if not os.path.exists(os.path.join(NEUTRON_VENV, 'bin',
                                       'neutron-db-manage')):
        return ('needs Neutron %s in %s: run tools/setup-client-venvs.sh'
                % (neutron.NEUTRON_VERSION, NEUTRON_VENV))
    return _mysql()[1]


def _network_adapter(url, session):
    """A keystoneauth adapter for Neutron's API at ``url``."""
    return ks_adapter.Adapter(session, service_type='network',
                              endpoint_override=url + '/v2.0',
                              raise_exc=False)


def _tail(path):
    """The end of a service's log, for a failing test."""
    with open(path, errors='replace') as f:
        lines = [line for line in f if 'log_opt_values' not in line]
    return '==== %s\n%s' % (path, ''.join(lines[-150:]))


def _vhost(name):
    url = functional.vhost(name)
    if url is None:
        raise RuntimeError('cannot make RabbitMQ virtual host %s' % name)
    return url


class _Cloud:
    """Placement, Glance, Cyborg, Neutron and Nova, on loopback."""

    def __init__(self, mysql):
        self.tmp = tempfile.mkdtemp(prefix='cyborg-neutron-')
        suffix = uuid.uuid4().hex[:8]
        self.vhosts = ['cyborg-neutron-%s-%s' % (part, suffix)
                       for part in ('cyborg', 'nova', 'neutron')]
        self.mysql = mysql
        self.database = 'neutron_' + suffix
        self.quickstart = self.nova = self.neutron = None

    def start(self):
        cyborg_rabbit, nova_rabbit, neutron_rabbit = (
            _vhost(v) for v in self.vhosts)
        ports = functional.free_ports(5)
        self.quickstart = _NicQuickstart(
            os.path.join(self.tmp, 'cyborg'),
            dict(zip(('api', 'placement', 'glance', 'nova'), ports)),
            glance_venv=cyborg_fixtures.Glance.VENV)
        self.mysql.create_named_database(self.database)
        self.neutron = neutron.Neutron(
            os.path.join(self.tmp, 'neutron'), ports[4], NEUTRON_VENV,
            self.mysql.provisioned_database_url(self.database)
            .render_as_string(hide_password=False), neutron_rabbit,
            placement=self.quickstart.url('placement'))
        self.nova = _NovaWithNeutron(
            os.path.join(self.tmp, 'nova'), NOVA_VENV,
            {'api': ports[3], 'neutron': ports[4]},
            self.quickstart.url('placement'),
            self.quickstart.url('api') + '/v2',
            self.quickstart.url('glance'), nova_rabbit, HOST)
        os.makedirs(self.neutron.state)
        self.neutron.start()
        os.makedirs(self.nova.state)
        self.nova.setup()
        self.quickstart.start(cyborg_rabbit, register_host=False)
        self.image = self.quickstart.demo.image('disk', b'a disk')
        self.nova.start()
        self.quickstart.demo.wait_for_devices(timeout=TIMEOUT)
        self.compute = self.nova.adapter()
        self.cyborg = nova_sim.cyborg_adapter(
            self.quickstart.url('api') + '/v2')
        self.network = _network_adapter(
            self.neutron.url, ks_session.Session(
                auth=ks_loading.get_plugin_loader('admin_token')
                .load_from_options(endpoint=self.neutron.url,
                                   token=nova.TOKEN)))

    def stop(self):
        for service in (self.nova, self.quickstart, self.neutron):
            if service is not None:
                service.stop()
        for vhost in self.vhosts:
            functional.rabbitmqctl('delete_vhost', vhost)
        self.mysql.drop_named_database(self.database, conditional=True)

    def logs(self):
        """The end of every service's log, for a failing test."""
        paths = [os.path.join(self.neutron.state, 'neutron-server.log'),
                 os.path.join(self.neutron.state, 'server.log')]
        for directory in (self.quickstart.path('logs'),
                          self.nova.path('logs')):
            if os.path.isdir(directory):
                paths += [os.path.join(directory, name)
                          for name in sorted(os.listdir(directory))]
        return '\n'.join(_tail(path) for path in paths
                         if os.path.exists(path))


# One pytest-xdist worker runs the class's tests (tools/run-tests.sh:
# --dist loadgroup), which share the services.
@pytest.mark.xdist_group('neutron')
class TestRealNeutron(testtools.TestCase):

    cloud = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not os.path.exists(os.path.join(NOVA_VENV, 'bin',
                                           'nova-compute')):
            cls.skip_reason = ('needs Nova %s in %s: run '
                               'tools/setup-client-venvs.sh' % (
                                   nova.NOVA_VERSION, NOVA_VENV))
            return
        if functional.rabbitmqctl('status'):
            cls.skip_reason = 'needs rabbitmqctl for virtual hosts'
            return
        cls.skip_reason = (_missing_neutron() or
                           cyborg_fixtures.Glance.missing())
        if cls.skip_reason:
            return
        cls.cloud = _Cloud(_mysql()[0])
        try:
            cls.cloud.start()
        except Exception:
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
        if self.skip_reason:
            self.skipTest(self.skip_reason)
        self.addOnException(lambda exc_info: self.addDetail(
            'service logs', testtools.content.text_content(
                self.cloud.logs())))
        self.compute = self.cloud.compute
        self.cyborg = self.cloud.cyborg
        self.network = self.cloud.network

    # --- helpers ----------------------------------------------------------

    def _created(self, collection, **body):
        """Create one of ``collection`` in Neutron, deleted at cleanup."""
        kind = collection[:-1]
        response = self.network.post('/%s' % collection, json={kind: body})
        self.assertEqual(201, response.status_code, response.text)
        item = response.json()[kind]
        self.addCleanup(self.network.delete, '/%s/%s' % (collection,
                                                         item['id']))
        return item

    def _port(self, port):
        response = self.network.get('/ports/%s' % port)
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['port']

    def _profile(self, groups):
        name = 'p-' + uuid.uuid4().hex[:8]
        response = self.cyborg.post('/device_profiles', json=[
            {'name': name, 'groups': groups}])
        self.assertEqual(201, response.status_code, response.text)
        self.addCleanup(self.cyborg.delete, '/device_profiles/%s' % name)
        return name

    def _flavor(self):
        response = self.compute.post('/flavors', json={'flavor': {
            'name': 'f-' + uuid.uuid4().hex[:8], 'ram': 64, 'vcpus': 1,
            'disk': 0}})
        self.assertEqual(200, response.status_code, response.text)
        flavor = response.json()['flavor']['id']
        self.addCleanup(self.compute.delete, '/flavors/%s' % flavor)
        return flavor

    def _wait_active(self, server):
        def active():
            found = self.compute.get('/servers/%s' % server).json()[
                'server']
            if found['status'] == 'ERROR':
                raise AssertionError('server %s failed: %s' % (
                    server, found.get('fault')))
            return found['status'] == 'ACTIVE' and not found.get(
                'OS-EXT-STS:task_state')
        functional.wait('server %s active' % server, active, TIMEOUT)

    def _arqs(self, server):
        response = self.cyborg.get('/accelerator_requests',
                                   params={'instance': server})
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['arqs']

    # --- tests ------------------------------------------------------------

    def test_port_of_a_nic_vf(self):
        network = self._created(
            'networks', name='physnet', shared=True,
            **{'provider:network_type': 'flat',
               'provider:physical_network': PHYSNET})
        self._created('subnets', network_id=network['id'], ip_version=4,
                      cidr='192.0.2.0/24')
        profile = self._profile([NIC_VF])
        vf_port = self._created(
            'ports', network_id=network['id'],
            project_id=nova_runner.PROJECT_ID, device_profile=profile,
            **{'binding:vnic_type': 'accelerator-direct'})
        self.assertEqual((profile, 'unbound'), (
            vf_port['device_profile'], vf_port['binding:vif_type']))
        # A port of the hypervisor's switch beside it.
        normal_port = self._created('ports', network_id=network['id'],
                                    project_id=nova_runner.PROJECT_ID)

        response = self.compute.post('/servers', json={'server': {
            'name': 's-' + uuid.uuid4().hex[:8],
            'imageRef': self.cloud.image['id'],
            'flavorRef': self._flavor(),
            'networks': [{'port': vf_port['id']},
                         {'port': normal_port['id']}]}})
        self.assertEqual(202, response.status_code, response.text)
        server = response.json()['server']['id']
        self._wait_active(server)

        (arq,) = self._arqs(server)
        self.assertEqual(('Bound', HOST, profile),
                         (arq['state'], arq['hostname'],
                          arq['device_profile_name']))
        info = arq['attach_handle_info']
        slot = '%(domain)s:%(bus)s:%(device)s.%(function)s' % info
        self.assertIn(slot, VFS)
        self.assertEqual(PHYSNET, info['physical_network'])
        bound = self._port(vf_port['id'])
        self.assertEqual(
            ({'physical_network': PHYSNET, 'pci_slot': slot,
              'arq_uuid': arq['uuid']}, 'hw_veb', HOST, server, 'ACTIVE'),
            (bound['binding:profile'], bound['binding:vif_type'],
             bound['binding:host_id'], bound['device_id'],
             bound['status']))
        bound = self._port(normal_port['id'])
        self.assertEqual(({}, 'ovs', HOST, server, 'ACTIVE'), (
            bound['binding:profile'], bound['binding:vif_type'],
            bound['binding:host_id'], bound['device_id'], bound['status']))

        response = self.compute.delete('/servers/%s' % server)
        self.assertEqual(204, response.status_code, response.text)
        functional.wait('server %s gone' % server, lambda: self.compute.get(
            '/servers/%s' % server).status_code == 404)
        # Nova deletes the port's ARQ and unbinds the ports it was given.
        functional.wait('the ARQ of port %s deleted' % vf_port['id'],
                        lambda: not self._arqs(server))
        for port in (vf_port, normal_port):
            released = self._port(port['id'])
            self.assertEqual(('', {}, 'unbound'), (
                released['device_id'], released['binding:profile'],
                released['binding:vif_type']))


class TestNeutronWithKeystone(testtools.TestCase):
    """Neutron behind the real Keystone, without Nova."""

    def setUp(self):
        super().setUp()
        missing = _missing_neutron() or cyborg_fixtures.Keystone.missing()
        if missing:
            self.skipTest(missing)
        self.keystone = self.useFixture(cyborg_fixtures.Keystone()).keystone
        mysql = _mysql()[0]
        database = 'neutron_' + uuid.uuid4().hex[:8]
        mysql.create_named_database(database)
        self.addCleanup(mysql.drop_named_database, database)
        server = neutron.Neutron(
            self.useFixture(fixtures.TempDir()).path,
            functional.free_ports(1)[0], NEUTRON_VENV,
            mysql.provisioned_database_url(database).render_as_string(
                hide_password=False),
            functional.RABBIT_URL,
            authtoken=self.keystone.authtoken_options())
        self.addCleanup(server.stop)
        self.addOnException(lambda exc_info: self.addDetail(
            'neutron-server.log', testtools.content.text_content(_tail(
                os.path.join(server.state, 'neutron-server.log')))))
        self.url = server.start().url

    def _as(self, persona):
        return _network_adapter(self.url, self.keystone.session(persona))

    def _bind(self, port, profile=None):
        """Bind ``port`` to a host as Nova's service user does."""
        response = self._as('service').put('/ports/%s' % port, json={
            'port': {'binding:host_id': HOST,
                     'binding:profile': profile or {}}})
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['port']

    def test_nova_binds_ports_on_their_physical_network(self):
        self.assertEqual(401, ks_session.Session().get(
            self.url + '/v2.0/networks', raise_exc=False).status_code)
        admin, member = self._as('admin'), self._as('member')
        response = admin.post('/networks', json={'network': {
            'name': 'physnet', 'shared': True,
            'provider:network_type': 'flat',
            'provider:physical_network': PHYSNET}})
        self.assertEqual(201, response.status_code, response.text)
        network = response.json()['network']['id']
        self.addCleanup(admin.delete, '/networks/%s' % network)
        response = admin.post('/subnets', json={'subnet': {
            'network_id': network, 'ip_version': 4,
            'cidr': '192.0.2.0/24'}})
        self.assertEqual(201, response.status_code, response.text)

        def port(**attributes):
            response = member.post('/ports', json={'port': dict(
                network_id=network, **attributes)})
            self.assertEqual(201, response.status_code, response.text)
            found = response.json()['port']
            self.addCleanup(admin.delete, '/ports/%s' % found['id'])
            return found['id']

        vf = {'binding:vnic_type': 'accelerator-direct',
              'device_profile': 'a-nic-vf'}
        profile = {'physical_network': PHYSNET, 'pci_slot': VFS[0]}
        bound = port(**vf)
        # Only a service sets binding:profile, Neutron's policies say.
        self.assertEqual(403, admin.put('/ports/%s' % bound, json={
            'port': {'binding:profile': profile}}).status_code)
        found = self._bind(bound, profile)
        self.assertEqual(('a-nic-vf', 'hw_veb', 'ACTIVE'), (
            found['device_profile'], found['binding:vif_type'],
            found['status']))
        other = self._bind(port(**vf), dict(profile,
                                            physical_network='other'))
        self.assertEqual('binding_failed', other['binding:vif_type'])
        normal = self._bind(port())
        self.assertEqual(('ovs', 'ACTIVE'), (normal['binding:vif_type'],
                                             normal['status']))
