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
The services' steps are :mod:`upgrade_steps`; what the test reads of the
cloud, :mod:`cloud_view`.
"""

import os
import subprocess
import time
import urllib.parse
import uuid

import fixtures
from oslo_db.sqlalchemy import test_fixtures
import pytest
import requests
import sqlalchemy as sa
import testtools

from cyborg.db import api as db_api
from cyborg.objects import host as host_obj
from cyborg.tests import functional
from cyborg.tests.functional.db import test_cyborg17
from cyborg.tests.functional import services
from cyborg.tests.functional.upgrade import boot_loop
from cyborg.tests.functional.upgrade import cloud_view
from cyborg.tests.functional.upgrade import legacy_host
from cyborg.tests.functional.upgrade import upgrade_steps
from cyborg.tests import openstack_fixtures
from cyborg_quickstart import nova

NOVA_VENV = os.environ.get('CYBORG_TEST_NOVA_VENV', nova.VENV)
VENV = test_cyborg17.VENV
HOSTS = cloud_view.HOSTS
TIMEOUT = upgrade_steps.TIMEOUT
#: Nova's ``[compute] resource_provider_association_refresh`` here: how
#: long a nova-compute keeps a provider deleted under it (see hotplug).
PROVIDER_REFRESH = 10


class _EmptyMariaDB(test_fixtures.MySQLOpportunisticFixture):
    """An empty database behind cyborg.db.api's facade, for 17.0.0."""

    def get_enginefacade(self):
        return db_api.main_context_manager


