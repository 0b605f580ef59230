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
"""Placement sync and reconcile of a host against the real Placement."""

import socket
import threading
import uuid as uuid_lib

import fixtures
from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils

from cyborg.clients import placement
from cyborg.conductor import placement_sync
from cyborg.db import api as db_api
from cyborg.db import host as host_db
from cyborg import exception
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import host as host_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import fixtures as cyborg_fixtures

VENDOR_TRAIT = 'CUSTOM_FPGA_INTEL'
BOARD_TRAIT = 'CUSTOM_FPGA_INTEL_PAC_ARRIA10'
CUSTOM_RC = 'CUSTOM_ACCELERATOR_TEST'


def _inventory(total, reserved=0):
    return {'total': total, 'reserved': reserved, 'min_unit': 1,
            'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}


class _Forwarder(fixtures.Fixture):
    """A loopback port that refuses connections until :meth:`open`.

    Then it relays every connection to ``target`` (host, port), so a
    client configured with :attr:`url` sees its service come back.
    """

    def __init__(self, target):
        super().__init__()
        self.target = target

    def _setUp(self):
        self._listener = socket.socket()
        self._listener.bind(('127.0.0.1', 0))
        self._sockets = [self._listener]
        self.addCleanup(self._close)
        self.url = 'http://127.0.0.1:%d' % self._listener.getsockname()[1]

    def _close(self):
        for sock in self._sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def open(self):
        self._listener.listen()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _addr = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink),
                                 daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class _BumpingAdapter:
    """Relays to ``adapter``; changes the provider before a traits PUT.

    Before each of the first ``times`` PUTs of a provider's traits it adds
    or removes a trait through Placement directly, so the PUT carries a
    stale generation and Placement answers 409, as when Nova writes at the
    same moment. ``trait_puts`` counts the PUTs of provider traits.
    """

    def __init__(self, adapter, direct, times):
        self._adapter = adapter
        self._direct = direct
        self.times = times
        self.trait_puts = 0

    def request(self, url, method, **kwargs):
        if (method == 'PUT' and url.endswith('/traits') and
                url.startswith('/resource_providers/')):
            self.trait_puts += 1
            if self.times:
                self.times -= 1
                self._change(url)
        return self._adapter.request(url, method, **kwargs)

    def _change(self, url):
        current = self._direct.get(url).json()
        traits = set(current['traits']) ^ {'HW_CPU_X86_AVX2'}
        resp = self._direct.put(url, json={
            'resource_provider_generation':
                current['resource_provider_generation'],
            'traits': sorted(traits)})
        assert resp.status_code == 200, resp.text


