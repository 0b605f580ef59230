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
"""A card's shell is flashed only by an operator, on a card nobody uses.

The conductor tells the agent whether it may flash a shell image
(``allow_shell``): never for a bind; for the operator's program action
only while no function of the whole card (any of its deployables) is
allocated. The agent's side is tested in
:mod:`cyborg.tests.functional.agent.test_programming`.
"""

from oslo_utils import uuidutils

from cyborg.db import api as db_api
from cyborg.tests.functional.conductor import test_binding


class TestShellUpdate(test_binding.BindTestCase):

    def _program(self):
        image = uuidutils.generate_uuid()
        self.api.deployable_program(self.ctx, self.deployable.uuid, image)
        return self.agent.called('program')[-1]

    def test_allowed_on_an_unallocated_card(self):
        self.assertTrue(self._program()['allow_shell'])

    def test_refused_while_another_function_of_the_card_is_bound(self):
        # A second deployable of the card (a topology's PF), bound.
        child = db_api.create(self.ctx, 'deployable', {
            'name': '0000:5e:00.2', 'num_accelerators': 1,
            'device_id': self.deployable.device_id,
            'parent_id': self.deployable.id, 'root_id': self.deployable.id,
            'driver_name': 'intel', 'rp_uuid': uuidutils.generate_uuid()})
        db_api.create(self.ctx, 'attribute', {
            'deployable_id': child.id, 'key': 'rc', 'value': 'FPGA'})
        db_api.create(self.ctx, 'attribute', {
            'deployable_id': child.id, 'key': 'trait0',
            'value': 'CUSTOM_FPGA_INTEL'})
        db_api.create(self.ctx, 'attach_handle', {
            'deployable_id': child.id, 'cpid_id': self.handles[0].cpid_id,
            'in_use': False, 'attach_type': 'PCI',
            'attach_info': {'domain': '0000', 'bus': '5e', 'device': '00',
                            'function': '3'}})
        arq = self._arqs({'resources:FPGA': '1'})[0]
        self._bind([arq], rp_uuid=child.rp_uuid)
        self.assertEqual('Bound', self._get(arq).state)
        # The region itself is free, so it may be programmed, but the
        # agent may not flash the shell under the bound function.
        self.assertFalse(self._program()['allow_shell'])
