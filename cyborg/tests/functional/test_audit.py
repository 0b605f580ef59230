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
"""``cyborg-manage audit [--heal]`` as an operator runs it.

The database is an SQLite file and Placement the real one. Nova's servers
API is a small loopback server that answers ``GET /servers/<uuid>`` 200
for the servers it holds and 404 for the others, as Nova does; the real
Nova answers the same call in ``cyborg.tests.functional.nova.test_nova``.
"""

import json
import subprocess
import sys

import fixtures
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils

from cyborg.clients import placement
from cyborg.conductor import placement_sync
from cyborg.db import api as db_api
from cyborg.db import migration
from cyborg.objects import host as host_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional
from cyborg.tests import openstack_fixtures
from cyborg_quickstart import server as demo_server

GROUP = {'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required'}


class _Servers:
    """Nova's ``GET /servers/<uuid>``, for the servers in :attr:`known`.

    ``GET /servers?all_tenants=1`` answers 200 as to an admin, or 403 as
    to a user with only the ``service`` role while :attr:`all_projects`
    is false; such a user gets 404 for every server of another project.
    """

    def __init__(self):
        self.known = set()
        self.all_projects = True

    def __call__(self, environ, start_response):
        if environ['PATH_INFO'].rstrip('/') == '/servers':
            status, answer = ('200 OK', {'servers': []}) \
                if self.all_projects else ('403 Forbidden', {'forbidden': {
                    'code': 403, 'message': "Policy doesn't allow "
                    "os_compute_api:servers:index:get_all_tenants to be "
                    "performed."}})
            body = json.dumps(answer).encode()
            start_response(status, [('Content-Type', 'application/json'),
                                    ('Content-Length', str(len(body)))])
            return [body]
        server = environ['PATH_INFO'].rstrip('/').rsplit('/', 1)[-1]
        found = (environ['REQUEST_METHOD'] == 'GET' and
                 environ['PATH_INFO'].startswith('/servers/') and
                 server in self.known)
        body = json.dumps({'server': {'id': server, 'status': 'ACTIVE'}}
                          if found else {'itemNotFound': {
                              'code': 404, 'message': 'not found'}}).encode()
        start_response('200 OK' if found else '404 Not Found',
                       [('Content-Type', 'application/json'),
                        ('Content-Length', str(len(body)))])
        return [body]


