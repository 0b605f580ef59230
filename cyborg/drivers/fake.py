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
"""A driver that reports the same simulated FPGA on every host.

For development, CI and demonstrations without hardware. It reports what
the fake driver of the service Cyborg replaces reports, because devstack
jobs, Tempest and Nova's functional tests ask for exactly that device
(``resources:FPGA`` with ``trait:CUSTOM_FAKE_DEVICE``): one FPGA
deployable, ``FakeDevice``, with 16 accelerators whose ``TEST_PCI`` attach
handles Nova's virt drivers skip when attaching. It reads nothing from the
host. Programming runs no tool; the deployable then reports the image and
its function like a real FPGA.
"""

from cyborg.common import placement_names
from cyborg.drivers import base
from cyborg.drivers import report
from cyborg.objects import driver_report
from cyborg import states

#: The control path: a PCI address that no real device needs to have.
CONTROLPATH = '0000:0c:00.0'
DEPLOYABLE = 'FakeDevice'
NUM_ACCELERATORS = 16
#: The trait and the ``driver_name`` the replaced service reports; the
#: trait attribute's key is spelled the way it spelled it, too.
TRAIT = 'CUSTOM_FAKE_DEVICE'
TRAIT_KEY = 'traits1'
DRIVER_NAME = 'fake'
#: Device fields, as the replaced service reports them.
VENDOR_ID = '0xABCD'
MODEL = 'miss model info'
STD_BOARD_INFO = '{"device_id": "0xabcd", "class": "Fake class"}'
VENDOR_BOARD_INFO = 'fake_vendor_info'
#: What a bitstream image names to fit the fake region (seed 002).
VENDOR = 'fake'
BOARD = DEPLOYABLE
REGION_TYPE = 'f0e1d2c3b4a5968778695a4b3c2d1e0f'
#: PCI functions per device number, for numbering the attach handles.
_FUNCTIONS = 8


def _handle(number):
    """Attach handle ``number`` (from 1): function ``number`` of bus 0c.

    Device and function are decimal without padding, as the replaced
    service writes them; function 0 of device 0 is the control path.
    """
    return driver_report.AttachHandleReport(
        attach_type=states.ATTACH_TEST_PCI,
        attach_info={'domain': '0000', 'bus': '0c',
                     'device': str(number // _FUNCTIONS),
                     'function': str(number % _FUNCTIONS)})


class FakeDriver(base.Driver):
    """One FPGA deployable with 16 test accelerators, always."""

    name = 'fake_driver'

    def reported_name(self, vendor_id):
        return DRIVER_NAME

    def __init__(self):
        self._image_id = None
        self._function_id = None

    def discover(self, pci_devices):
        deployable = report.deployable(
            DEPLOYABLE, DRIVER_NAME, 'FPGA', [],
            [_handle(n) for n in range(1, NUM_ACCELERATORS + 1)],
            bitstream_id=self._image_id)
        # The trait attribute keeps the replaced service's key.
        deployable.attributes.append(
            driver_report.AttributeReport(key=TRAIT_KEY, value=TRAIT))
        if self._function_id:
            deployable.attributes.append(driver_report.AttributeReport(
                key='trait2',
                value=placement_names.function_trait(self._function_id)))
        return [report.device(
            states.DEVICE_FPGA, VENDOR_ID, MODEL, CONTROLPATH, [deployable],
            std_board_info=STD_BOARD_INFO,
            vendor_board_info=VENDOR_BOARD_INFO)]

    def fpga_regions(self, pci_devices):
        return {DEPLOYABLE: base.FpgaRegion(
            deployable_name=DEPLOYABLE, vendor=VENDOR, board=BOARD,
            region_type=REGION_TYPE, shell_ids=(REGION_TYPE,))}

    def program(self, region, bitstream_path, image):
        self._image_id = image['id']
        self._function_id = base.image_function_id(image)
