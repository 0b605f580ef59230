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
"""Two conductors and three agents as processes, over RabbitMQ.

Real parts all through: the conductors share a PostgreSQL database and
the real Placement (served by this test process), the agents read
simulated sysfs trees, and Nova is an event receiver in this process.
The test plays Nova: it asks Placement for allocation candidates, claims
them, creates and binds ARQs through the conductors and waits for the
``accelerator-request-bound`` events.
"""

import signal
import uuid

from oslo_db.sqlalchemy import test_fixtures

from cyborg.conductor import rpcapi
from cyborg import context
from cyborg.db import api as db_api
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device_profile
from cyborg import states
from cyborg.tests import functional
from cyborg.tests.functional.db import test_concurrency
from cyborg.tests.functional import services

HOSTS = 3
VFS = 2


class TestConductorsAndAgents(test_fixtures.OpportunisticDBTestMixin,
                              services.ServicesTestCase):

    FIXTURE = test_concurrency.PostgreSQLFixture

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()
        db_url = db_api.get_engine().url.render_as_string(
            hide_password=False)
        self.conductors = [self._conductor('conductor-%d' % i, db_url)
                           for i in range(2)]
        for i in range(HOSTS):
            self._agent('%s-%d' % (self.placement.hostname, i), vfs=VFS)
        self.api = rpcapi.ConductorAPI()

    def _boot(self, host):
        """Nova's side of a boot on ``host``; the ARQ once bound."""
        instance = str(uuid.uuid4())
        candidates = self.rp.get('/allocation_candidates', params={
            'resources1': 'FPGA:1', 'required1': 'CUSTOM_FPGA_INTEL',
            'in_tree1': self.compute_rps[host]}).json()
        allocation = candidates['allocation_requests'][0]['allocations']
        (rp_uuid,) = allocation
        response = self.rp.put('/allocations/%s' % instance, json={
            'allocations': allocation, 'project_id': 'p', 'user_id': 'u',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})
        self.assertEqual(204, response.status_code, response.text)
        (arq,) = self.api.arq_create(self.ctx, 'fpga', 'p')
        self.api.arq_apply_patch(self.ctx, {arq.uuid: {
            'hostname': host, 'device_rp_uuid': rp_uuid,
            'instance_uuid': instance}})
        (event,) = self.nova.wait_for(instance, 1, timeout=60)
        self.assertEqual({'name': 'accelerator-request-bound',
                          'server_uuid': instance, 'tag': arq.uuid,
                          'status': 'completed'}, event)
        arq = arq_obj.AcceleratorRequest.get_by_uuid(self.ctx, arq.uuid)
        self.assertEqual(states.BOUND, arq.state)
        return arq, rp_uuid

    def _assert_handle_of(self, arq, rp_uuid):
        """The ARQ holds a handle of the deployable behind ``rp_uuid``."""
        handle = handle_obj.AttachHandle.get_by_id(self.ctx,
                                                   arq.attach_handle_id)
        (deployable,) = deployable_obj.Deployable.list(
            self.ctx, filters={'rp_uuid': rp_uuid})
        self.assertEqual(deployable.id, handle.deployable_id)
        self.assertEqual(states.ATTACH_PCI, handle.attach_type)

    def test_devices_reach_placement_and_instances_boot(self):
        functional.wait('every host in Placement', self._all_in_placement)
        self.api.device_profile_create(self.ctx, device_profile.DeviceProfile(
            self.ctx, name='fpga', groups=[services.PROFILE]))
        host = sorted(self.compute_rps)[0]
        self._assert_handle_of(*self._boot(host))

        # The broker drops every connection, as when it restarts: the
        # services reconnect and carry on.
        self.assertEqual(0, functional.rabbitmqctl(
            'close_all_connections', '-p', self.vhost, 'test restart'))
        self._boot(host)

        # A card added to a host reaches Placement through the next report.
        self.trees[host].intel_fpga('0000:af:00.0', vfs=VFS)
        functional.wait('the new card', lambda: '%s_0000:af:00.0' % host in
                        self._children(host))

        # One conductor dies; the other serves alone.
        self.conductors[0].stop(signal.SIGKILL)
        self._boot(sorted(self.compute_rps)[1])