class PlacementSyncTest(base.TestCase):

    USES_DB = True

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(cyborg_fixtures.Placement())
        self.hostname = self.placement.hostname
        self.direct = self.placement.adapter()
        # The compute node provider, as nova-compute creates it.
        self.compute_rp = self._post_provider(self.hostname)['uuid']
        host_obj.Host.set_compute_rp(self.admin_context, self.hostname,
                                     self.compute_rp)
        self.client = placement.PlacementClient(retry_delay=0.01)

    # --- helpers ------------------------------------------------------------

    def _post_provider(self, name, uuid=None, parent=None):
        body = {'name': name}
        if uuid:
            body['uuid'] = uuid
        if parent:
            body['parent_provider_uuid'] = parent
        resp = self.direct.post('/resource_providers', json=body)
        self.assertEqual(200, resp.status_code, resp.text)
        return resp.json()

    def _add_deployable(self, pci, handles=8, rc='FPGA',
                        traits=(VENDOR_TRAIT, BOARD_TRAIT),
                        status=states.DEVICE_ENABLED):
        _device, deployable, _handles = db_utils.create_device_tree(
            self.admin_context, hostname=self.hostname, handles=handles,
            pci_address=pci, name=pci, resource_class=rc, traits=traits,
            status=status)
        return deployable

    def _remove_deployable(self, deployable):
        ctx = self.admin_context
        for noun in ('attach_handle', 'attribute'):
            for row in db_api.get_all(ctx, noun, filters={
                    'deployable_id': deployable.id}):
                db_api.delete(ctx, noun, row.uuid)
        db_api.delete(ctx, 'deployable', deployable.uuid)

    def _sync(self):
        return placement_sync.sync_host(self.admin_context, self.hostname,
                                        self.compute_rp, self.client)

    def _name(self, pci):
        return '%s_%s' % (self.hostname, pci)

    def _uuid(self, pci):
        return placement_sync.provider_uuid(self._name(pci))

    def _get(self, url):
        resp = self.direct.get(url)
        self.assertEqual(200, resp.status_code, resp.text)
        return resp.json()

    def _traits(self, rp_uuid):
        return set(self._get('/resource_providers/%s/traits' %
                             rp_uuid)['traits'])

    def _inventories(self, rp_uuid):
        return self._get('/resource_providers/%s/inventories' %
                         rp_uuid)['inventories']

    def _put(self, url, **body):
        current = self._get(url)
        body['resource_provider_generation'] = current[
            'resource_provider_generation']
        resp = self.direct.put(url, json=body)
        self.assertEqual(200, resp.status_code, resp.text)

    def _allocate(self, rp_uuid, rc='FPGA'):
        consumer = uuidutils.generate_uuid()
        resp = self.direct.put('/allocations/%s' % consumer, json={
            'allocations': {rp_uuid: {'resources': {rc: 1}}},
            'project_id': 'fake-project', 'user_id': 'fake-user',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})
        self.assertEqual(204, resp.status_code, resp.text)
        return consumer

    def _legacy_provider(self, pci, rc='FPGA', total=8, traits=(),
                         rp_uuid=None):
        """A provider as openstack-cyborg made it for a deployable.

        Its uuid is uuid3 of its name in the DNS namespace, computed here
        independently of Cyborg's code; its inventory sets only ``total``
        and ``max_unit``; its traits are the driver's, which for FPGAs
        lacked ``OWNER_CYBORG``.
        """
        name = self._name(pci)
        rp_uuid = rp_uuid or str(uuid_lib.uuid3(uuid_lib.NAMESPACE_DNS, name))
        self._post_provider(name, uuid=rp_uuid, parent=self.compute_rp)
        self.direct.put('/resource_classes/%s' % rc)
        self._put('/resource_providers/%s/inventories' % rp_uuid,
                  inventories={rc: {'total': total, 'max_unit': total}})
        if traits:
            for trait in traits:
                self.direct.put('/traits/%s' % trait)
            self._put('/resource_providers/%s/traits' % rp_uuid,
                      traits=list(traits))
        return rp_uuid

    def _former_uuid(self, pci):
        """The provider uuid that earlier builds of Cyborg derived."""
        return str(uuid_lib.uuid5(
            uuid_lib.UUID('0c7ed2fa-98da-443e-8435-7eaa52b21e75'),
            self._name(pci)))

    def _children(self):
        tree = self._get('/resource_providers?in_tree=%s' % self.compute_rp)
        return {rp['name']: rp['uuid'] for rp in tree['resource_providers']
                if rp['uuid'] != self.compute_rp}

    def _allocations(self, consumer):
        return {rp: alloc['resources'] for rp, alloc in self._get(
            '/allocations/%s' % consumer)['allocations'].items()}

    def _assert_unchanged_pass(self):
        # As another conductor would: what the last pass saw is in the
        # database.
        self.client = placement.PlacementClient(retry_delay=0.01)
        records = self.useFixture(fixtures.MockPatchObject(
            host_db, 'set_placement_providers',
            wraps=host_db.set_placement_providers)).mock
        summary = self._sync()
        self.assertEqual(0, self.client.writes, self.client.requests)
        self.assertLessEqual(self.client.reads, 1)
        records.assert_not_called()
        self.assertEqual(0, summary['created'] + summary['updated'] +
                         summary['deleted'])

    def _expected_traits(self, *extra):
        return {VENDOR_TRAIT, BOARD_TRAIT, 'OWNER_CYBORG', *extra}

    # --- tests --------------------------------------------------------------

    def test_compute_node_rp(self):
        self.assertEqual(self.compute_rp, placement_sync.compute_node_rp(
            self.client, self.hostname))
        self.assertRaises(exception.ResourceProviderNotFound,
                          placement_sync.compute_node_rp, self.client,
                          'no-such-' + self.hostname)

    def test_only_deployables_that_offer_become_providers(self):
        fpga = self._add_deployable('0000:5e:00.0', handles=4)
        self._add_deployable('0000:5f:00.0', rc=None)
        self._add_deployable('0000:60:00.0', handles=0)
        db_utils.create_device_tree(self.admin_context, hostname='other-host',
                                    resource_class='FPGA')
        self.assertEqual(1, self._sync()['created'])
        tree = self._get('/resource_providers?in_tree=%s' % self.compute_rp)
        self.assertEqual(
            [(self._name('0000:5e:00.0'), self._uuid('0000:5e:00.0'))],
            [(rp['name'], rp['uuid']) for rp in tree['resource_providers']
             if rp['uuid'] != self.compute_rp])
        rp_uuid = self._uuid('0000:5e:00.0')
        self.assertEqual({'FPGA': _inventory(4)}, self._inventories(rp_uuid))
        self.assertEqual(self._expected_traits(), self._traits(rp_uuid))
        self.assertEqual(rp_uuid, deployable_obj.Deployable.get_by_uuid(
            self.admin_context, fpga.uuid).rp_uuid)

    def test_first_sync_creates_then_unchanged_pass_writes_nothing(self):
        fpga = self._add_deployable('0000:5e:00.0')
        custom = self._add_deployable('0000:5f:00.0', handles=2,
                                      rc=CUSTOM_RC,
                                      traits=('CUSTOM_ACCEL_TEST_FUNC',))
        summary = self._sync()
        self.assertEqual({'created': 2, 'updated': 0, 'deleted': 0,
                          'unchanged': 0, 'failed': 0}, summary)

        tree = self._get('/resource_providers?in_tree=%s' % self.compute_rp)
        children = {rp['name']: rp for rp in tree['resource_providers']
                    if rp['uuid'] != self.compute_rp}
        self.assertEqual({self._name('0000:5e:00.0'),
                          self._name('0000:5f:00.0')}, set(children))
        for pci, deployable in (('0000:5e:00.0', fpga),
                                ('0000:5f:00.0', custom)):
            rp = children[self._name(pci)]
            self.assertEqual(self._uuid(pci), rp['uuid'])
            self.assertEqual(self.compute_rp, rp['parent_provider_uuid'])
            self.assertEqual(rp['uuid'], deployable_obj.Deployable.get_by_uuid(
                self.admin_context, deployable.uuid).rp_uuid)
        fpga_rp, custom_rp = self._uuid('0000:5e:00.0'), self._uuid(
            '0000:5f:00.0')
        self.assertEqual(self._expected_traits(), self._traits(fpga_rp))
        self.assertEqual({'FPGA': _inventory(8)}, self._inventories(fpga_rp))
        self.assertEqual({'CUSTOM_ACCEL_TEST_FUNC', 'OWNER_CYBORG'},
                         self._traits(custom_rp))
        self.assertEqual({CUSTOM_RC: _inventory(2)},
                         self._inventories(custom_rp))
        self._get('/resource_classes/%s' % CUSTOM_RC)
        self.assertEqual(204, self.direct.get(
            '/traits/CUSTOM_ACCEL_TEST_FUNC').status_code)
        # Nova's provider is left as it was.
        self.assertEqual(set(), self._traits(self.compute_rp))
        self.assertEqual({}, self._inventories(self.compute_rp))

        self._assert_unchanged_pass()
        self.assertEqual(1, self.client.reads)

    def test_maintaining_reserves_total_across_later_syncs(self):
        deployable = self._add_deployable(
            '0000:5e:00.0', status=states.DEVICE_MAINTAINING)
        rp_uuid = self._uuid('0000:5e:00.0')
        self._sync()
        self.assertEqual({'FPGA': _inventory(8, reserved=8)},
                         self._inventories(rp_uuid))

        # A later report changes the traits and the handles: still reserved.
        db_api.create(self.admin_context, 'attribute', {
            'deployable_id': deployable.id, 'key': 'trait9',
            'value': 'CUSTOM_FPGA_REGION_X'})
        db_api.update(self.admin_context, 'deployable', deployable.uuid,
                      {'num_accelerators': 6})
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual({'FPGA': _inventory(6, reserved=6)},
                         self._inventories(rp_uuid))
        self.assertEqual(self._expected_traits('CUSTOM_FPGA_REGION_X'),
                         self._traits(rp_uuid))
        self._assert_unchanged_pass()

        device = db_api.get_by_id(self.admin_context, 'device',
                                  deployable.device_id)
        db_api.update(self.admin_context, 'device', device.uuid,
                      {'status': states.DEVICE_ENABLED})
        self._sync()
        self.assertEqual({'FPGA': _inventory(6)}, self._inventories(rp_uuid))

    def test_device_gone_but_in_use_takes_no_new_allocations(self):
        deployable = self._add_deployable('0000:5e:00.0')
        device = db_api.get_by_id(self.admin_context, 'device',
                                  deployable.device_id)
        db_api.update(self.admin_context, 'device', device.uuid,
                      {'vanished_at': timeutils.utcnow()})
        self._sync()
        self.assertEqual({'FPGA': _inventory(8, reserved=8)},
                         self._inventories(self._uuid('0000:5e:00.0')))

    def test_vanished_deployable_provider_deleted(self):
        keep = self._add_deployable('0000:5e:00.0')
        gone = self._add_deployable('0000:5f:00.0')
        self._sync()
        self._remove_deployable(gone)
        summary = self._sync()
        self.assertEqual(1, summary['deleted'])
        self.assertEqual(1, summary['unchanged'])
        self.assertEqual(404, self.direct.get(
            '/resource_providers/%s' % self._uuid('0000:5f:00.0')
        ).status_code)
        self.assertEqual(self._uuid('0000:5e:00.0'),
                         deployable_obj.Deployable.get_by_uuid(
                             self.admin_context, keep.uuid).rp_uuid)
        self._assert_unchanged_pass()

    def test_provider_without_resource_class_deleted_and_forgotten(self):
        deployable = self._add_deployable('0000:5e:00.0')
        self._sync()
        rc = db_api.get_all(self.admin_context, 'attribute', filters={
            'deployable_id': deployable.id, 'key': 'rc'})[0]
        db_api.delete(self.admin_context, 'attribute', rc.uuid)
        self.assertEqual(1, self._sync()['deleted'])
        self.assertIsNone(deployable_obj.Deployable.get_by_uuid(
            self.admin_context, deployable.uuid).rp_uuid)

    def test_provider_with_allocations_kept_until_released(self):
        gone = self._add_deployable('0000:5e:00.0')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        consumer = self._allocate(rp_uuid)
        self._remove_deployable(gone)
        summary = self._sync()
        self.assertEqual({'created': 0, 'updated': 0, 'deleted': 0,
                          'unchanged': 0, 'failed': 1}, summary)
        self._get('/resource_providers/%s' % rp_uuid)

        self.assertEqual(204, self.direct.delete(
            '/allocations/%s' % consumer).status_code)
        self.assertEqual(1, self._sync()['deleted'])
        self.assertEqual(404, self.direct.get(
            '/resource_providers/%s' % rp_uuid).status_code)

    def test_repairs_provider_deleted_by_hand(self):
        self._add_deployable('0000:5e:00.0')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        self.assertEqual(204, self.direct.delete(
            '/resource_providers/%s' % rp_uuid).status_code)
        self.assertEqual(1, self._sync()['created'])
        self.assertEqual(self._expected_traits(), self._traits(rp_uuid))
        self.assertEqual({'FPGA': _inventory(8)}, self._inventories(rp_uuid))
        self._assert_unchanged_pass()

    def test_repairs_traits_removed_by_hand_keeps_added_ones(self):
        self._add_deployable('0000:5e:00.0')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        self._put('/resource_providers/%s/traits' % rp_uuid,
                  traits=['OWNER_CYBORG', 'HW_CPU_X86_AVX2'])
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual(self._expected_traits('HW_CPU_X86_AVX2'),
                         self._traits(rp_uuid))
        self._assert_unchanged_pass()

    def _set_function(self, deployable, function):
        for row in db_api.get_all(self.admin_context, 'attribute', filters={
                'deployable_id': deployable.id, 'key': 'trait9'}):
            db_api.delete(self.admin_context, 'attribute', row.uuid)
        db_api.create(self.admin_context, 'attribute', {
            'deployable_id': deployable.id, 'key': 'trait9',
            'value': function})

    def test_takes_off_only_traits_it_put_there(self):
        deployable = self._add_deployable('0000:5e:00.0')
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_A')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        # An operator's trait, and one a flavor of the earlier service
        # asks for, put there by hand.
        for trait in ('CUSTOM_RACK_7', 'CUSTOM_NVIDIA_1EB8'):
            self.direct.put('/traits/%s' % trait)
        self._put('/resource_providers/%s/traits' % rp_uuid,
                  traits=sorted(self._expected_traits(
                      'CUSTOM_FPGA_FUNCTION_ID_A', 'CUSTOM_RACK_7',
                      'CUSTOM_NVIDIA_1EB8')))

        # Reprogrammed: the function Cyborg put there goes, the new one
        # comes, and what others put there stays, through every update.
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_B')
        self.assertEqual(1, self._sync()['updated'])
        others = ('CUSTOM_RACK_7', 'CUSTOM_NVIDIA_1EB8')
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_B', *others),
            self._traits(rp_uuid))
        db_api.update(self.admin_context, 'deployable', deployable.uuid,
                      {'num_accelerators': 6})
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_B', *others),
            self._traits(rp_uuid))
        self._assert_unchanged_pass()

        # A trait Cyborg reports that was there already is not Cyborg's
        # to take off; one it reported once and stopped reporting is.
        self._set_function(deployable, 'CUSTOM_RACK_7')
        self._sync()
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_C')
        self._sync()
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_C', *others),
            self._traits(rp_uuid))

    def test_what_it_put_there_outlives_a_restart(self):
        deployable = self._add_deployable('0000:5e:00.0')
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_A')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        self.direct.put('/traits/CUSTOM_RACK_7')
        self._put('/resource_providers/%s/traits' % rp_uuid,
                  traits=sorted(self._expected_traits(
                      'CUSTOM_FPGA_FUNCTION_ID_A', 'CUSTOM_RACK_7')))

        # A conductor started afresh syncs the reprogrammed region: it
        # knows nothing but what the database holds.
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_B')
        self.client = placement.PlacementClient(retry_delay=0.01)
        placement.forget_known_names()
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_B',
                                  'CUSTOM_RACK_7'), self._traits(rp_uuid))

    def test_what_it_puts_there_is_recorded_before(self):
        deployable = self._add_deployable('0000:5e:00.0')
        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_A')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        # The database is lost after the pass recorded what it is about
        # to put on the provider: the pass stops once Placement has it.
        write = host_db.set_placement_providers
        writes = []

        def write_once(*args):
            writes.append(args)
            if len(writes) > 1:
                raise db_exc.DBConnectionError()
            write(*args)

        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_B')
        with fixtures.MockPatchObject(host_db, 'set_placement_providers',
                                      write_once):
            self.assertRaises(db_exc.DBConnectionError, self._sync)
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_B'),
            self._traits(rp_uuid))

        self._set_function(deployable, 'CUSTOM_FPGA_FUNCTION_ID_C')
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual(
            self._expected_traits('CUSTOM_FPGA_FUNCTION_ID_C'),
            self._traits(rp_uuid))
        self._assert_unchanged_pass()

    def test_repairs_inventory_changed_by_hand(self):
        self._add_deployable('0000:5e:00.0')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        self._put('/resource_providers/%s/inventories' % rp_uuid,
                  inventories={'FPGA': _inventory(4, reserved=1)})
        self.assertEqual(1, self._sync()['updated'])
        self.assertEqual({'FPGA': _inventory(8)}, self._inventories(rp_uuid))
        self._assert_unchanged_pass()

    def test_finishes_provider_whose_creation_was_cut_short(self):
        self._add_deployable('0000:5e:00.0')
        rp_uuid = self._uuid('0000:5e:00.0')
        self._post_provider(self._name('0000:5e:00.0'), uuid=rp_uuid,
                            parent=self.compute_rp)
        # An earlier build's create cut short, no deployable wanting it.
        former = self._former_uuid('0000:5f:00.0')
        self._post_provider(self._name('0000:5f:00.0'), uuid=former,
                            parent=self.compute_rp)
        self.assertEqual({'created': 0, 'updated': 1, 'deleted': 1,
                          'unchanged': 0, 'failed': 0}, self._sync())
        self.assertEqual(self._expected_traits(), self._traits(rp_uuid))
        self.assertEqual({'FPGA': _inventory(8)}, self._inventories(rp_uuid))
        self.assertEqual({self._name('0000:5e:00.0'): rp_uuid},
                         self._children())

    def test_foreign_providers_untouched(self):
        deployable = self._add_deployable('0000:5e:00.0')
        # Someone else took the name Cyborg wants, under the compute node.
        taken = self._post_provider(self._name('0000:5e:00.0'),
                                    parent=self.compute_rp)['uuid']
        # Nova's own child provider, e.g. a vGPU, with traits and inventory.
        nova_child = self._post_provider(self.hostname + '_pci_0000_81_00_0',
                                         parent=self.compute_rp)['uuid']
        self._put('/resource_providers/%s/inventories' % nova_child,
                  inventories={'VGPU': _inventory(4)})
        self._put('/resource_providers/%s/traits' % nova_child,
                  traits=['HW_CPU_X86_AVX2'])
        with self.assertLogs(placement_sync.LOG.logger, 'ERROR') as logs:
            summary = self._sync()
        self.assertIn(taken, logs.output[0])
        self.assertEqual({'created': 0, 'updated': 0, 'deleted': 0,
                          'unchanged': 0, 'failed': 1}, summary)
        self.assertEqual(set(), self._traits(taken))
        self.assertEqual({}, self._inventories(taken))
        self.assertEqual({'HW_CPU_X86_AVX2'}, self._traits(nova_child))
        self.assertEqual({'VGPU': _inventory(4)},
                         self._inventories(nova_child))
        self.assertIsNone(deployable_obj.Deployable.get_by_uuid(
            self.admin_context, deployable.uuid).rp_uuid)
        # What the foreign providers look like is remembered too.
        self.client.requests.clear()
        self._sync()
        self.assertEqual(0, self.client.writes)
        self.assertEqual(1, self.client.reads)

    def test_adopts_providers_of_openstack_cyborg(self):
        # What openstack-cyborg and Nova left: an FPGA provider without
        # OWNER_CYBORG and a GPU provider with it, each with an instance's
        # allocation, and a provider of a device Cyborg does not report.
        fpga = self._add_deployable('0000:5e:00.0', handles=4)
        gpu = self._add_deployable('0000:3b:00.0', handles=1, rc='PGPU',
                                   traits=('CUSTOM_NVIDIA_1EB8',))
        fpga_rp = self._legacy_provider(
            '0000:5e:00.0', total=4,
            traits=('CUSTOM_FPGA_INTEL', 'CUSTOM_FPGA_INTEL_ARRIA10'))
        gpu_rp = self._legacy_provider(
            '0000:3b:00.0', rc='PGPU', total=1,
            traits=('OWNER_CYBORG', 'CUSTOM_NVIDIA_1EB8'))
        unreported = self._legacy_provider(
            '0000:af:00.0', rc='CUSTOM_ASCEND', total=1,
            traits=('CUSTOM_HUAWEI_ASCEND',))
        fpga_vm = self._allocate(fpga_rp)
        gpu_vm = self._allocate(gpu_rp, rc='PGPU')
        before = self._children()

        with self.assertLogs(placement_sync.LOG.logger, 'INFO') as logs:
            summary = self._sync()
        # The GPU's provider already looked as Cyborg wants it.
        self.assertEqual({'created': 0, 'updated': 1, 'deleted': 0,
                          'unchanged': 1, 'failed': 0}, summary)
        self.assertEqual(1, sum('Adopting' in line and fpga_rp in line
                                for line in logs.output))
        # The same providers under the same uuids, and no new one.
        self.assertEqual(before, self._children())
        self.assertEqual({fpga_rp: {'FPGA': 1}}, self._allocations(fpga_vm))
        self.assertEqual({gpu_rp: {'PGPU': 1}}, self._allocations(gpu_vm))
        # Adopted, it keeps the traits the earlier service put there.
        self.assertEqual(self._expected_traits('CUSTOM_FPGA_INTEL_ARRIA10'),
                         self._traits(fpga_rp))
        self.assertEqual({'FPGA': _inventory(4)}, self._inventories(fpga_rp))
        self.assertEqual({'OWNER_CYBORG', 'CUSTOM_NVIDIA_1EB8'},
                         self._traits(gpu_rp))
        self.assertEqual({'PGPU': _inventory(1)}, self._inventories(gpu_rp))
        for deployable, rp_uuid in ((fpga, fpga_rp), (gpu, gpu_rp)):
            self.assertEqual(rp_uuid, deployable_obj.Deployable.get_by_uuid(
                self.admin_context, deployable.uuid).rp_uuid)
        # Not Cyborg's to delete: it lacks OWNER_CYBORG and no deployable
        # claims it.
        self.assertEqual({'CUSTOM_HUAWEI_ASCEND'}, self._traits(unreported))
        self.assertEqual({'CUSTOM_ASCEND': _inventory(1)},
                         self._inventories(unreported))
        self._assert_unchanged_pass()

        # Once adopted, a provider is Cyborg's like one it made: the
        # deployable's removal deletes it when its instance has gone.
        self.assertEqual(204, self.direct.delete(
            '/allocations/%s' % fpga_vm).status_code)
        self._remove_deployable(fpga)
        self.assertEqual(1, self._sync()['deleted'])
        self.assertEqual(404, self.direct.get(
            '/resource_providers/%s' % fpga_rp).status_code)

    def test_adopts_provider_the_deployable_records(self):
        # openstack-cyborg named an Intel FPGA with SR-IOV, and its
        # provider, after its last VF; the converted deployable has our
        # name and records that provider. A deployable recording a
        # provider whose uuid its name does not derive gets its own.
        fpga = self._add_deployable('0000:5e:00.0', handles=2)
        old_rp = self._legacy_provider('0000:5e:00.2', total=2,
                                       traits=(VENDOR_TRAIT,))
        foreign = self._post_provider('foreign-' + self.hostname,
                                      parent=self.compute_rp)['uuid']
        other = self._add_deployable('0000:af:00.0', handles=1)
        for deployable, rp_uuid in ((fpga, old_rp), (other, foreign)):
            db_api.update(self.admin_context, 'deployable', deployable.uuid,
                          {'rp_uuid': rp_uuid})
        vm = self._allocate(old_rp)

        summary = self._sync()
        self.assertEqual({'created': 1, 'updated': 1, 'deleted': 0,
                          'unchanged': 0, 'failed': 0}, summary)
        self.assertEqual({self._name('0000:5e:00.2'): old_rp,
                          'foreign-' + self.hostname: foreign,
                          self._name('0000:af:00.0'):
                              self._uuid('0000:af:00.0')},
                         self._children())
        self.assertEqual({old_rp: {'FPGA': 1}}, self._allocations(vm))
        self.assertEqual(self._expected_traits(), self._traits(old_rp))
        self.assertEqual({'FPGA': _inventory(2)}, self._inventories(old_rp))
        self.assertEqual(set(), self._traits(foreign))
        for deployable, rp_uuid in ((fpga, old_rp),
                                    (other, self._uuid('0000:af:00.0'))):
            self.assertEqual(rp_uuid, deployable_obj.Deployable.get_by_uuid(
                self.admin_context, deployable.uuid).rp_uuid)
        self._assert_unchanged_pass()

    def test_adopts_only_what_openstack_cyborg_made(self):
        # The name and uuid openstack-cyborg would give the deployable's
        # provider, without OWNER_CYBORG, but not below the compute node.
        # (The name under another uuid: test_foreign_providers_untouched.)
        deployable = self._add_deployable('0000:5e:00.0')
        name = self._name('0000:5e:00.0')
        other = self._post_provider('nic-' + self.hostname,
                                    parent=self.compute_rp)['uuid']
        nested = self._post_provider(
            name, uuid=str(uuid_lib.uuid3(uuid_lib.NAMESPACE_DNS, name)),
            parent=other)['uuid']
        self.direct.put('/traits/CUSTOM_FPGA_INTEL')
        self._put('/resource_providers/%s/traits' % nested,
                  traits=['CUSTOM_FPGA_INTEL'])
        with self.assertLogs(placement_sync.LOG.logger, 'ERROR') as logs:
            summary = self._sync()
        self.assertIn(nested, logs.output[0])
        self.assertEqual(1, summary['failed'])
        self.assertEqual({'CUSTOM_FPGA_INTEL'}, self._traits(nested))
        self.assertEqual({}, self._inventories(nested))
        self.assertIsNone(deployable_obj.Deployable.get_by_uuid(
            self.admin_context, deployable.uuid).rp_uuid)

    def test_providers_of_earlier_builds_kept(self):
        # Earlier builds of Cyborg derived provider uuids as uuid5 in a
        # namespace of their own: such providers keep their uuids.
        fpga = self._add_deployable('0000:5e:00.0')
        former = self._former_uuid('0000:5e:00.0')
        self._legacy_provider('0000:5e:00.0', rp_uuid=former,
                              traits=sorted(self._expected_traits()))
        vm = self._allocate(former)
        self.assertEqual({'created': 0, 'updated': 0, 'deleted': 0,
                          'unchanged': 1, 'failed': 0}, self._sync())
        self.assertEqual({self._name('0000:5e:00.0'): former},
                         self._children())
        self.assertEqual({former: {'FPGA': 1}}, self._allocations(vm))
        self.assertEqual({'FPGA': _inventory(8)}, self._inventories(former))
        self.assertEqual(former, deployable_obj.Deployable.get_by_uuid(
            self.admin_context, fpga.uuid).rp_uuid)
        self._assert_unchanged_pass()

    def test_generation_conflict_read_again_and_retried(self):
        deployable = self._add_deployable('0000:5e:00.0')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        db_api.create(self.admin_context, 'attribute', {
            'deployable_id': deployable.id, 'key': 'trait9',
            'value': 'CUSTOM_FPGA_REGION_X'})
        bumping = _BumpingAdapter(self.client._adapter, self.direct, times=1)
        self.client._adapter = bumping
        self.assertEqual(1, self._sync()['updated'])
        # Placement refused the first PUT; the second one won, and kept
        # the trait added meanwhile.
        self.assertEqual(2, bumping.trait_puts)
        self.assertEqual(self._expected_traits('CUSTOM_FPGA_REGION_X',
                                               'HW_CPU_X86_AVX2'),
                         self._traits(rp_uuid))
        self._assert_unchanged_pass()

    def test_generation_conflicts_give_up_after_max_retries(self):
        self.conf.config(placement_max_retries=2, group='conductor')
        deployable = self._add_deployable('0000:5e:00.0')
        self._sync()
        db_api.create(self.admin_context, 'attribute', {
            'deployable_id': deployable.id, 'key': 'trait9',
            'value': 'CUSTOM_FPGA_REGION_X'})
        bumping = _BumpingAdapter(self.client._adapter, self.direct,
                                  times=100)
        self.client._adapter = bumping
        self.assertEqual(1, self._sync()['failed'])
        self.assertEqual(3, bumping.trait_puts)

        bumping.times = 0
        self.assertEqual(1, self._sync()['updated'])
        # Added by the last of the three changes meanwhile.
        self.assertEqual(self._expected_traits('CUSTOM_FPGA_REGION_X',
                                               'HW_CPU_X86_AVX2'),
                         self._traits(self._uuid('0000:5e:00.0')))

    def test_placement_down_then_back(self):
        self.conf.config(placement_max_retries=2, group='conductor')
        host, port = self.placement.url.rsplit(':', 1)
        forwarder = self.useFixture(_Forwarder(
            (host.split('//')[1], int(port))))
        self.conf.config(endpoint=forwarder.url, group='placement')
        client = placement.PlacementClient(retry_delay=0.01)
        self._add_deployable('0000:5e:00.0')
        self.assertRaises(exception.PlacementUnavailable,
                          placement_sync.sync_host, self.admin_context,
                          self.hostname, self.compute_rp, client)
        self.assertEqual({'GET': 3}, dict(client.requests))

        forwarder.open()
        summary = placement_sync.sync_host(
            self.admin_context, self.hostname, self.compute_rp, client)
        self.assertEqual(1, summary['created'])
        self.assertEqual(self._expected_traits(),
                         self._traits(self._uuid('0000:5e:00.0')))
