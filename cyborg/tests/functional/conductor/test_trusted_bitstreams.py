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
"""A project member's bitstream image never reaches a shared FPGA.

The conductor (on fake://), a real agent on a simulated host with a
stand-in ``fpgaconf``, the real Placement and the real Glance. The
operator holds only an image made for the service Cyborg replaces (found
by its ``accel:function_id``); a project member uploads an image tagged
``FPGA`` with full metadata claiming the same function, whose data is
another function. Binds, new ones and ones resumed after a conductor
restart, must load the operator's image or none.
"""

import datetime
import json
import os

import fixtures
import futurist
from oslo_utils import timeutils
from oslo_utils import uuidutils

from cyborg.agent import service as agent_service
from cyborg.conductor import binding
from cyborg.conductor import rpcapi as conductor_rpcapi
from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg.drivers import base as drivers_base
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import deployable as deployable_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import functional
from cyborg.tests import openstack_fixtures
from cyborg.tests import stand_ins
from cyborg.tests import sysfs_tree

PAC = '0000:5e:00.0'
IFID = '9926ab6d-6c92-5a68-aabc-a7d84c545738'
FUNCTION = 'd8424dc4-a4a3-c413-f89e-433683f9040b'
#: What the member's image really loads.
EVIL = 'e7e7e7e7-0000-4000-8000-e7e7e7e7e7e7'
MEMBER_PROJECT = 'project-of-a-member'


def _afu(function):
    return function.replace('-', '')


