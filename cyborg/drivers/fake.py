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

For development and demonstrations without hardware: it reads nothing
from the host, so every pass reports exactly the same device until it is
programmed. Programming runs no tool; the card then reports the image and
its function like a real one.
"""

from cyborg.common import placement_names
from cyborg.drivers import base
from cyborg.drivers import fpga
from cyborg.drivers import report

#: The simulated card: its physical function and two virtual functions.
CARD = '0000:ff:00.0'
VFS = ('0000:ff:00.1', '0000:ff:00.2')
VENDOR = 'Fake'
BOARD = 'FAKE'
REGION_TYPE = 'f0e1d2c3b4a5968778695a4b3c2d1e0f'


class FakeDriver(base.Driver):
    """One FPGA region with two virtual functions, always."""

    name = 'fake_driver'

    def __init__(self):
        self._image_id = None
        self._function_id = None

    def discover(self, pci_devices):
        traits = [placement_names.custom_name('FPGA', VENDOR),
                  placement_names.region_trait(REGION_TYPE)]
        if self._function_id:
            traits.append(placement_names.function_trait(self._function_id))
        region = report.deployable(
            CARD, self.name, fpga.RESOURCE_CLASS, traits,
            [report.pci_handle(vf) for vf in VFS],
            bitstream_id=self._image_id)
        return [report.device('FPGA', 'fake', 'Fake FPGA', CARD, [region])]

    def fpga_regions(self, pci_devices):
        return {CARD: base.FpgaRegion(
            deployable_name=CARD, vendor=VENDOR, board=BOARD,
            region_type=REGION_TYPE, shell_ids=(REGION_TYPE,))}

    def program(self, region, bitstream_path, image):
        self._image_id = image['id']
        self._function_id = placement_names.normalize_id(
            image.get('function_uuid'))
