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
"""What a bind asks of the host's agent: programming, mediated devices.

FPGA regions programmed with a bitstream or a function before their
handle is bound, and vGPU mediated devices created on bind and removed
on unbind, through the stand-in agent of
:class:`cyborg.tests.functional.conductor.test_binding.BindTestCase`.
"""

import oslo_messaging as messaging
from oslo_utils import uuidutils

from cyborg.db import api as db_api
from cyborg import exception
from cyborg import states
from cyborg.tests.functional.conductor import test_binding
from cyborg.tests import openstack_fixtures

FUNCTION = 'a53b9a4e-5b1e-4c31-9f6b-4a3b5a4d6c10'


class TestProgramming(test_binding.BindTestCase):

    def test_programmed_once_per_bitstream(self):
        first, second = self._arqs(
            {'resources:FPGA': '1',
             'accel:bitstream_id': test_binding.BITSTREAM}, count=2)
        self._bind([first, second])
        self.assertEqual({states.BOUND},
                         {self._get(a).state for a in (first, second)})
        calls = self.agent.called('program')
        self.assertEqual(1, len(calls))
        # A bind never lets the agent flash a shell.
        self.assertEqual({'deployable_name': self.deployable.name,
                          'bitstream_id': test_binding.BITSTREAM,
                          'function_id': None, 'function_name': None,
                          'allow_shell': False},
                         calls[0])
        self.assertEqual(test_binding.BITSTREAM, db_api.get(
            self.ctx, 'deployable', self.deployable.uuid).bitstream_id)

    def test_function_already_there(self):
        deployable, _ = self._tree(
            'host1', '0000:af:00.0',
            traits=('CUSTOM_FPGA_FUNCTION_ID_A53B9A4E5B1E4C319F6B4A3B5A4D6C10',
                    'CUSTOM_FPGA_INTEL'))
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:function_id': FUNCTION})[0]
        self._bind([arq], rp_uuid=deployable.rp_uuid)
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual([], self.agent.called('program'))

    def test_function_programmed(self):
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:function_id': FUNCTION})[0]
        self._bind([arq])
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual([FUNCTION], [c['function_id'] for c in
                                      self.agent.called('program')])
        self.assertEqual(self.agent.loaded, db_api.get(
            self.ctx, 'deployable', self.deployable.uuid).bitstream_id)

    def test_programmed_once_per_function_name(self):
        # Glance says which function the loaded bitstream carries.
        missing = openstack_fixtures.Glance.missing()
        if missing:
            self.skipTest(missing)
        glance = self.useFixture(openstack_fixtures.Glance(self.conf))
        self.agent.loaded = glance.add_image(function_name='aes')['id']
        arqs = self._arqs({'resources:FPGA': '1',
                           'accel:function_name': 'aes'}, count=2)
        self._bind(arqs[:1])
        self._bind(arqs[1:])
        self.assertEqual([states.BOUND] * 2,
                         [self._get(arq).state for arq in arqs])
        self.assertEqual(['aes'], [c['function_name'] for c in
                                   self.agent.called('program')])

    def test_programming_fails(self):
        self.agent.failures['program'] = exception.ProgrammingFailed(
            deployable='region', reason='fpgaconf exited with 1')
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:bitstream_id': test_binding.BITSTREAM})[0]
        instance = self._bind([arq])
        self.assertEqual(states.BIND_FAILED, self._get(arq).state)
        self.assertEqual(set(), self._in_use())
        self.assertEqual([(arq.uuid, 'failed')], self._statuses(instance))
        self.assertIn('fpgaconf exited with 1', self.log.output)

    def test_no_reprogramming_under_a_running_instance(self):
        running = self._arqs({'resources:FPGA': '1'})[0]
        self._bind([running])
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:bitstream_id': test_binding.BITSTREAM})[0]
        self._bind([arq])
        self.assertEqual(states.BIND_FAILED, self._get(arq).state)
        self.assertEqual([], self.agent.called('program'))
        self.assertEqual(states.BOUND, self._get(running).state)

    def test_agent_not_answering(self):
        self.agent.failures['program'] = messaging.MessagingTimeout('gone')
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:bitstream_id': test_binding.BITSTREAM})[0]
        self._bind([arq])
        self.assertEqual(states.BIND_FAILED, self._get(arq).state)
        self.assertEqual(set(), self._in_use())

    def test_region_holds_no_known_bitstream_while_programming(self):
        # The region held another bitstream; the agent dies programming.
        db_api.update(self.ctx, 'deployable', self.deployable.uuid,
                      {'bitstream_id': uuidutils.generate_uuid()})
        held = []
        self.agent.hooks['program'] = lambda **kw: held.append(db_api.get(
            self.ctx, 'deployable', self.deployable.uuid).bitstream_id)
        self.agent.failures['program'] = messaging.MessagingTimeout('gone')
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:bitstream_id': test_binding.BITSTREAM})[0]
        self._bind([arq])
        self.assertEqual([None], held)
        self.assertEqual(states.BIND_FAILED, self._get(arq).state)
        # No later bind takes the region for what it held before.
        self.assertIsNone(db_api.get(self.ctx, 'deployable',
                                     self.deployable.uuid).bitstream_id)