# Its own Nova, apart from the other tests': on a worker of its own.
@pytest.mark.long(minutes=7)
@pytest.mark.xdist_group('takeover')
class TestTakeover(upgrade_steps.UpgradeSteps, cloud_view.CloudView,
                   services.ServicesTestCase):

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
        if openstack_fixtures.Glance.missing():
            self.skipTest(openstack_fixtures.Glance.missing())
        glance = self.useFixture(openstack_fixtures.Glance(self.conf))
        self.image_id = glance.add_image(b'a disk', name='disk', tags=())[
            'id']
        self.glance_url = glance.url
        self.bitstream_id = glance.add_image()['id']
        self.nova_services = nova.NovaServices(
            os.path.join(self.tmp, 'nova'), NOVA_VENV,
            {'api': nova_port, 'neutron': neutron_port}, self.placement.url,
            self.legacy_url, glance.url, self._nova_vhost(),
            HOSTS[0][0], nodename=HOSTS[0][1],
            provider_refresh=PROVIDER_REFRESH)
        self.addCleanup(self.nova_services.stop)
        self.addOnException(self._nova_logs)
        self.addOnException(self._our_logs)
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

    def _our_logs(self, exc_info):
        for name in sorted(os.listdir(self.tmp)):
            if name.endswith('.log'):
                with open(os.path.join(self.tmp, name),
                          errors='replace') as f:
                    self.addDetail(name, testtools.content.text_content(
                        ''.join(line for line in f if ' DEBUG ' not in line
                                )[-20000:]))

    def _nova_logs(self, exc_info):
        for name in sorted(os.listdir(self.nova_services.path('logs'))):
            with open(self.nova_services.path('logs', name),
                      errors='replace') as f:
                self.addDetail(name, testtools.content.text_content(
                    ''.join(f.readlines()[-100:])))

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
            found = {s['id']: s for s in self.compute.get(
                '/servers/detail').json()['servers'] if s['id'] in servers}
            self.assertEqual(set(servers), set(found))
            if any(s['status'] == 'BUILD' for s in found.values()):
                return None
            return found
        found = functional.wait('servers settled', settled, TIMEOUT)
        self.assertEqual({}, {
            servers[server]: (groups[servers[server]], s['status'],
                              s.get('fault', {}).get('message'))
            for server, s in found.items() if s['status'] != 'ACTIVE'})

    # --- the rehearsal ----------------------------------------------------

    def test_live_takeover_and_roll_back(self):
        self.dbsync_legacy()
        legacy = self.start_legacy()
        groups = self.legacy_groups()
        for name, (hostname, group) in list(groups.items()):
            if any('INTEL' in key for key in group if 'FPGA' in key):
                groups['p' + name] = (hostname, dict(group, **{
                    'accel:bitstream_id': self.bitstream_id}))
        flavors = {}
        for name, (hostname, group) in groups.items():
            self.profile(name, group)
            node = [n for h, n, r in HOSTS if r == hostname][0]
            flavors[name] = (self.flavor(name, name, node), node)
        # 17.0.0 binds a vGPU by asking the agent at Nova's node name to
        # make the mdev, while its agent listens at [DEFAULT] host: where
        # the two differ (both setups here) no vGPU was ever bound. Nor
        # does it program with the token Nova's request has here.
        served = sorted(name for name, (_h, group) in groups.items()
                        if 'resources:VGPU' not in group and
                        'accel:bitstream_id' not in group)
        held = {self.boot(*flavors[name]): name for name in served}
        self.wait_active(held, groups)
        before = self.server_arqs(self.legacy_url, held)
        held_allocations = {server: self.allocations(server)
                            for server in held}
        providers = self.providers()
        devices = self.devices()
        deployables = self.deployables()
        loop = boot_loop.BootLoop(
            self.nova_services.adapter(), self.image_id,
            [(name,) + flavors[name] for name in served], '17.0.0', TIMEOUT)
        self.addCleanup(loop.stop)
        loop.start()
        functional.wait('boots under 17.0.0', lambda: len(loop.attempts) >= 2,
                        TIMEOUT)

        # The controllers, in kolla-ansible's order: the database converted
        # while 17.0.0's API, conductor and agents run, then the API and
        # conductor restarted as ours; the agents keep running.
        self.dump_database()
        loop.phase = 'switch'
        window = time.monotonic()
        self.dbsync(self.write_conf('dbsync', self.legacy_conf[None]))
        for process in legacy[:2]:
            process.stop()
        ours = self.start_controllers()
        functional.wait('our conductor serving both 17.0.0 agents', lambda: {
            row['hostname'] for row in self.rows(
                'SELECT hostname, compute_rp_name FROM hosts')
            if (row['compute_rp_name'] or '').startswith(
                host_obj.CYBORG17_AGENT)} == {n for _h, n, _r in HOSTS},
            TIMEOUT)
        window = time.monotonic() - window
        # Nova does not ask again to delete the requests of a server
        # deleted while no API answered: the audit releases them.
        self.assertIn(self.audit('--heal').returncode, (0, 1))
        loop.phase = 'mixed'
        loop.boot_also((name,) + flavors[name] for name in sorted(groups)
                       if name not in served)

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
        # With 17.0.0's agents, every flavor boots on both hosts onto the
        # same providers, vGPUs and programmed FPGAs included (the loop
        # may have programmed one before its pause).
        loop.pause()
        programmed = len(legacy_host.programmed(self.bin_dir))
        self.boot_each_flavor(flavors, groups, providers)
        self.assertEqual(len(HOSTS), len(legacy_host.programmed(
            self.bin_dir)) - programmed)
        self.hotplug(HOSTS[0])
        loop.resume()

        # Then the compute hosts, one by one.
        for host, _node, _name in HOSTS:
            loop.phase = 'agent on %s' % host
            legacy[2 + HOSTS.index((host, _node, _name))].stop()
            ours.append(self.start_our_agent(host))
            functional.wait('our agent in charge of %s' % host, lambda: all(
                row['compute_rp_name'] and not row['compute_rp_name'].
                startswith(host_obj.CYBORG17_AGENT) for row in self.rows(
                    "SELECT compute_rp_name FROM hosts WHERE hostname = "
                    "'%s'" % _node)), TIMEOUT)
        loop.phase = 'upgraded'
        functional.wait('a boot once upgraded', lambda: any(
            a.phase == 'upgraded' for a in loop.attempts), TIMEOUT)
        loop.stop()
        # Every flavor boots with our agents too, onto the same providers.
        self.boot_each_flavor(flavors, groups, providers)
        # The figures of the upgrade guide (pytest -s shows them).
        figures = 'switch window %.1f s\n%s' % (window, '\n'.join(
            '%s: %d attempted, %d failed' % (phase, *counts)
            for phase, counts in loop.summary().items()))
        print(figures)
        self.addDetail('boots', testtools.content.text_content(figures))
        # A boot under way when the switch began may fail with it.
        self.assertEqual([], [a for a in loop.attempts if not a.ok and
                              'switch' not in (a.phase, a.ended_in)])
        self.assertEqual(before, self.server_arqs(self.legacy_url, held))
        # Nothing of the loop's servers holds a device: no bound request,
        # no handle in use. A boot that failed in the switch window may
        # leave a request that holds nothing (never bound).
        left = [(row['instance_uuid'], row['state']) for row in self.rows(
            'SELECT instance_uuid, state, attach_handle_id FROM '
            'accelerator_requests') if row['instance_uuid'] not in held and
            (row['state'] == 'Bound' or row['attach_handle_id'])]
        self.assertEqual([], left)
        self.assertEqual(self.rows(
            'SELECT count(*) AS n FROM accelerator_requests WHERE '
            'attach_handle_id IS NOT NULL'), self.rows(
            'SELECT count(*) AS n FROM attach_handles WHERE in_use'))

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

    def boot_each_flavor(self, flavors, groups, providers):
        """A server of each flavor at once, Bound onto ``providers``.

        Those with a bitstream boot after the others, since they take the
        same cards. The servers are deleted.
        """
        for wave in (False, True):
            booted = {self.boot(*flavors[name]): name
                      for name, (_h, group) in groups.items()
                      if ('accel:bitstream_id' in group) is wave}
            self.wait_active(booted, groups)
            for server, arqs in self.server_arqs(
                    self.legacy_url, booted).items():
                for rp_uuid, _type, _info, state in arqs:
                    self.assertEqual('Bound', state)
                    self.assertIn(rp_uuid, providers)
            self.delete(booted)

    def hotplug(self, host_entry):
        """A card added on a 17.0.0 host is offered; removed, it leaves.

        The boot loop is paused meanwhile, and until the host's
        nova-compute has read its provider tree again: until then it
        keeps the card's deleted provider and fails every build on the
        host (``doc/source/admin/placement.rst``).
        """
        host, node, _name = host_entry
        address = '0000:19:00.0'

        def shown():
            return ((node, address) in self.devices(), len(self.rp.get(
                '/resource_providers', params={
                    'in_tree': self.compute_rps[host]}).json()[
                'resource_providers']), len(self._get(
                    self.legacy_url + '/devices')['devices']))
        was = shown()
        self.trees[host].add_pci(address, vendor='1d0f', product='efa1',
                                 class_code='020000')
        functional.wait('the new card offered', lambda: shown() == (
            True, was[1] + 1, was[2] + 1), TIMEOUT)
        self.trees[host].remove_pci(address)
        functional.wait('the card gone', lambda: shown() == was, TIMEOUT)
        time.sleep(PROVIDER_REFRESH + 1)

    def delete(self, servers):
        for server in servers:
            response = self.compute.delete('/servers/%s' % server)
            self.assertEqual(204, response.status_code, response.text)
        functional.wait('servers deleted', lambda: all(
            self.compute.get('/servers/%s' % server,
                             raise_exc=False).status_code == 404
            for server in servers), TIMEOUT)
