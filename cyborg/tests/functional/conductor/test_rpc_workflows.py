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
"""Conductor workflows driven through its RPC API on fake://."""

import time

from oslo_utils import uuidutils

from cyborg.conductor import rpcapi
from cyborg.db import api as db_api
from cyborg import exception
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import device_profile
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import stand_ins


class TestConductorOverRPC(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        _, self.deployable, self.handles = db_utils.create_device_tree(
            self.admin_context, hostname='host1', resource_class='FPGA')
        self.rp_uuid = uuidutils.generate_uuid()
        db_api.update(self.admin_context, 'deployable', self.deployable.uuid,
                      {'rp_uuid': self.rp_uuid})

    def _profile(self, groups):
        profile = device_profile.DeviceProfile(
            self.admin_context, name='dp', description=None, groups=groups)
        return self.api.device_profile_create(self.admin_context, profile)

    def test_profile_create_and_delete(self):
        created = self._profile([{'resources:FPGA': '1'}])
        self.assertTrue(uuidutils.is_uuid_like(created.uuid))
        self.assertRaises(exception.DuplicateEntry, self._profile,
                          [{'resources:FPGA': '1'}])
        self.api.device_profiles_delete(self.admin_context, names=['dp'])
        self.assertRaises(exception.DeviceProfileNotFound,
                          device_profile.DeviceProfile.get_by_name,
                          self.admin_context, 'dp')

    def test_arqs_are_groups_times_units(self):
        self._profile([{'resources:FPGA': '2'},
                       {'resources:CUSTOM_X': '1', 'resources:FPGA': '1'}])
        arqs = self.api.arq_create(self.admin_context, 'dp', 'p1')
        self.assertEqual([0, 0, 1, 1],
                         [a.device_profile_group_id for a in arqs])
        self.assertEqual({states.INITIAL}, {a.state for a in arqs})
        self.assertEqual({'p1'}, {a.project_id for a in arqs})

    def test_unknown_profile(self):
        self.assertRaises(exception.DeviceProfileNotFound,
                          self.api.arq_create, self.admin_context, 'nope',
                          'p1')

    def test_bind_unbind_delete(self):
        self._profile([{'resources:FPGA': '1'}])
        arq = self.api.arq_create(self.admin_context, 'dp', 'p1')[0]
        instance = uuidutils.generate_uuid()
        self.api.arq_apply_patch(self.admin_context, {arq.uuid: {
            'hostname': 'host1', 'device_rp_uuid': self.rp_uuid,
            'instance_uuid': instance}})
        bound = arq_obj.AcceleratorRequest.get_by_uuid(self.admin_context,
                                                       arq.uuid)
        self.assertEqual(states.BOUND, bound.state)
        self.assertEqual(self.handles[0].uuid, bound.attach_handle_uuid)
        self.api.arq_apply_patch(self.admin_context, {arq.uuid: None})
        unbound = arq_obj.AcceleratorRequest.get_by_uuid(self.admin_context,
                                                         arq.uuid)
        self.assertEqual(states.UNBOUND, unbound.state)
        self.api.arq_delete(self.admin_context, uuids=[arq.uuid])
        self.assertRaises(exception.AcceleratorRequestNotFound,
                          arq_obj.AcceleratorRequest.get_by_uuid,
                          self.admin_context, arq.uuid)

    def test_unbinding_an_unbound_arq_again_succeeds(self):
        # Nova sends a release again when the answer to the first was lost.
        self._profile([{'resources:FPGA': '2'}])
        released, kept = self.api.arq_create(self.admin_context, 'dp', 'p1')
        self.api.arq_apply_patch(self.admin_context, {arq.uuid: {
            'hostname': 'host1', 'device_rp_uuid': self.rp_uuid,
            'instance_uuid': uuidutils.generate_uuid()}
            for arq in (released, kept)})
        self.api.arq_apply_patch(self.admin_context, {released.uuid: None})
        self.api.arq_apply_patch(self.admin_context, {released.uuid: None,
                                                      kept.uuid: None})
        self.assertEqual(
            [states.UNBOUND] * 2,
            [arq_obj.AcceleratorRequest.get_by_uuid(
                self.admin_context, arq.uuid).state
             for arq in (released, kept)])

    def test_bind_to_rp_of_another_host_is_refused(self):
        self._profile([{'resources:FPGA': '1'}])
        arq = self.api.arq_create(self.admin_context, 'dp', 'p1')[0]
        error = self.assertRaises(
            exception.BindRefused, self.api.arq_apply_patch,
            self.admin_context, {arq.uuid: {
                'hostname': 'host2', 'device_rp_uuid': self.rp_uuid,
                'instance_uuid': uuidutils.generate_uuid()}})
        self.assertIn('not on host2', error.message)
        refused = arq_obj.AcceleratorRequest.get_by_uuid(self.admin_context,
                                                         arq.uuid)
        self.assertEqual((states.INITIAL, None),
                         (refused.state, refused.attach_handle_id))

    def test_patch_with_a_bad_entry_changes_nothing(self):
        self._profile([{'resources:FPGA': '2'}])
        first, second = self.api.arq_create(self.admin_context, 'dp', 'p1')
        self.api.arq_apply_patch(self.admin_context, {second.uuid: {
            'hostname': 'host1', 'device_rp_uuid': self.rp_uuid,
            'instance_uuid': uuidutils.generate_uuid()}})
        # second is Bound now: binding it again is refused, with first.
        self.assertRaises(
            exception.AcceleratorRequestInvalidState,
            self.api.arq_apply_patch, self.admin_context,
            {first.uuid: {'hostname': 'host1',
                          'device_rp_uuid': self.rp_uuid,
                          'instance_uuid': uuidutils.generate_uuid()},
             second.uuid: {'hostname': 'host1',
                           'device_rp_uuid': self.rp_uuid,
                           'instance_uuid': uuidutils.generate_uuid()}})
        self.assertEqual(states.INITIAL,
                         arq_obj.AcceleratorRequest.get_by_uuid(
                             self.admin_context, first.uuid).state)

    def test_a_patch_received_after_its_deadline_changes_nothing(self):
        # Its caller answered 503 and Nova gave the instance up: carried
        # out now, the bind would hold a device for nobody.
        self._profile([{'resources:FPGA': '1'}])
        arq = self.api.arq_create(self.admin_context, 'dp', 'p1')[0]
        bind = {arq.uuid: {'hostname': 'host1',
                           'device_rp_uuid': self.rp_uuid,
                           'instance_uuid': uuidutils.generate_uuid()}}
        error = self.assertRaises(
            exception.ServiceUnavailable, self.api.arq_apply_patch,
            self.admin_context, bind, deadline=time.time() - 1)
        self.assertIn('after its caller stopped waiting', error.message)
        refused = arq_obj.AcceleratorRequest.get_by_uuid(self.admin_context,
                                                         arq.uuid)
        self.assertEqual((states.INITIAL, None),
                         (refused.state, refused.attach_handle_id))
        # An API capped below 1.6 sends no deadline.
        self.conf.config(conductor='1.5', group='upgrade_levels')
        rpcapi.ConductorAPI().arq_apply_patch(self.admin_context, bind)
        self.assertEqual(states.BOUND, arq_obj.AcceleratorRequest.get_by_uuid(
            self.admin_context, arq.uuid).state)

    def test_program(self):
        agent = self.useFixture(
            stand_ins.StandInAgent('host1')).endpoint
        image = uuidutils.generate_uuid()
        programmed = self.api.deployable_program(
            self.admin_context, self.deployable.uuid, image)
        self.assertEqual(image, programmed.bitstream_id)
        self.assertEqual(image, db_api.get(
            self.admin_context, 'deployable',
            self.deployable.uuid).bitstream_id)
        # Nothing of the card is allocated: a shell image may be flashed.
        self.assertEqual([{'deployable_name': self.deployable.name,
                           'bitstream_id': image, 'function_id': None,
                           'function_name': None, 'allow_shell': True}],
                         agent.called('program'))

    def test_no_program_under_a_bound_arq(self):
        agent = self.useFixture(
            stand_ins.StandInAgent('host1')).endpoint
        self._profile([{'resources:FPGA': '1'}])
        arq = self.api.arq_create(self.admin_context, 'dp', 'p1')[0]
        self.api.arq_apply_patch(self.admin_context, {arq.uuid: {
            'hostname': 'host1', 'device_rp_uuid': self.rp_uuid,
            'instance_uuid': uuidutils.generate_uuid()}})
        self.assertRaises(exception.ObjectInUse, self.api.deployable_program,
                          self.admin_context, self.deployable.uuid,
                          uuidutils.generate_uuid())
        self.assertIsNone(db_api.get(self.admin_context, 'deployable',
                                     self.deployable.uuid).bitstream_id)
        self.assertEqual([], agent.called('program'))
