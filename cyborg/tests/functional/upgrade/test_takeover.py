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
"""The switch from a running openstack-cyborg 17.0.0 cloud, rehearsed.

openstack-cyborg 17.0.0's own ``cyborg-api``, ``cyborg-conductor`` and
``cyborg-agent`` (from its virtualenv) run on MariaDB and RabbitMQ; each
agent's drivers discover the simulated cards of every kind of one host
(:mod:`legacy_host`). A real Nova (34, the fake virt driver) has two
compute hosts, one for each way of naming a host: a short ``[DEFAULT]
host`` whose compute node is the FQDN, and the reverse. Flavors name
17.0.0's resource classes and traits; a server of each holds a device of
each kind on each host.

Then the upgrade guide's steps (``doc/source/admin/upgrades.rst``): stop
17.0.0, back the database up, ``cyborg-dbsync upgrade``, start ours with
the same configuration. The running servers keep their devices, the same
flavors boot new servers onto the same providers, no device is recorded
twice, and no provider loses a trait. Then its rollback: stop ours,
restore the backup, start 17.0.0 again, which still serves and boots.
"""

import json
import os
import subprocess
import sys
import urllib.parse
import uuid

import fixtures
from oslo_db.sqlalchemy import test_fixtures
import pytest
import requests
import sqlalchemy as sa
import testtools

from cyborg.common import pci_address
from cyborg.db import api as db_api
from cyborg.demo import nova
from cyborg.demo import privsep as demo_privsep
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional
from cyborg.tests.functional.db import test_cyborg17
from cyborg.tests.functional import services
from cyborg.tests.functional.upgrade import legacy_host

NOVA_VENV = os.environ.get('CYBORG_TEST_NOVA_VENV', nova.VENV)
VENV = test_cyborg17.VENV
#: (``[DEFAULT] host``, Nova's compute node, the name 17.0.0's agent is
#: told to use for it in Placement: ``[agent] resource_provider_name``,
#: whose default is the FQDN).
HOSTS = (('compute-s', 'compute-s.example.org', 'compute-s.example.org'),
         ('compute-f.example.org', 'compute-f', 'compute-f'))
TIMEOUT = 180
#: Who 17.0.0's API takes every request to be: its paste pipeline with
#: the stand-in for keystonemiddleware that Nova's API runs behind
#: (:func:`cyborg.demo.nova_runner.auth_filter_factory`).
_PASTE = '''[pipeline:main]
pipeline = request_id testauth api_v2

[app:api_v2]
paste.app_factory = cyborg.api.app:app_factory

[filter:testauth]
paste.filter_factory = nova_runner:auth_filter_factory

[filter:request_id]
paste.filter_factory = oslo_middleware:RequestId.factory
'''


def _token_auth(url):
    return {'auth_type': 'admin_token', 'endpoint': url,
            'token': nova.TOKEN, 'endpoint_override': url}


class _EmptyMariaDB(test_fixtures.MySQLOpportunisticFixture):
    """An empty database behind cyborg.db.api's facade, for 17.0.0."""

    def get_enginefacade(self):
        return db_api.main_context_manager


