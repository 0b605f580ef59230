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
"""The agent programs no FPGA region a running instance holds."""

from cyborg.agent import cyborg17_rpcapi
from cyborg.agent import manager
from cyborg.agent import resource_tracker
from cyborg.agent import rpcapi
from cyborg.common import service
from cyborg.conductor import rpcapi as conductor_rpcapi
from cyborg.drivers import base as drivers_base
from cyborg import exception
from cyborg.objects import base as objects_base
from cyborg.tests import base
from cyborg.tests import fixtures
from cyborg.tests import sysfs_tree

PAC = '0000:5e:00.0'
VF = '0000:5e:00.1'
IMAGE = '6e1c1d0a-3b39-4a4e-9a1c-6c0b1f0e2f11'


def _controlpath(address):
    """The control path of a card, as 17.0.0's conductor sent it."""
    domain, bus, rest = address.split(':')
    device, function = rest.split('.')
    return {'cpid_type': 'PCI', 'cpid_info': dict(
        domain=domain, bus=bus, device=device, function=function)}


class TestProgramInUse(base.TestCase):

    def setUp(self):
        super().setUp()
        # The card's VFs are bound to vfio-pci, ready to be assigned.
        self.tree = self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('intel_fpga', PAC, dict(vfs=2))])).tree
        self.useFixture(fixtures.RPC())
        tracker = resource_tracker.ResourceTracker(
            'host1', drivers_base.load(['intel_fpga_driver']),
            conductor_rpcapi.ConductorAPI())
        agent = service.RPCService(
            manager.AgentManager(tracker), rpcapi.TOPIC,
            objects_base.CyborgObjectSerializer(), host='host1')
        agent.start()
        self.addCleanup(agent.stop)
        self.api = rpcapi.AgentAPI()

    def test_region_whose_vf_a_guest_holds_is_refused(self):
        # QEMU opened the VF through VFIO: the kernel enabled it.
        self.tree.write(VF, 'enable', '1')
        error = self.assertRaises(
            exception.NotProgrammable, self.api.program, self.context,
            'host1', PAC, bitstream_id=IMAGE)
        self.assertIn('its PCI function %s is passed through to a running '
                      'instance' % VF, str(error))

    def test_card_passed_through_whole_is_refused(self):
        self.tree.bind(PAC, 'vfio-pci')
        self.tree.write(PAC, 'enable', '1')
        error = self.assertRaises(
            exception.NotProgrammable, self.api.program, self.context,
            'host1', PAC, function_name='nothing')
        self.assertIn(PAC + ' is passed through', str(error))

    def test_17_0_0_fpga_program_is_checked_the_same(self):
        # A call left in the queue of the 17.0.0 agent this one replaced
        # names the card by its control path: the same region is found,
        # and refused the same.
        self.tree.write(VF, 'enable', '1')
        legacy = cyborg17_rpcapi.AgentAPI()
        error = self.assertRaises(
            exception.NotProgrammable, legacy.fpga_program, self.context,
            'host1', _controlpath(PAC), IMAGE, 'intel_fpga_driver')
        self.assertIn('its PCI function %s is passed through' % VF,
                      str(error))
        error = self.assertRaises(
            exception.NotProgrammable, legacy.fpga_program, self.context,
            'host1', _controlpath('0000:86:00.0'), IMAGE,
            'intel_fpga_driver')
        self.assertIn('0000:86:00.0 cannot be programmed: no enabled driver '
                      'has an FPGA region behind that control path',
                      str(error))
