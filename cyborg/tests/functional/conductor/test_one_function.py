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
"""No PCI function is ever bound to two ARQs, whatever the reports say.

The quickstart reproduction: an image's topology put a VF of the FPGA
region 0000:5e:00.0 at the generic PCI card's address 0000:d8:00.0, and
two ARQs, one through each device, were both bound to that one function.
Reports naming a function twice give it one handle; handles that exist
twice all the same are never both claimed.
"""

from cyborg.common import pci_address
from cyborg.conductor import inventory_plan
from cyborg.db import api as db_api
from cyborg import states
from cyborg.tests.functional.conductor import test_binding

GENERIC = '0000:d8:00.0'


def _parts(address):
    return dict(zip(pci_address.PARTS,
                    address.replace('.', ':').split(':')))


def _device(address, functions, rc):
    return {
        'type': 'FPGA', 'vendor': '8086', 'model': 'card',
        'std_board_info': None, 'vendor_board_info': None,
        'cpid_type': 'PCI', 'cpid_info': _parts(address),
        'deployables': [{
            'name': address, 'parent_name': None,
            'num_accelerators': len(functions), 'driver_name': 'd',
            'bitstream_id': None, 'attributes': [('rc', rc)],
            'attach_handles': [{'attach_type': 'PCI',
                                'attach_info': _parts(f), 'in_use': False}
                               for f in functions]}]}


class TestOneFunction(test_binding.BindTestCase):

    def _handles(self, function):
        return [h for h in db_api.get_all(self.ctx, 'attach_handle')
                if pci_address.address_of(h.attach_info) == function]

    def test_a_function_two_devices_report_gets_one_handle(self):
        fpga = _device('0000:5e:00.0', ['0000:5e:00.1', GENERIC], 'FPGA')
        generic = _device(GENERIC, [GENERIC], 'CUSTOM_PCI')
        for report in ([fpga, generic], [generic, fpga], [fpga]):
            inventory_plan.apply(self.ctx, 'host2', report)
            (handle,) = self._handles(GENERIC)
            owner = db_api.get_by_id(self.ctx, 'deployable',
                                     handle.deployable_id)
            # Its own device keeps it while reported.
            self.assertEqual(GENERIC if len(report) == 2
                             else '0000:5e:00.0', owner.name)
        inventory_plan.apply(self.ctx, 'host2', [fpga, generic])
        self.assertEqual(1, len(self._handles(GENERIC)))
        self.assertIn('Host host2 reports PCI function %s under deployable '
                      '0000:5e:00.0 of device 0000:5e:00.0, but deployable '
                      '%s of device %s has it' % (GENERIC, GENERIC, GENERIC),
                      self.log.output)
        region = db_api.get_all(self.ctx, 'deployable',
                                filters={'name': '0000:5e:00.0'})[0]
        self.assertEqual(1, region.num_accelerators)

    def _bound_functions(self, arqs):
        functions = []
        for arq in arqs:
            arq = self._get(arq)
            if arq.state == states.BOUND:
                handle = db_api.get_by_id(self.ctx, 'attach_handle',
                                          arq.attach_handle_id)
                functions.append(pci_address.address_of(handle.attach_info))
        return functions

    def test_a_function_with_two_handles_is_bound_once(self):
        # The FPGA's deployable offers 0000:5e:00.1 and .2; another
        # device's offers 0000:5e:00.1 too (rows a report never makes).
        other, _ = self._tree('host1', '0000:5e:00.4', handles=1)
        first = self._arqs({'resources:FPGA': '1'})[0]
        second = self._arqs({'resources:FPGA': '1'})[0]
        self._bind([first], rp_uuid=other.rp_uuid)
        self._bind([second])
        self.assertEqual(['0000:5e:00.1', '0000:5e:00.2'],
                         sorted(self._bound_functions([first, second])))
        # The function is taken: the other device has nothing left.
        third = self._arqs({'resources:FPGA': '1'})[0]
        fourth = self._arqs({'resources:FPGA': '1'})[0]
        self._bind([third])
        self.assertEqual(states.BIND_FAILED, self._get(third).state)
        self._bind([fourth], rp_uuid=other.rp_uuid)
        self.assertEqual(states.BIND_FAILED, self._get(fourth).state)
        functions = self._bound_functions([first, second, third, fourth])
        self.assertEqual(len(functions), len(set(functions)))
        self.assertIn('its PCI function 0000:5e:00.1 is in use through '
                      'attach handle', self.log.output)