@pytest.mark.xdist_group('nova')
class TestTakeover(services.ServicesTestCase):

    FIXTURE = _EmptyMariaDB

    def setUp(self):
        super().setUp()
        for path in (os.path.join(NOVA_VENV, 'bin', 'nova-compute'),
                     VENV / 'bin' / 'cyborg-agent'):
            if not os.path.exists(path):
                self.skipTest('needs %s: run tools/setup-client-venvs.sh'
                              % path)
        if os.geteuid() or subprocess.run(
                ['unshare', '--mount', 'true']).returncode:
            self.skipTest('needs root and mount namespaces to show '
                          '17.0.0 its simulated cards')
        self.use_vhost()
        self.api_port, nova_port, neutron_port = functional.free_ports(3)
        self.legacy_url = 'http://127.0.0.1:%d%s/v2' % (
            self.api_port, legacy_host.PREFIX)
        if cyborg_fixtures.Glance.missing():
            self.skipTest(cyborg_fixtures.Glance.missing())
        glance = self.useFixture(cyborg_fixtures.Glance(self.conf))
        self.image_id = glance.add_image(b'a disk', name='disk', tags=())[
            'id']
        self.nova_services = nova.NovaServices(
            os.path.join(self.tmp, 'nova'), NOVA_VENV,
            {'api': nova_port, 'neutron': neutron_port}, self.placement.url,
            self.legacy_url, glance.url, self._nova_vhost(),
            HOSTS[0][0], nodename=HOSTS[0][1])
        self.addCleanup(self.nova_services.stop)
        self.addOnException(self._nova_logs)
        self.nova_services.setup()
        # 17.0.0's API imports the stand-in for keystonemiddleware from
        # there; nothing of ours is on its path.
        self.useFixture(fixtures.EnvironmentVariable(
            'PYTHONPATH', self.nova_services.state))
        self.nova_services.start(TIMEOUT)
        for host, node, _name in HOSTS[1:]:
            self.nova_services.start_compute(host, node, TIMEOUT)
        self.compute = self.nova_services.adapter()
        response = self.compute.put('/os-quota-class-sets/default', json={
            'quota_class_set': {'instances': -1, 'cores': -1, 'ram': -1}})
        self.assertEqual(200, response.status_code, response.text)
        for host, node, _name in HOSTS:
            self.nodes[host] = node
            self.compute_rps[host] = self._one('/resource_providers', {
                'name': node})['uuid']
            self.trees[host] = legacy_host.build(
                os.path.join(self.tmp, 'sys-' + host))
        self.bin_dir = os.path.join(self.tmp, 'bin')
        legacy_host.write_tools(self.bin_dir)
        self.legacy_conf = self._legacy_config()
        self.backup = os.path.join(self.tmp, 'cyborg-before.sql')
        # Each query on a connection of its own: the services change the
        # tables between them.
        self.engine = sa.create_engine(self.db_url, poolclass=sa.pool.NullPool)

    def _nova_vhost(self):
        vhost = 'cyborg-takeover-nova-%s' % uuid.uuid4().hex[:8]
        functional.rabbitmqctl('add_vhost', vhost)
        functional.rabbitmqctl('set_permissions', '-p', vhost, 'guest',
                               '.*', '.*', '.*')
        self.addCleanup(functional.rabbitmqctl, 'delete_vhost', vhost)
        return urllib.parse.urlsplit(functional.RABBIT_URL)._replace(
            path='/' + vhost).geturl()

    def _nova_logs(self, exc_info):
        for name in sorted(os.listdir(self.nova_services.path('logs'))):
            with open(self.nova_services.path('logs', name),
                      errors='replace') as f:
                self.addDetail(name, testtools.content.text_content(
                    ''.join(f.readlines()[-100:])))

    # --- 17.0.0 -----------------------------------------------------------

    def _legacy_config(self):
        """17.0.0's configuration: what ``/etc/cyborg/cyborg.conf`` holds.

        :returns: {host: its sections} for the agents, ``None`` for the
            API and conductor.
        """
        paste = os.path.join(self.tmp, 'api-paste.ini')
        with open(paste, 'w') as f:
            f.write(_PASTE)
        common = {
            'DEFAULT': {'transport_url': self.rabbit, 'debug': 'true',
                        'periodic_interval': 2},
            'database': {'connection': self.db_url},
            'placement': _token_auth(self.placement.url),
            'nova': _token_auth(self.nova_services.url),
            'api': {'host_ip': '127.0.0.1', 'port': self.api_port,
                    'api_workers': 1, 'api_paste_config': paste},
        }
        confs = {None: common}
        for host, _node, rp_name in HOSTS:
            conf_path = os.path.join(self.tmp, 'legacy-%s.conf' % host)
            confs[host] = services.merged(services.merged(
                common, legacy_host.CONFIG), {
                'DEFAULT': {'host': host},
                'agent': {'resource_provider_name': rp_name},
                'cyborg_sys_admin': {'helper_command': '%s --config-file %s'
                                     % (VENV / 'bin' / 'privsep-helper',
                                        conf_path)}})
        return confs

    def _legacy_command(self, name):
        return [str(VENV / 'bin' / name)]

    def start_legacy(self):
        """17.0.0's API, conductor and an agent on each simulated host.

        Each agent starts once the one before has reported its host:
        17.0.0's conductor drops a device whose trait another report
        created a moment before (Placement answers 204, not 201), and
        its agents report again only a minute later.

        :returns: their processes.
        """
        processes = [
            self._start_legacy(legacy_host.api_command(
                VENV / 'bin' / 'python', self.api_port), 'legacy-api', None),
            self._start_legacy('cyborg-conductor', 'legacy-conductor',
                               None)]
        for count, (host, _node, _name) in enumerate(HOSTS, 1):
            processes.append(self._start_legacy(
                legacy_host.command(
                    self._legacy_command('cyborg-agent'),
                    self.trees[host].root, host, self.bin_dir),
                'legacy-%s' % host, host))
            functional.wait('17.0.0 reporting %s' % host,
                            lambda: self.reported(HOSTS[:count]), TIMEOUT)
        functional.wait('17.0.0 cyborg-api serving', lambda: self._get(
            self.legacy_url), TIMEOUT)
        return processes

    def _start_legacy(self, command, name, host):
        if isinstance(command, str):
            command = self._legacy_command(command)
        return self.start_service(command, name, self.legacy_conf[host])

    # --- HTTP -------------------------------------------------------------

    def _get(self, url, **params):
        try:
            response = requests.get(url, params=params, timeout=30, headers={
                'OpenStack-API-Version': 'accelerator 2.0'})
        except requests.ConnectionError:
            return None
        return response.json() if response.status_code == 200 else None

    def _one(self, path, params):
        response = self.rp.get(path, params=params)
        self.assertEqual(200, response.status_code, response.text)
        [found] = response.json()['resource_providers']
        return found

    def _traits(self, rp_uuid):
        response = self.rp.get('/resource_providers/%s/traits' % rp_uuid)
        self.assertEqual(200, response.status_code, response.text)
        return set(response.json()['traits'])

    def providers(self):
        """{uuid: (name, inventories, traits)} of the devices' providers."""
        found = {}
        for host in self.compute_rps:
            response = self.rp.get('/resource_providers', params={
                'in_tree': self.compute_rps[host]})
            for rp in response.json()['resource_providers']:
                if rp['uuid'] == self.compute_rps[host]:
                    continue
                inventories = self.rp.get(
                    '/resource_providers/%s/inventories' % rp['uuid']).json()
                found[rp['uuid']] = (rp['name'], {
                    rc: inv['total'] for rc, inv in
                    inventories['inventories'].items()},
                    self._traits(rp['uuid']))
        return found

    def allocations(self, consumer):
        response = self.rp.get('/allocations/%s' % consumer)
        self.assertEqual(200, response.status_code, response.text)
        return {rp: alloc['resources'] for rp, alloc in
                response.json()['allocations'].items()}

    # --- what 17.0.0 made, from its database ------------------------------

    def rows(self, query):
        with self.engine.connect() as connection:
            return [row._asdict() for row in connection.execute(
                sa.text(query))]

    def legacy_groups(self):
        """{flavor name: (host, device profile group)}.

        Each group asks for the resource class and every trait 17.0.0
        gave a deployable, as an operator's device profile names them:
        one group for each host and set of those, so that the cards of a
        kind, alike, answer the same group.
        """
        deployables = {}
        for row in self.rows(
                'SELECT d.id, v.hostname, a.`key`, a.value FROM deployables '
                'd JOIN devices v ON v.id = d.device_id JOIN attributes a '
                'ON a.deployable_id = d.id ORDER BY d.id'):
            deployables.setdefault((row['id'], row['hostname']), []).append(
                (row['key'], row['value']))
        groups = {}
        for (_id, hostname), pairs in deployables.items():
            group = {'resources:%s' % value: '1'
                     for key, value in pairs if key == 'rc'}
            group.update({'trait:%s' % value: 'required'
                          for key, value in pairs
                          if key != 'rc' and value != 'OWNER_CYBORG'})
            if (hostname, group) not in groups.values():
                groups['f-%d' % len(groups)] = (hostname, group)
        return groups

    # --- Nova -------------------------------------------------------------

    def profile(self, name, group):
        response = requests.post(self.legacy_url + '/device_profiles',
                                 json=[{'name': name, 'groups': [group]}],
                                 timeout=30)
        self.assertEqual(201, response.status_code, response.text)

    def flavor(self, name, profile, node):
        response = self.compute.post('/flavors', json={'flavor': {
            'name': name, 'ram': 64, 'vcpus': 1, 'disk': 0}})
        self.assertEqual(200, response.status_code, response.text)
        flavor = response.json()['flavor']['id']
        response = self.compute.post(
            '/flavors/%s/os-extra_specs' % flavor, json={'extra_specs': {
                'accel:device_profile': profile}})
        self.assertEqual(200, response.status_code, response.text)
        return flavor

    def boot(self, flavor, node):
        response = self.compute.post('/servers', json={'server': {
            'name': 's-' + uuid.uuid4().hex[:8], 'imageRef': self.image_id,
            'flavorRef': flavor, 'networks': 'none',
            'availability_zone': 'nova::%s' % node}})
        self.assertEqual(202, response.status_code, response.text)
        return response.json()['server']['id']

    def wait_active(self, servers, groups):
        """Every server of ``servers`` ({server: flavor}) is ACTIVE.

        It waits until none is building; the failure names the flavor
        and group of each server that is not ACTIVE, and its fault.
        """
        def settled():
            found = {server: self.compute.get('/servers/%s' % server).json()[
                'server'] for server in servers}
            if any(s['status'] == 'BUILD' for s in found.values()):
                return None
            return found
        found = functional.wait('servers settled', settled, TIMEOUT)
        self.assertEqual({}, {
            servers[server]: (groups[servers[server]], s['status'],
                              s.get('fault', {}).get('message'))
            for server, s in found.items() if s['status'] != 'ACTIVE'})

    def server_arqs(self, url, servers):
        """{server: [(device_rp_uuid, attach handle)]} from an API."""
        found = {}
        for server in servers:
            arqs = self._get(url + '/accelerator_requests',
                             instance=server)['arqs']
            found[server] = sorted(
                (arq['device_rp_uuid'], arq['attach_handle_type'],
                 json.dumps(arq['attach_handle_info'], sort_keys=True)
                 if isinstance(arq['attach_handle_info'], dict)
                 else arq['attach_handle_info'], arq['state'])
                for arq in arqs)
        return found

    def devices(self):
        """[(compute node, PCI address)] of every device row, sorted.

        A row is named by its host as either release records it; its
        address is None while 17.0.0 has yet to write its control path.
        """
        nodes = {name: node for host, node, _rp in HOSTS
                 for name in (host, node)}
        return sorted(
            ((nodes[row['hostname']], pci_address.address_of(
                json.loads(row['cpid_info'] or 'null')))
             for row in self.rows(
                'SELECT d.hostname, c.cpid_info FROM devices d LEFT JOIN '
                'controlpath_ids c ON c.device_id = d.id')),
            key=lambda device: (device[0], device[1] or ''))

    def deployables(self):
        """{(uuid, provider)} of every deployable, as the API shows them.

        Not their names: 17.0.0 named deployables after ``[DEFAULT] host``
        (or the system's host name), Cyborg's API shows them under the
        compute node's name, and the two differ in both setups here
        (doc/source/admin/upgrades.rst, "Deployable names");
        test_cyborg17_wire compares the names where they are the same.
        """
        return {(d['uuid'], d['rp_uuid']) for d in self._get(
            self.legacy_url + '/deployables')['deployables']}

    def reported(self, hosts=HOSTS):
        """17.0.0 recorded every device of ``hosts``, with providers."""
        nodes = {node for _host, node, _rp in hosts}
        return [device for device in self.devices()
                if device[0] in nodes] == sorted(
            (node, address) for _host, node, _rp in hosts
            for address in legacy_host.addresses()) and all(
            row['rp_uuid'] for row in self.rows(
                'SELECT rp_uuid FROM deployables'))

    # --- the upgrade guide ------------------------------------------------

    def stop_all(self, processes):
        for process in processes:
            process.stop()

    def dump_database(self):
        url = sa.engine.make_url(self.db_url)
        with open(self.backup, 'w') as out:
            subprocess.run(
                ['mysqldump', '--single-transaction', '--routines', '-h',
                 url.host, '-u', url.username, url.database], stdout=out,
                check=True)

    def restore_database(self):
        url = sa.engine.make_url(self.db_url)
        with open(self.backup) as backup:
            subprocess.run(['mysql', '-h', url.host, '-u', url.username,
                            url.database], stdin=backup, check=True)

    def dbsync(self, conf_path):
        result = subprocess.run(
            [sys.executable, '-c', 'import sys; from cyborg.cmd import '
             'dbsync; sys.exit(dbsync.main())', '--config-file', conf_path,
             'upgrade'], capture_output=True, text=True)
        self.assertEqual(0, result.returncode, result.stderr)

    def start_ours(self):
        """Our services with 17.0.0's configuration, and what ours adds."""
        common = self.legacy_conf[None]
        processes = [self.start_service(
            'cyborg-conductor', 'conductor', services.merged(common, {
                'DEFAULT': {'host': 'conductor'},
                'conductor': {'workers': 1, 'reconcile_interval': 1},
                'nova': {'endpoint': self.nova_services.url}}))]
        processes.append(self.start_service(
            legacy_host.api_command(sys.executable, self.api_port), 'api',
            services.merged(common, {'api': {'auth_strategy': 'noauth'}})))
        for host, _node, _name in HOSTS:
            processes.append(self.start_service(
                'cyborg-agent', host, services.merged(
                    self.legacy_conf[host], {
                        'agent': {
                            'enabled_drivers': ','.join(OUR_DRIVERS),
                            'sysfs_root': self.trees[host].root,
                            'report_interval': 1,
                            'placement_wait_interval': 1,
                            'enable_hotplug_monitor': 'false'}}),
                demo_privsep.config_lines(
                    os.path.join(self.tmp, host + '.conf'))))
        functional.wait('our cyborg-api serving', lambda: self._get(
            self.legacy_url), TIMEOUT)
        return processes

    # --- the rehearsal ----------------------------------------------------

    def test_switch_and_roll_back(self):
        self.dbsync_legacy()
        legacy = self.start_legacy()
        groups = self.legacy_groups()
        flavors = {}
        for name, (hostname, group) in groups.items():
            self.profile(name, group)
            node = [n for h, n, r in HOSTS if r == hostname][0]
            flavors[name] = (self.flavor(name, name, node), node)
        # 17.0.0 binds a vGPU by asking the agent at Nova's node name to
        # make the mdev, while its agent listens at [DEFAULT] host: where
        # the two differ (both setups here) no vGPU was ever bound.
        held = {self.boot(flavor, node): name
                for name, (flavor, node) in flavors.items()
                if 'resources:VGPU' not in groups[name][1]}
        self.wait_active(held, groups)
        before = self.server_arqs(self.legacy_url, held)
        held_allocations = {server: self.allocations(server)
                            for server in held}
        providers = self.providers()
        devices = self.devices()
        deployables = self.deployables()

        # The switch, as the upgrade guide has it.
        self.stop_all(legacy)
        self.dump_database()
        self.dbsync(self.write_conf('dbsync', self.legacy_conf[None]))
        ours = self.start_ours()
        functional.wait('our agents reporting both hosts', lambda: set(
            self.compute_rps.values()) <= {row['compute_rp_uuid'] for row in
                                           self.rows('SELECT compute_rp_uuid '
                                                     'FROM hosts')}, TIMEOUT)

        # The running servers keep their devices: the same providers, the
        # same handles, the same allocations.
        self.assertEqual(before, self.server_arqs(self.legacy_url, held))
        for server, allocation in held_allocations.items():
            self.assertEqual(allocation, self.allocations(server))
        # No device is recorded twice, none is lost; each deployable
        # keeps its provider.
        self.assertEqual(devices, self.devices())
        self.assertLessEqual(deployables, self.deployables())
        # Every provider is there, with at least its traits.
        now = self.providers()
        for rp_uuid, (name, inventories, traits) in providers.items():
            self.assertIn(rp_uuid, now)
            self.assertEqual(inventories, now[rp_uuid][1], name)
            self.assertLessEqual(traits, now[rp_uuid][2], name)
        # The same flavors boot new servers onto the same providers.
        booted = {self.boot(flavor, node): name
                  for name, (flavor, node) in flavors.items()}
        self.wait_active(booted, groups)
        for server, arqs in self.server_arqs(
                self.legacy_url, booted).items():
            for rp_uuid, _type, _info, state in arqs:
                self.assertEqual('Bound', state)
                self.assertIn(rp_uuid, providers)

        # The rollback: stop ours, restore the backup, start 17.0.0.
        self.stop_all(ours)
        self.restore_database()
        legacy = self.start_legacy()
        self.assertEqual(before, self.server_arqs(self.legacy_url, held))
        again = {self.boot(flavors[name][0], flavors[name][1]): name
                 for name, (hostname, group) in groups.items()
                 if 'trait:CUSTOM_FAKE_DEVICE' in group}
        self.assertEqual(len(HOSTS), len(again))
        self.wait_active(again, groups)
        self.assertEqual(devices, self.devices())
        self.assertEqual(deployables, self.deployables())

    def dbsync_legacy(self):
        result = subprocess.run(
            self._legacy_command('cyborg-dbsync') + [
                '--config-file', self.write_conf('legacy-dbsync', {
                    'database': {'connection': self.db_url}}), 'upgrade'],
            capture_output=True, text=True)
        self.assertEqual(0, result.returncode, result.stderr)


#: Our drivers of the same kinds.
OUR_DRIVERS = (
    'intel_fpga_driver', 'xilinx_fpga_driver', 'inspur_fpga_driver',
    'nvidia_gpu_driver', 'generic_pci_driver', 'intel_nic_driver',
    'intel_qat_driver', 'nvme_ssd_driver', 'fake_driver')
