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
"""A host that ran openstack-cyborg 17.0.0, after the upgrade.

17.0.0's own driver code writes the rows of a host's FPGA, GPU and fake
device into its database on MariaDB (``cyborg17_seed.py``), an instance is
bound to each, and the real Placement holds the providers and
allocations 17.0.0's conductor made. After our ``cyborg-dbsync upgrade``,
our agent discovers the same devices on a simulated host and its report
goes through our conductor to Placement: every row and provider carries
on, the bound instances keep their accelerators.
"""

import uuid as uuid_lib

from cyborg.agent import resource_tracker
from cyborg.common import pci_address
from cyborg.conductor import rpcapi
from cyborg.db import api as db_api
from cyborg.drivers import base as drivers_base
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.db import test_cyborg17
from cyborg.tests import sysfs_tree

FPGA = '0000:5e:00.0'
FPGA_VF = '0000:5e:00.2'
QAT = '0000:3d:00.0'
QAT_VFS = ('0000:3d:00.1', '0000:3d:00.2')
GPU = '0000:3b:00.0'


class TestUpgradedHost(test_cyborg17.OnMariaDB, base.TestCase):

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(cyborg_fixtures.Placement())
        self.host = self.placement.hostname
        self.direct = self.placement.adapter()

    def _ok(self, response, status=200):
        self.assertEqual(status, response.status_code, response.text)
        return response.json() if status == 200 else None

    def _legacy_providers(self, compute, theirs):
        """Providers and allocations as 17.0.0's conductor and Nova made.

        Named after the deployable, uuid3 of the name; OWNER_CYBORG on
        the GPU only; an allocation for each bound instance, whose
        consumer is the ARQ's uuid (the seed's instance uuids repeat, and
        the tests of a process share Placement).

        :returns: {consumer: its allocations}.
        """
        traits = {}
        for attribute in theirs['attributes']:
            traits.setdefault(attribute['deployable_id'], {})[
                attribute['key']] = attribute['value']
        providers = {}
        for dep in theirs['deployables']:
            name = dep['name']
            rp_uuid = str(uuid_lib.uuid3(uuid_lib.NAMESPACE_DNS, name))
            self.assertEqual(rp_uuid, dep['rp_uuid'])
            self._ok(self.direct.post('/resource_providers', json={
                'name': name, 'uuid': rp_uuid,
                'parent_provider_uuid': compute}))
            pairs = traits[dep['id']]
            rc = pairs.pop('rc')
            self.direct.put('/resource_classes/%s' % rc)
            self._ok(self.direct.put(
                '/resource_providers/%s/inventories' % rp_uuid, json={
                    'resource_provider_generation': 0,
                    'inventories': {rc: {
                        'total': dep['num_accelerators'],
                        'max_unit': dep['num_accelerators']}}}))
            for trait in pairs.values():
                self.direct.put('/traits/%s' % trait)
            self._ok(self.direct.put(
                '/resource_providers/%s/traits' % rp_uuid, json={
                    'resource_provider_generation': 1,
                    'traits': sorted(pairs.values())}))
            providers[rp_uuid] = rc
        allocations = {}
        for arq in theirs['accelerator_requests']:
            rc = providers[arq['device_rp_uuid']]
            self._ok(self.direct.put(
                '/allocations/%s' % arq['uuid'], json={
                    'allocations': {arq['device_rp_uuid']: {
                        'resources': {rc: 1}}},
                    'project_id': arq['project_id'], 'user_id': 'u',
                    'consumer_generation': None,
                    'consumer_type': 'INSTANCE'}), 204)
            allocations[arq['uuid']] = {
                arq['device_rp_uuid']: {rc: 1}}
        return allocations

    def _children(self, compute):
        tree = self._ok(self.direct.get(
            '/resource_providers', params={'in_tree': compute}))
        return {rp['uuid']: rp['name'] for rp in tree['resource_providers']
                if rp['uuid'] != compute}

    def _allocations(self, consumer):
        return {rp: alloc['resources'] for rp, alloc in self._ok(
            self.direct.get('/allocations/%s' % consumer))[
                'allocations'].items()}

    def _upgrade_and_report(self, compute, description, drivers):
        """Our dbsync; then our agent's first report of the host.

        :returns: the conductor fixture and the agent's resource tracker.
        """
        self.dbsync('upgrade')
        conductor = self.serve()
        self.useFixture(sysfs_tree.SimulatedHost(self.conf, description))
        api = rpcapi.ConductorAPI()
        tracker = resource_tracker.ResourceTracker(
            self.host, drivers_base.load(drivers), api)
        self.assertEqual(compute, api.compute_node_rp(
            self.admin_context, hostname=self.host, rp_name=self.host))
        self.assertTrue(tracker.report())
        return conductor, tracker

    def test_devices_instances_and_providers_carry_on(self):
        compute = self._ok(self.direct.post(
            '/resource_providers', json={'name': self.host}))['uuid']
        theirs = self.seed(self.host)
        bound = {arq['uuid']: arq for arq in theirs['accelerator_requests']}
        self.assertEqual({'Bound'}, {a['state'] for a in bound.values()})
        # 17.0.0 named the FPGA with SR-IOV after its last VF, and gave
        # it trait2 twice.
        self.assertEqual(
            {self.host + '_' + FPGA_VF, self.host + '_' + GPU,
             self.host + '_FakeDevice'},
            {dep['name'] for dep in theirs['deployables']})
        self.assertEqual(2, [a['key'] for a in theirs['attributes']].count(
            'trait2'))
        allocations = self._legacy_providers(compute, theirs)
        providers = self._children(compute)
        self.assertEqual(3, len(providers))

        conductor, tracker = self._upgrade_and_report(compute, [
            ('intel_fpga', FPGA, dict(vfs=2, layout='intel')),
            ('nvidia_gpu', GPU, {})],
            ['intel_fpga_driver', 'nvidia_gpu_driver', 'fake_driver'])

        # The same deployables, renamed as our drivers name them, none
        # vanished and none added; each adopted its provider.
        ctx = self.admin_context
        deployables = {dep.uuid: dep for dep in
                       db_api.get_all(ctx, 'deployable')}
        self.assertEqual({dep['uuid'] for dep in theirs['deployables']},
                         set(deployables))
        self.assertEqual({FPGA, GPU, 'FakeDevice'},
                         {dep.name for dep in deployables.values()})
        for dep in theirs['deployables']:
            self.assertEqual(dep['rp_uuid'],
                             deployables[dep['uuid']].rp_uuid)
        devices = db_api.get_all(ctx, 'device')
        self.assertEqual({dev['uuid'] for dev in theirs['devices']},
                         {dev.uuid for dev in devices})
        self.assertEqual([None] * 3, [dev.vanished_at for dev in devices])
        # Each bound instance keeps its attach handle, still in use; the
        # handles are those 17.0.0 made, none added.
        handles = {h.id: h for h in db_api.get_all(ctx, 'attach_handle')}
        self.assertEqual({h['uuid'] for h in theirs['attach_handles']},
                         {h.uuid for h in handles.values()})
        for arq in db_api.get_all(ctx, 'accelerator_request'):
            self.assertEqual(bound[arq.uuid]['attach_handle_id'],
                             arq.attach_handle_id)
            self.assertEqual('Bound', arq.state)
            self.assertTrue(handles[arq.attach_handle_id].in_use)
        self.assertEqual(len(bound), sum(h.in_use
                                         for h in handles.values()))

        # The same providers, now Cyborg's, and the instances' allocations.
        self.assertEqual(providers, self._children(compute))
        for rp_uuid in providers:
            self.assertIn('OWNER_CYBORG', self._ok(self.direct.get(
                '/resource_providers/%s/traits' % rp_uuid))['traits'])
        for consumer, allocation in allocations.items():
            self.assertEqual(allocation, self._allocations(consumer))

        # The agent's next report finds nothing to change.
        conductor.manager.reconciler.run(ctx)
        self.assertTrue(tracker.report(force=True))
        self.assertEqual(
            {uuid: (dep.name, dep.rp_uuid) for uuid, dep in
             deployables.items()},
            {dep.uuid: (dep.name, dep.rp_uuid)
             for dep in db_api.get_all(ctx, 'deployable')})
        self.assertEqual(len(handles), len(db_api.get_all(
            ctx, 'attach_handle')))
        self.assertEqual(providers, self._children(compute))

    def test_qat_virtual_function_held_stays_busy(self):
        # 17.0.0 made one deployable per VF of a QAT card; this release
        # makes one for the card. An instance holds the first VF.
        compute = self._ok(self.direct.post(
            '/resource_providers', json={'name': self.host}))['uuid']
        theirs = self.seed(self.host, 'qat')
        [arq] = theirs['accelerator_requests']
        held = [dep for dep in theirs['deployables']
                if dep['id'] == arq['deployable_id']]
        self.assertEqual([self.host + '_' + QAT_VFS[0]],
                         [dep['name'] for dep in held])
        allocations = self._legacy_providers(compute, theirs)
        code, details = self.upgrade_check()
        self.assertEqual(test_cyborg17.WARNING, code)
        self.assertIn('one deployable per virtual function', details)

        self._upgrade_and_report(compute, [('intel_qat', QAT, dict(vfs=2))],
                                 ['intel_qat_driver'])

        # The held VF's deployable, handle and provider are kept; the
        # card's deployable offers both VFs, the held one in use.
        ctx = self.admin_context
        self.assertEqual({held[0]['uuid'], None}, {
            dep.uuid if dep.name == QAT_VFS[0] else None
            for dep in db_api.get_all(ctx, 'deployable')})
        self.assertEqual(arq['attach_handle_id'], db_api.get(
            ctx, 'accelerator_request', arq['uuid']).attach_handle_id)
        card = db_api.get_all(ctx, 'deployable', filters={'name': QAT})[0]
        self.assertEqual(
            {QAT_VFS[0]: True, QAT_VFS[1]: False},
            {pci_address.join(h.attach_info): h.in_use
             for h in db_api.get_all(ctx, 'attach_handle',
                                     filters={'deployable_id': card.id})})
        self.assertEqual(allocations[arq['uuid']],
                         self._allocations(arq['uuid']))