class TestUntrustedImages(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        missing = openstack_fixtures.Glance.missing()
        if missing:
            self.skipTest(missing)
        self.ctx = self.admin_context
        self.nova = self.useFixture(openstack_fixtures.NovaEvents()).receiver
        placement = self.useFixture(openstack_fixtures.Placement())
        self.rp = placement.adapter()
        host = self.host = placement.hostname
        response = self.rp.post('/resource_providers', json={'name': host})
        self.assertEqual(200, response.status_code, response.text)
        self.compute_rp = response.json()['uuid']
        self.conf.config(host=host)
        self.conf.config(enable_hotplug_monitor=False,
                         resource_provider_name=host, group='agent')
        self.tree = self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('intel_fpga', PAC, dict(vfs=2, interface_id=IFID))])).tree
        tmp = self.useFixture(fixtures.TempDir()).path
        self.loaded = os.path.join(tmp, 'loaded')
        # Like OPAE's tool: the port shows the AFU the file holds.
        self.fpgaconf = self.useFixture(stand_ins.StandInTool(
            'fpgaconf',
            'import shutil\n'
            'shutil.copy(args[-1], %r)\n'
            'open(%r, "w").write(open(args[-1]).read())\n' % (
                self.loaded, self.tree.afu_files[PAC])))
        self.conf.config(fpgaconf_path=self.fpgaconf.path, group='fpga')
        self.conf.config(download_dir=os.path.join(tmp, 'downloads'),
                         group='glance')
        self.glance = self.useFixture(openstack_fixtures.Glance(self.conf))
        # The operator's image, as the service Cyborg replaces found it.
        self.legacy = self.glance.add_image(
            data=_afu(FUNCTION).encode(), tags=[],
            **{'accel:function_id': FUNCTION})
        # A member's, claiming that function for this very region type.
        self.planted = self.glance.add_image(
            data=_afu(EVIL).encode(), owner=MEMBER_PROJECT, **{
                'bs-name': 'aes-128', 'vendor': 'Intel',
                'board': 'PAC_ARRIA10', 'shell_id': IFID,
                'region_uuid': IFID, 'function_uuid': FUNCTION,
                'function_name': 'aes', 'topology': json.dumps(
                    {'pf': [{'pci_offset': 0, 'vf': [
                        {'pci_offset': 1}, {'pci_offset': 2}]}]})})
        # As cyborg-agent starts: the conductor hears the host on its
        # topic and finds the compute node.
        self.conductor.serve_agent(host)
        self.assertEqual(host, agent_service.wait_for_compute_node(
            conductor_rpcapi.AgentConductorAPI()))
        agent = agent_service.AgentService(
            drivers_base.load(['intel_fpga_driver']), host=host)
        agent.start()
        self.addCleanup(agent.stop)
        self.region_rp = functional.wait(
            'the FPGA region in Placement', self._region_rp, timeout=30)
        self.before = self._afu_now()

    def _region_rp(self):
        """The region's provider, once Cyborg recorded it."""
        for dep in deployable_obj.Deployable.list(self.ctx):
            if dep.name == PAC and dep.rp_uuid:
                return dep.rp_uuid
        return None

    def _afu_now(self):
        with open(self.tree.afu_files[PAC]) as f:
            return f.read().strip()

    def _arq(self, **accel):
        group = {'resources:FPGA': '1'}
        group.update(('accel:' + key, value) for key, value in accel.items())
        profile = db_utils.create_profile(
            self.ctx, name='dp-' + uuidutils.generate_uuid(), groups=[group])
        return db_utils.create_arqs(self.ctx, profile)[0]

    def _bind(self, arq):
        self.api.arq_apply_patch(self.ctx, {arq.uuid: {
            'hostname': self.host, 'device_rp_uuid': self.region_rp,
            'instance_uuid': uuidutils.generate_uuid()}})
        return arq_obj.AcceleratorRequest.get_by_uuid(self.ctx, arq.uuid)

    def _left_binding(self, arq):
        """``arq`` in BindStarted, as a conductor killed mid-bind left it."""
        arq_db.update_state(self.ctx, arq.uuid, states.BIND_STARTED, values={
            'hostname': self.host, 'device_rp_uuid': self.region_rp,
            'instance_uuid': uuidutils.generate_uuid()})
        (deployable,) = deployable_obj.Deployable.list(
            self.ctx, filters={'rp_uuid': self.region_rp})
        arq_db.claim_handle(self.ctx, arq.uuid, deployable.id)
        then = timeutils.utcnow() - datetime.timedelta(seconds=5)
        db_api.update(self.ctx, 'accelerator_request', arq.uuid,
                      {'updated_at': then})

    def _resume(self, arq):
        # What a conductor does when it starts again.
        self._left_binding(arq)
        binding.resume_binds(self.ctx, futurist.SynchronousExecutor())
        return arq_obj.AcceleratorRequest.get_by_uuid(self.ctx, arq.uuid)

    def _assert_operators_image_loaded(self, arq):
        self.assertEqual(states.BOUND, arq.state)
        self.assertEqual(1, len(self.fpgaconf.calls))
        self.assertEqual(_afu(FUNCTION), self._afu_now())
        with open(self.loaded) as f:
            self.assertEqual(_afu(FUNCTION), f.read())
        (deployable,) = deployable_obj.Deployable.list(
            self.ctx, filters={'rp_uuid': self.region_rp})
        self.assertEqual(self.legacy['id'], deployable.bitstream_id)

    def _assert_nothing_loaded(self, arq):
        self.assertEqual(states.BIND_FAILED, arq.state)
        self.assertEqual([], self.fpgaconf.calls)
        self.assertEqual(self.before, self._afu_now())
        self.assertFalse(os.path.exists(self.loaded))
        self.assertIn('not a trusted image owner', self.log.output)

    def test_new_bind_by_function_loads_the_operators_image(self):
        self._assert_operators_image_loaded(
            self._bind(self._arq(function_id=FUNCTION)))

    def test_resumed_bind_by_function_loads_the_operators_image(self):
        self._assert_operators_image_loaded(
            self._resume(self._arq(function_id=FUNCTION)))

    def test_new_bind_of_the_members_image_by_id_fails(self):
        self.log = self.useFixture(fixtures.FakeLogger())
        self._assert_nothing_loaded(
            self._bind(self._arq(bitstream_id=self.planted['id'])))

    def test_resumed_bind_of_the_members_image_by_id_fails(self):
        self.log = self.useFixture(fixtures.FakeLogger())
        self._assert_nothing_loaded(
            self._resume(self._arq(bitstream_id=self.planted['id'])))