class TestAudit(base.TestCase):

    def setUp(self):
        super().setUp()
        state = self.useFixture(fixtures.TempDir()).path
        facade = enginefacade.transaction_context()
        facade.configure(connection='sqlite:///%s/cyborg.sqlite' % state)
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_api.main_context_manager, facade))
        migration.upgrade('head', engine=db_api.get_engine())
        self.ctx = self.admin_context
        self.placement = self.useFixture(openstack_fixtures.Placement())
        self.direct = self.placement.adapter()
        self.host = self.placement.hostname
        self.servers = _Servers()
        self.nova = demo_server.LoopbackServer(self.servers, threads=2,
                                               name='nova-servers').start()
        self.addCleanup(self.nova.stop)
        self.conf_file = '%s/cyborg.conf' % state
        # --heal asks a conductor, here one in this process on RabbitMQ.
        vhost = 'cyborg-audit-%s' % uuidutils.generate_uuid()[:12]
        self.transport_url = functional.vhost(vhost)
        if self.transport_url is None:
            self.skipTest('needs rabbitmqctl to give the test a virtual '
                          'host')
        self.addCleanup(functional.rabbitmqctl, 'delete_vhost', vhost)
        self.useFixture(cyborg_fixtures.RPC(self.transport_url))
        openstack_fixtures.use_admin_token(self, 'nova', self.nova.url,
                                           'admin')
        self.conf.config(placement_max_retries=0, group='conductor')
        self.useFixture(cyborg_fixtures.Conductor())
        self._write_conf(state, self.nova.url)
        self.compute_rp = self._post_provider(self.host)
        self._put_inventory(self.compute_rp, 'VCPU', 8)
        host_obj.Host.set_compute_rp(self.ctx, self.host, self.compute_rp)
        self.profile = db_utils.create_profile(self.ctx, groups=[GROUP])

    def _write_conf(self, state, nova_url):
        with open(self.conf_file, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\ntransport_url = %s\n'
                    % (state, self.transport_url))
            f.write('[conductor]\nplacement_max_retries = 0\n')
            f.write('[placement]\n%s\n' % '\n'.join(
                '%s = %s' % kv for kv in sorted(self.placement.conf.items())))
            f.write('[nova]\nauth_type = admin_token\nendpoint = %s\n'
                    'token = admin\n' % nova_url)

    # --- seeding ------------------------------------------------------------

    def _post_provider(self, name, parent=None, traits=()):
        body = {'name': name}
        if parent:
            body['parent_provider_uuid'] = parent
        resp = self.direct.post('/resource_providers', json=body)
        self.assertEqual(200, resp.status_code, resp.text)
        rp_uuid = resp.json()['uuid']
        if traits:
            self.direct.put('/resource_providers/%s/traits' % rp_uuid, json={
                'traits': list(traits),
                'resource_provider_generation': resp.json()['generation']})
        return rp_uuid

    def _put_inventory(self, rp_uuid, rc, total, reserved=0):
        url = '/resource_providers/%s/inventories' % rp_uuid
        gen = self.direct.get(url).json()['resource_provider_generation']
        resp = self.direct.put(url, json={
            'resource_provider_generation': gen,
            'inventories': {rc: {'total': total, 'reserved': reserved,
                                 'max_unit': total}}})
        self.assertEqual(200, resp.status_code, resp.text)

    def _allocate(self, consumer, allocations, typed=True):
        body = {'allocations': {rp: {'resources': r}
                                for rp, r in allocations.items()},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None}
        if typed:
            body['consumer_type'] = 'INSTANCE'
        # Untyped as Nova's scheduler writes them, below microversion 1.38:
        # Placement then shows the consumer's type as "unknown".
        resp = self.direct.put('/allocations/%s' % consumer, json=body,
                               microversion='1.39' if typed else '1.36')
        self.assertEqual(204, resp.status_code, resp.text)

    def _allocations(self, consumer):
        return {rp: a['resources'] for rp, a in self.direct.get(
            '/allocations/%s' % consumer).json()['allocations'].items()}

    def _deployable(self, pci, **kwargs):
        device, deployable, handles = db_utils.create_device_tree(
            self.ctx, hostname=self.host, pci_address=pci, name=pci,
            resource_class='FPGA', traits=['CUSTOM_FPGA_INTEL'], **kwargs)
        return device, deployable, handles

    def _sync(self):
        placement_sync.sync_host(self.ctx, self.host, self.compute_rp,
                                 placement.PlacementClient())
        return {d.name: d for d in db_api.get_all(self.ctx, 'deployable')}

    def _bind(self, deployable, instance):
        arq, = db_utils.create_arqs(
            self.ctx, self.profile, state=states.BIND_STARTED,
            hostname=self.host, device_rp_uuid=deployable.rp_uuid,
            instance_uuid=instance)
        return db_utils.bind_arq(self.ctx, arq.uuid, deployable.id)

    def _seed(self):
        """A consistent host with one of each healable inconsistency."""
        for pci in ('0000:5e:00.0', '0000:5f:00.0', '0000:60:00.0'):
            self._deployable(pci)
        # A mounted NVMe: in use by the host itself, no ARQ; consistent.
        _dev, _dep, nvme = db_utils.create_device_tree(
            self.ctx, hostname=self.host, pci_address='0000:61:00.0',
            handles=1, device_type='SSD', name='0000:61:00.0')
        db_api.update(self.ctx, 'attach_handle', nvme[0].uuid,
                      {'in_use': True})
        deps = self._sync()
        ok, orphan_dep, drift = (deps[p] for p in (
            '0000:5e:00.0', '0000:5f:00.0', '0000:60:00.0'))
        seeded = {'ok_dep': ok, 'drift_rp': drift.rp_uuid}
        # Consistent: a server Nova knows, Bound, with its allocation.
        server = uuidutils.generate_uuid()
        self.servers.known.add(server)
        seeded['ok_arq'] = self._bind(ok, server)
        self._allocate(server, {ok.rp_uuid: {'FPGA': 1}})
        # An ARQ bound to a server Nova deleted, with its allocation.
        gone = uuidutils.generate_uuid()
        seeded['orphan'] = self._bind(orphan_dep, gone)
        seeded['gone'] = gone
        self._allocate(gone, {orphan_dep.rp_uuid: {'FPGA': 1}})
        seeded['orphan_rp'] = orphan_dep.rp_uuid
        # A consumer Nova does not know, on a Cyborg provider and on
        # the compute node.
        stray = uuidutils.generate_uuid()
        self._allocate(stray, {ok.rp_uuid: {'FPGA': 1},
                               self.compute_rp: {'VCPU': 2}}, typed=False)
        seeded['stray'] = stray
        # A handle in use that no ARQ holds.
        free = db_api.get_all(self.ctx, 'attach_handle', filters={
            'deployable_id': ok.id, 'in_use': False})[0]
        db_api.update(self.ctx, 'attach_handle', free.uuid, {'in_use': True})
        seeded['handle'] = free.uuid
        # A provider of Cyborg's that no deployable has.
        seeded['stray_rp'] = self._post_provider(
            self.host + '_gone', parent=self.compute_rp,
            traits=['OWNER_CYBORG'])
        # An inventory changed by hand.
        self._put_inventory(drift.rp_uuid, 'FPGA', 5)
        return seeded

    # --- running ------------------------------------------------------------

    def _manage(self, *args):
        return subprocess.run(
            [sys.executable, '-c',
             'import sys; from cyborg.cmd import manage; '
             'sys.exit(manage.main())', '--config-file', self.conf_file,
             'audit', *args],
            capture_output=True, text=True)

    def _audit(self, *args):
        result = self._manage('--format', 'json', *args)
        self.assertIn(result.returncode, (0, 1, 2), result.stderr)
        try:
            report = json.loads(result.stdout)
        except ValueError:
            self.fail('not JSON: %s\n%s' % (result.stdout, result.stderr))
        self.assertEqual(result.returncode, report['exit_status'])
        return report

    @staticmethod
    def _found(report):
        return {(f['kind'], f['object']): f for f in report['findings']}

    # --- tests --------------------------------------------------------------

    def test_finds_each_inconsistency_and_changes_nothing(self):
        seeded = self._seed()
        report = self._audit()
        self.assertEqual(1, report['exit_status'])
        self.assertTrue(all(s['checked'] for s in report['sources'].values()),
                        report['sources'])
        found = self._found(report)
        self.assertEqual({
            ('orphaned_arq', seeded['orphan'].uuid),
            ('handle_without_arq', seeded['handle']),
            ('allocation_without_arq', seeded['orphan_rp']),
            ('allocation_without_arq', seeded['ok_dep'].rp_uuid),
            ('provider_without_device', seeded['stray_rp']),
            ('inventory_drift', seeded['drift_rp']),
        }, set(found))
        self.assertTrue(all(f['repairable'] and not f['repaired']
                            for f in found.values()), found)
        self.assertIn(seeded['stray'], found[
            'allocation_without_arq', seeded['ok_dep'].rp_uuid]['detail'])
        self.assertIn('total is 5, the database says 2', found[
            'inventory_drift', seeded['drift_rp']]['detail'])
        table = self._manage()
        self.assertEqual(1, table.returncode, table.stderr)
        lines = table.stdout.splitlines()
        self.assertEqual(['KIND', 'OBJECT', 'HOST', 'DETAIL', 'ACTION'],
                         lines[0].split())
        self.assertIn('6 finding(s), 6 remaining.', lines)
        self.assertIn('--heal: unbind it', table.stdout)
        # Nothing changed.
        orphan = db_api.get(self.ctx, 'accelerator_request',
                            seeded['orphan'].uuid)
        self.assertEqual(states.BOUND, orphan.state)
        self.assertTrue(db_api.get(self.ctx, 'attach_handle',
                                   seeded['handle']).in_use)
        self.assertEqual(2, len(self._allocations(seeded['stray'])))
        self.assertEqual(200, self.direct.get(
            '/resource_providers/%s' % seeded['stray_rp']).status_code)

    def test_heal_repairs_and_audit_is_then_clean(self):
        seeded = self._seed()
        report = self._audit('--heal')
        self.assertEqual(0, report['exit_status'], report)
        self.assertEqual(6, len(report['findings']))
        self.assertTrue(all(f['repaired'] for f in report['findings']),
                        report['findings'])
        # The orphaned ARQ is Unbound, its handle free.
        orphan = db_api.get(self.ctx, 'accelerator_request',
                            seeded['orphan'].uuid)
        self.assertEqual((states.UNBOUND, None, None),
                         (orphan.state, orphan.instance_uuid,
                          orphan.attach_handle_id))
        self.assertFalse(db_api.get_by_id(
            self.ctx, 'attach_handle',
            seeded['orphan'].attach_handle_id).in_use)
        self.assertEqual({}, self._allocations(seeded['gone']))
        # The stray consumer keeps its allocation on the compute node.
        self.assertEqual({self.compute_rp: {'VCPU': 2}},
                         self._allocations(seeded['stray']))
        self.assertFalse(db_api.get(self.ctx, 'attach_handle',
                                    seeded['handle']).in_use)
        self.assertEqual(404, self.direct.get(
            '/resource_providers/%s' % seeded['stray_rp']).status_code)
        inventory = self.direct.get('/resource_providers/%s/inventories' %
                                    seeded['drift_rp']).json()
        self.assertEqual(2, inventory['inventories']['FPGA']['total'])
        # The consistent rows are as they were.
        ok = db_api.get(self.ctx, 'accelerator_request',
                        seeded['ok_arq'].uuid)
        self.assertEqual(states.BOUND, ok.state)
        self.assertTrue(db_api.get_by_id(self.ctx, 'attach_handle',
                                         ok.attach_handle_id).in_use)
        again = self._audit()
        self.assertEqual(([], 0), (again['findings'], again['exit_status']))

    def test_what_is_not_safe_is_only_reported(self):
        _dev, dep, _handles = self._deployable('0000:5e:00.0')
        rp_uuid = self._sync()['0000:5e:00.0'].rp_uuid
        # Booting: Nova knows the server, no ARQ is bound yet.
        booting = uuidutils.generate_uuid()
        self.servers.known.add(booting)
        # A provider without a device that still has an allocation.
        kept_rp = self._post_provider(self.host + '_kept',
                                      parent=self.compute_rp,
                                      traits=['OWNER_CYBORG'])
        self._put_inventory(kept_rp, 'FPGA', 1)
        self._allocate(booting, {rp_uuid: {'FPGA': 1},
                                 kept_rp: {'FPGA': 1}})
        # A device its host no longer reports, which no ARQ holds.
        gone_dev, _dep, _h = self._deployable(
            '0000:70:00.0', handles=0)
        db_api.update(self.ctx, 'device', gone_dev.uuid,
                      {'vanished_at': timeutils.utcnow()})
        report = self._audit('--heal')
        self.assertEqual(1, report['exit_status'])
        found = self._found(report)
        self.assertEqual({('allocation_without_arq', rp_uuid),
                          ('provider_without_device', kept_rp),
                          ('vanished_device', gone_dev.uuid)}, set(found))
        for finding in found.values():
            self.assertFalse(finding['repairable'] or finding['repaired'])
            self.assertTrue(finding['action'].startswith('left: '))
        self.assertEqual({rp_uuid: {'FPGA': 1}, kept_rp: {'FPGA': 1}},
                         self._allocations(booting))

    def test_nova_unreachable_no_arq_judged(self):
        seeded = self._seed()
        self.nova.stop()
        report = self._audit('--heal')
        self.assertEqual(2, report['exit_status'])
        self.assertFalse(report['sources']['nova']['checked'])
        self.assertTrue(report['sources']['placement']['checked'])
        kinds = {f['kind'] for f in report['findings']}
        self.assertNotIn('orphaned_arq', kinds)
        self.assertEqual(states.BOUND, db_api.get(
            self.ctx, 'accelerator_request', seeded['orphan'].uuid).state)
        self.assertEqual(2, len(self._allocations(seeded['stray'])))

    def test_heal_refused_when_nova_hides_other_projects(self):
        # [nova]'s user has only the service role: every server of another
        # project is 404 to it, live or not. Nothing may be judged gone.
        seeded = self._seed()
        self.servers.all_projects = False
        self.servers.known.clear()
        result = self._manage('--format', 'json', '--heal')
        self.assertEqual(2, result.returncode, result.stderr)
        report = json.loads(result.stdout)
        self.assertFalse(report['sources']['nova']['checked'])
        self.assertIn('all_tenants=1 answered 403',
                      report['sources']['nova']['reason'])
        self.assertIn('--heal refused: not every source could be read '
                      '(nova): nothing was changed', result.stderr)
        self.assertTrue(report['heal_refused'])
        found = self._found(report)
        self.assertNotIn(('orphaned_arq', seeded['orphan'].uuid), found)
        self.assertFalse(any(f['repaired'] for f in found.values()), found)
        # Nothing changed: ARQs bound, handles in use, allocations and
        # providers kept.
        for arq in (seeded['orphan'], seeded['ok_arq']):
            arq = db_api.get(self.ctx, 'accelerator_request', arq.uuid)
            self.assertEqual(states.BOUND, arq.state)
            self.assertTrue(db_api.get_by_id(
                self.ctx, 'attach_handle', arq.attach_handle_id).in_use)
        self.assertTrue(db_api.get(self.ctx, 'attach_handle',
                                   seeded['handle']).in_use)
        self.assertEqual(1, len(self._allocations(seeded['gone'])))
        self.assertEqual(2, len(self._allocations(seeded['stray'])))
        self.assertEqual(200, self.direct.get(
            '/resource_providers/%s' % seeded['stray_rp']).status_code)
        inventory = self.direct.get('/resource_providers/%s/inventories' %
                                    seeded['drift_rp']).json()
        self.assertEqual(5, inventory['inventories']['FPGA']['total'])
        # The table says so too.
        table = self._manage('--heal')
        self.assertEqual(2, table.returncode)
        self.assertIn('Nova not checked: [nova]\'s user may not list every '
                      'project\'s servers', table.stdout)

    def test_heal_needs_a_conductor_on_the_bus(self):
        # The all-in-one's fake:// reaches no conductor from another
        # process: --heal says so at once and changes nothing.
        seeded = self._seed()
        with open(self.conf_file) as f:
            conf = f.read().replace(self.transport_url, 'fake://')
        with open(self.conf_file, 'w') as f:
            f.write(conf)
        result = self._manage('--heal')
        self.assertEqual(2, result.returncode, result.stderr)
        self.assertIn('--heal asks a conductor over the message bus',
                      result.stderr)
        self.assertEqual(states.BOUND, db_api.get(
            self.ctx, 'accelerator_request', seeded['orphan'].uuid).state)