class TestMdev(test_binding.BindTestCase):
    TRAITS = ('CUSTOM_NVIDIA_T4',)

    def setUp(self):
        super().setUp()
        self.deployable, self.handles = self._tree(
            'host1', '0000:3b:00.0', handles=2, resource_class='VGPU',
            attach_type='MDEV', asked_type='nvidia-222')
        self.arq = self._arqs({'resources:VGPU': '1'})[0]

    def test_created_on_bind_removed_on_unbind(self):
        self._bind([self.arq])
        bound = self._get(self.arq)
        self.assertEqual(states.BOUND, bound.state)
        self.assertEqual('MDEV', bound.attach_handle_type)
        self.assertEqual('nvidia-222',
                         bound.attach_handle_info['asked_type'])
        self.assertEqual([{'mdev_uuid': bound.attach_handle_uuid,
                           'mdev_type': 'nvidia-222',
                           'parent_address': '0000:3b:00.0'}],
                         self.agent.called('create_mdev'))
        self.api.arq_apply_patch(self.ctx, {self.arq.uuid: None})
        self.assertEqual([{'mdev_uuid': bound.attach_handle_uuid}],
                         self.agent.called('remove_mdev'))
        self.assertEqual(set(), self._in_use())

    def test_unbind_retried_after_agent_failure(self):
        self._bind([self.arq])
        handle = self._get(self.arq).attach_handle_uuid
        self.agent.failures['remove_mdev'] = [
            exception.MdevFailed(action='remove', uuid=handle,
                                 reason='busy')]
        self.assertRaises(exception.UnbindFailed, self.api.arq_apply_patch,
                          self.ctx, {self.arq.uuid: None})
        self.assertEqual(states.UNBIND_FAILED, self._get(self.arq).state)
        self.assertEqual({handle}, self._in_use())
        self.api.arq_apply_patch(self.ctx, {self.arq.uuid: None})
        self.assertEqual(states.UNBOUND, self._get(self.arq).state)
        self.assertEqual(set(), self._in_use())

    def test_delete_removes_the_mdev_even_with_the_agent_down(self):
        instance = self._bind([self.arq])
        handle = self._get(self.arq).attach_handle_uuid
        self.agent.failures['remove_mdev'] = messaging.MessagingTimeout('x')
        self.api.arq_delete(self.ctx, instance_uuid=instance)
        self.assertEqual([{'mdev_uuid': handle}],
                         self.agent.called('remove_mdev'))
        self.assertEqual(set(), self._in_use())
        # Nova repeats it.
        self.api.arq_delete(self.ctx, instance_uuid=instance)

    def test_create_fails(self):
        self.agent.failures['create_mdev'] = exception.MdevTypeNotEnabled(
            mdev_type='nvidia-222')
        instance = self._bind([self.arq])
        self.assertEqual(states.BIND_FAILED, self._get(self.arq).state)
        self.assertEqual(set(), self._in_use())
        # What may have been made is cleaned up.
        self.assertEqual(1, len(self.agent.called('remove_mdev')))
        self.assertEqual([(self.arq.uuid, 'failed')],
                         self._statuses(instance))
