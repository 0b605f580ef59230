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
from the host, so every pass reports exactly the same device.
"""

from cyborg.drivers import base
from cyborg.drivers import report

#: The simulated card: its physical function and two virtual functions.
CARD = '0000:ff:00.0'
VFS = ('0000:ff:00.1', '0000:ff:00.2')
REGION_TYPE = 'f0e1d2c3b4a5968778695a4b3c2d1e0f'
VENDOR_TRAIT = 'CUSTOM_FPGA_FAKE'


class FakeDriver(base.Driver):
    """One FPGA region with two virtual functions, always."""

    name = 'fake_driver'

    def discover(self, pci_devices):
        region = report.deployable(
            CARD, self.name, 'FPGA',
            [VENDOR_TRAIT, report.custom_name('FPGA_REGION', REGION_TYPE)],
            [report.pci_handle(vf) for vf in VFS])
        return [report.device('FPGA', 'fake', 'Fake FPGA', CARD, [region])]
