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
"""An agent's reports reach the real Placement through the conductor.

The conductor serves on fake:// in this process with a SQLite database;
the agent's resource tracker discovers a simulated host and reports over
RPC; Placement is the real service. Covers the compute node lookup, the
report → database → Placement path, device maintenance, Placement being
down while reports arrive, and the periodic reconciliation.
"""

from cyborg.agent import resource_tracker
from cyborg.conductor import service as conductor_service
from cyborg.db import host as host_db
from cyborg.drivers import base as drivers_base
from cyborg import exception
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.tests import base
from cyborg.tests import openstack_fixtures
from cyborg.tests import sysfs_tree

CARD = '0000:5e:00.0'
GPU = '0000:3b:00.0'


class TestHostSync(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(openstack_fixtures.Placement())
        self.host = self.placement.hostname
        self.rp = self.placement.adapter()
        self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('intel_fpga', CARD, dict(vfs=2)),
            ('nvidia_gpu', GPU, dict(mdev_types={'nvidia-222': 4})),
        ]))
        self.conf.config(enabled_vgpu_types=['nvidia-222'],
                         group='gpu_devices')
        self.tracker = resource_tracker.ResourceTracker(
            self.host, drivers_base.load(['intel_fpga_driver',
                                          'nvidia_gpu_driver']), self.api)

    def _compute_node(self):
        response = self.rp.post('/resource_providers',
                                json={'name': self.host})
        self.assertEqual(200, response.status_code, response.text)
        return response.json()['uuid']

    def _providers(self, compute):
        response = self.rp.get('/resource_providers', params={
            'in_tree': compute, 'required': 'OWNER_CYBORG'})
        return {rp['name']: rp for rp in
                response.json()['resource_providers']}

    def _inventory(self, rp_uuid):
        return self.rp.get('/resource_providers/%s/inventories'
                           % rp_uuid).json()['inventories']

    def test_compute_node_unknown_until_nova_makes_it(self):
        self.assertRaises(exception.ResourceProviderNotFound,
                          self.api.compute_node_rp, self.admin_context,
                          hostname=self.host, rp_name=self.host)
        compute = self._compute_node()
        self.assertEqual(compute, self.api.compute_node_rp(
            self.admin_context, hostname=self.host, rp_name=self.host))

    def test_report_reaches_placement(self):
        compute = self._compute_node()
        self.api.compute_node_rp(self.admin_context, hostname=self.host,
                                 rp_name=self.host)
        self.tracker.report()
        providers = self._providers(compute)
        fpga = providers['%s_%s' % (self.host, CARD)]
        vgpu = providers['%s_%s' % (self.host, GPU)]
        self.assertEqual(2, self._inventory(fpga['uuid'])['FPGA']['total'])
        self.assertEqual(4, self._inventory(vgpu['uuid'])['VGPU']['total'])
        # Each deployable knows its provider.
        names = {d.name: d.rp_uuid for d in deployable_obj.Deployable.list(
            self.admin_context)}
        self.assertEqual(fpga['uuid'], names[CARD])

        # A device under maintenance is fully reserved, and stays so
        # through the agent's next reports.
        device = device_obj.Device.list(
            self.admin_context, filters={'type': 'GPU'})[0]
        self.api.device_set_status(self.admin_context, device.uuid,
                                   'maintaining')
        self.assertEqual(4, self._inventory(vgpu['uuid'])['VGPU'][
            'reserved'])
        self.tracker.report(force=True)
        self.assertEqual(4, self._inventory(vgpu['uuid'])['VGPU'][
            'reserved'])
        self.api.device_set_status(self.admin_context, device.uuid,
                                   'enabled')
        self.assertEqual(0, self._inventory(vgpu['uuid'])['VGPU'][
            'reserved'])

    def test_placement_down_loses_nothing(self):
        compute = self._compute_node()
        self.api.compute_node_rp(self.admin_context, hostname=self.host,
                                 rp_name=self.host)
        # Placement stops answering: the report is still stored.
        self.conf.config(endpoint='http://127.0.0.1:9', group='placement')
        self.conf.config(placement_max_retries=0, group='conductor')
        self.tracker.report()
        self.assertEqual(2, len(deployable_obj.Deployable.list(
            self.admin_context)))
        self.assertEqual({}, self._providers(compute))

        # Back again: the next periodic pass brings Placement in line.
        self.conf.config(endpoint=self.placement.url, group='placement')
        service = conductor_service.ConductorService(self.host)
        service.manager = self.conductor.manager
        service.periodic_tasks(self.admin_context)
        self.assertEqual(2, len(self._providers(compute)))

    def test_reconcile_repairs_drift(self):
        compute = self._compute_node()
        self.api.compute_node_rp(self.admin_context, hostname=self.host,
                                 rp_name=self.host)
        self.tracker.report()
        name = '%s_%s' % (self.host, CARD)
        rp_uuid = self._providers(compute)[name]['uuid']
        self.assertEqual(204, self.rp.delete(
            '/resource_providers/%s' % rp_uuid).status_code)
        self.conductor.manager.reconciler.run(self.admin_context)
        self.assertEqual(rp_uuid, self._providers(compute)[name]['uuid'])

    def test_a_refused_host_does_not_stop_the_others(self):
        compute = self._compute_node()
        self.api.compute_node_rp(self.admin_context, hostname=self.host,
                                 rp_name=self.host)
        self.tracker.report()
        name = '%s_%s' % (self.host, CARD)
        rp_uuid = self._providers(compute)[name]['uuid']
        self.assertEqual(204, self.rp.delete(
            '/resource_providers/%s' % rp_uuid).status_code)
        # A host visited first whose every Placement request is refused
        # (a compute node "uuid" Placement rejects with 400).
        host_db.set_compute_rp(self.admin_context, '0-' + self.host,
                               'not-a-uuid')
        self.conductor.manager.reconciler.run(self.admin_context)
        self.assertEqual(rp_uuid, self._providers(compute)[name]['uuid'])
