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
"""The test case of the Placement sync tests, against the real Placement.

A host's compute node provider as nova-compute creates it, the host's
deployables in the database, and helpers that read and change Placement
directly, as an operator, Nova or openstack-cyborg would.
"""

import uuid as uuid_lib

import fixtures
from oslo_utils import uuidutils

from cyborg.clients import placement
from cyborg.common import placement_names
from cyborg.conductor import placement_sync
from cyborg.db import api as db_api
from cyborg.db import host as host_db
from cyborg.objects import host as host_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import openstack_fixtures

VENDOR_TRAIT = 'CUSTOM_FPGA_INTEL'
BOARD_TRAIT = 'CUSTOM_FPGA_INTEL_PAC_ARRIA10'
CUSTOM_RC = 'CUSTOM_ACCELERATOR_TEST'


def inventory(total, reserved=0):
    """A resource class's inventory as the sync writes it."""
    return {'total': total, 'reserved': reserved, 'min_unit': 1,
            'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}


class PlacementSyncTestCase(base.TestCase):
    """A host in the real Placement, synced by :meth:`_sync`."""

    USES_DB = True

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(openstack_fixtures.Placement())
        self.hostname = self.placement.hostname
        self.direct = self.placement.adapter()
        # The compute node provider, as nova-compute creates it.
        self.compute_rp = self._post_provider(self.hostname)['uuid']
        host_obj.Host.set_compute_rp(self.admin_context, self.hostname,
                                     self.compute_rp)
        self.client = placement.PlacementClient(retry_delay=0.01)

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
        return placement_names.provider_uuid(self._name(pci))

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
