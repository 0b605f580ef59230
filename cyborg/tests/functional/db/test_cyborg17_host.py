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

import fixtures

from cyborg.agent import resource_tracker
from cyborg.agent import service as agent_service
from cyborg.common import pci_address
from cyborg.conductor import rpcapi
from cyborg.db import api as db_api
from cyborg.drivers import base as drivers_base
from cyborg import exception
from cyborg.tests import base
from cyborg.tests import functional
from cyborg.tests.functional.db import test_cyborg17
from cyborg.tests import openstack_fixtures
from cyborg.tests import sysfs_tree

FPGA = '0000:5e:00.0'
FPGA_VF = '0000:5e:00.2'
QAT = '0000:3d:00.0'
QAT_VFS = ('0000:3d:00.1', '0000:3d:00.2')
GPU = '0000:3b:00.0'


class TestUpgradedHost(test_cyborg17.OnMariaDB, base.TestCase):

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(openstack_fixtures.Placement())
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

    def _traits(self, rp_uuid):
        return set(self._ok(self.direct.get(
            '/resource_providers/%s/traits' % rp_uuid))['traits'])

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
        # An operator's trait beside 17.0.0's, which flavors may ask for.
        self.direct.put('/traits/CUSTOM_RACK_7')
        before = {}
        for rp_uuid in providers:
            url = '/resource_providers/%s/traits' % rp_uuid
            current = self._ok(self.direct.get(url))
            before[rp_uuid] = set(current['traits']) | {'CUSTOM_RACK_7'}
            self._ok(self.direct.put(url, json={
                'resource_provider_generation':
                    current['resource_provider_generation'],
                'traits': sorted(before[rp_uuid])}))

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
        # They keep every trait they had.
        self.assertEqual(providers, self._children(compute))
        for rp_uuid in providers:
            self.assertLessEqual(before[rp_uuid] | {'OWNER_CYBORG'},
                                 self._traits(rp_uuid))
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
        for rp_uuid in providers:
            self.assertLessEqual(before[rp_uuid], self._traits(rp_uuid))

    def test_qat_virtual_functions_keep_their_providers(self):
        # 17.0.0 made one deployable per VF of a QAT card, and so does
        # this release by default. An instance holds the first VF.
        compute = self._ok(self.direct.post(
            '/resource_providers', json={'name': self.host}))['uuid']
        theirs = self.seed(self.host, 'qat')
        [arq] = theirs['accelerator_requests']
        held = [dep for dep in theirs['deployables']
                if dep['id'] == arq['deployable_id']]
        self.assertEqual([self.host + '_' + QAT_VFS[0]],
                         [dep['name'] for dep in held])
        allocations = self._legacy_providers(compute, theirs)
        providers = self._children(compute)
        _code, details = self.upgrade_check()
        self.assertNotIn('virtual function', details)

        self._upgrade_and_report(compute, [('intel_qat', QAT, dict(vfs=2))],
                                 ['intel_qat_driver'])

        # The same deployables, one per VF, with their providers; the
        # held VF's handle still in use, the other free.
        ctx = self.admin_context
        deployables = db_api.get_all(ctx, 'deployable')
        self.assertEqual(
            {dep['uuid']: (address, dep['rp_uuid']) for dep, address in
             zip(sorted(theirs['deployables'], key=lambda d: d['name']),
                 QAT_VFS)},
            {dep.uuid: (dep.name, dep.rp_uuid) for dep in deployables})
        self.assertEqual(arq['attach_handle_id'], db_api.get(
            ctx, 'accelerator_request', arq['uuid']).attach_handle_id)
        self.assertEqual(
            {QAT_VFS[0]: True, QAT_VFS[1]: False},
            {pci_address.join(h.attach_info): h.in_use
             for h in db_api.get_all(ctx, 'attach_handle')})
        self.assertEqual(providers, self._children(compute))
        self.assertEqual(allocations[arq['uuid']],
                         self._allocations(arq['uuid']))

    # --- host names ----------------------------------------------------------

    def _switch(self, host, node, fqdn):
        """17.0.0's rows of a host, then our agent's start and first report.

        17.0.0's agent, with ``[DEFAULT] host`` ``host``, found the compute
        node provider under ``node`` and recorded the devices under it. Our
        agent runs with the same configuration on a host whose FQDN is
        ``fqdn``.

        :returns: the compute node's uuid, what 17.0.0 read back, the
            providers of the compute node before, and the name our agent
            found.
        """
        compute = self._ok(self.direct.post(
            '/resource_providers', json={'name': node}))['uuid']
        theirs = self.seed(host, 'host', node)
        self.assertEqual({node}, {dev['hostname']
                                  for dev in theirs['devices']})
        self._legacy_providers(compute, theirs)
        providers = self._children(compute)
        self.dbsync('upgrade')
        self.serve()
        self.useFixture(openstack_fixtures.NovaEvents())
        self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('intel_fpga', FPGA, dict(vfs=2, layout='intel')),
            ('nvidia_gpu', GPU, {})]))
        self.conf.config(host=host)
        self.useFixture(fixtures.MonkeyPatch('socket.getfqdn', lambda: fqdn))
        api = rpcapi.ConductorAPI()
        name = agent_service.wait_for_compute_node(api)
        tracker = resource_tracker.ResourceTracker(
            name, drivers_base.load(
                ['intel_fpga_driver', 'nvidia_gpu_driver', 'fake_driver']),
            api)
        self.assertTrue(tracker.report())
        return compute, theirs, providers, name

    def _assert_one_row_each(self, compute, theirs, providers, node, host):
        """No device, deployable or provider twice; binds take free ones.

        :param host: the ``[DEFAULT] host`` after which 17.0.0's drivers
            named the deployables.
        """
        ctx = self.admin_context
        devices = db_api.get_all(ctx, 'device')
        self.assertEqual(sorted((dev['uuid'], node, None)
                                for dev in theirs['devices']),
                         sorted((dev.uuid, dev.hostname, dev.vanished_at)
                                for dev in devices))
        self.assertEqual({dep['uuid'] for dep in theirs['deployables']},
                         {dep.uuid for dep in db_api.get_all(
                             ctx, 'deployable')})
        self.assertEqual(set(providers), set(self._children(compute)))

        # Nova binds naming the compute node: the FPGA's free virtual
        # function is handed out, and the GPU, which an instance holds
        # whole, is not.
        held = {h.id for h in db_api.get_all(
            ctx, 'attach_handle', filters={'in_use': True})}
        self.assertEqual(len(theirs['accelerator_requests']), len(held))
        by_name = {dep['name']: dep for dep in theirs['deployables']}
        fpga_arq, gpu_arq, _fake = rpcapi.ConductorAPI().arq_create(
            ctx, 'host-dp', 'project')
        for arq, deployable in ((fpga_arq, by_name[host + '_' + FPGA_VF]),
                                (gpu_arq, by_name[host + '_' + GPU])):
            rpcapi.ConductorAPI().arq_apply_patch(ctx, {arq.uuid: {
                'hostname': node, 'device_rp_uuid': deployable['rp_uuid'],
                'instance_uuid': str(uuid_lib.uuid4())}})
        fpga_arq = db_api.get(ctx, 'accelerator_request', fpga_arq.uuid)
        self.assertEqual('Bound', fpga_arq.state)
        self.assertNotIn(fpga_arq.attach_handle_id, held)
        gpu_arq = db_api.get(ctx, 'accelerator_request', gpu_arq.uuid)
        self.assertEqual(('BindFailed', None),
                         (gpu_arq.state, gpu_arq.attach_handle_id))
        self.assertEqual(held | {fpga_arq.attach_handle_id}, {
            h.id for h in db_api.get_all(ctx, 'attach_handle',
                                         filters={'in_use': True})})

    def test_short_host_fqdn_compute_node(self):
        # The defaults wherever the domain resolves: [DEFAULT] host is the
        # short name, the FQDN names the compute node and the devices.
        node = self.host + '.example.org'
        compute, theirs, providers, name = self._switch(
            self.host, node, node)
        self.assertEqual(node, name)
        self._assert_one_row_each(compute, theirs, providers, node,
                                  self.host)

    def test_fqdn_host_short_compute_node(self):
        # The reverse: [DEFAULT] host is set to the FQDN, which does not
        # resolve; the compute node and the devices have the short name.
        host = self.host + '.example.org'
        compute, theirs, providers, name = self._switch(
            host, self.host, self.host)
        self.assertEqual(self.host, name)
        self._assert_one_row_each(compute, theirs, providers, self.host,
                                  host)

    def test_report_under_another_name_refused(self):
        # 17.0.0 recorded the devices under the compute node's old name;
        # Placement knows it under the new one only.
        log = self.useFixture(fixtures.FakeLogger())
        old = self.host + '.old.example.org'
        compute = self._ok(self.direct.post(
            '/resource_providers', json={'name': self.host}))['uuid']
        theirs = self.seed(self.host, 'host', old)
        self._legacy_providers(compute, theirs)
        self.dbsync('upgrade')
        self.serve()
        self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('intel_fpga', FPGA, dict(vfs=2, layout='intel')),
            ('nvidia_gpu', GPU, {})]))
        # Placement knows no provider named after the FQDN: the agent
        # takes [DEFAULT] host, the compute node's new name.
        self.useFixture(fixtures.MonkeyPatch(
            'socket.getfqdn', lambda: self.host + '.example.org'))
        self.conf.config(host=self.host)
        self.conf.config(report_interval=1, group='agent')
        api = rpcapi.ConductorAPI()
        tracker = resource_tracker.ResourceTracker(
            agent_service.wait_for_compute_node(api),
            drivers_base.load(['intel_fpga_driver', 'nvidia_gpu_driver',
                               'fake_driver']), api)
        before = {dev.uuid: dev.hostname for dev in db_api.get_all(
            self.admin_context, 'device')}

        error = self.assertRaises(exception.HostNameConflict, tracker.report)
        self.assertIn('Set [agent] resource_provider_name to %s' % old,
                      str(error))
        self.assertEqual(before, {dev.uuid: dev.hostname for dev in
                                  db_api.get_all(self.admin_context,
                                                 'device')})
        # Logged by the conductor, and by the agent at each pass.
        self.assertIn('Report of host %s refused' % self.host, log.output)
        tracker.start()
        self.addCleanup(tracker.stop)
        functional.wait('the agent logging the refusal', lambda: (
            'Device report refused; the next pass is in 1 seconds: Host '
            '%s reports device' % self.host) in log.output)
