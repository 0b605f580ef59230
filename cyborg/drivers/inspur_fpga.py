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
"""Inspur FPGA accelerator cards, passed through whole.

Cyborg does not program them: an instance gets the whole card and loads
its own bitstream. The card is found by its PCI vendor id and class
(processing accelerator); the traits and ``driver_name`` are those the
replaced service's Inspur driver reports, so device profiles written for
it still match.
"""

from cyborg.common import placement_names
from cyborg.drivers import base
from cyborg.drivers import cyborg17
from cyborg.drivers import report
from cyborg import states

VENDOR_ID = '1bd4'
#: PCI class 12: processing accelerators.
ACCELERATOR_CLASS = '12'
VENDOR_TRAIT = 'CUSTOM_FPGA_INSPUR'


def product_trait(product_id):
    return placement_names.custom_name('FPGA_PRODUCT_ID', product_id)


class InspurFpgaDriver(base.Driver):
    """Each Inspur accelerator function is one FPGA accelerator."""

    name = 'inspur_fpga_driver'
    pci_ids = frozenset([(VENDOR_ID, '*')])

    def reported_name(self, vendor_id):
        return cyborg17.vendor_name(cyborg17.PCI_VENDORS, vendor_id)

    def discover(self, pci_devices):
        return [
            report.whole_function(
                dev, self.reported_name(dev.vendor_id), states.DEVICE_FPGA,
                'Inspur FPGA %s' % dev.product_id, 'FPGA',
                [VENDOR_TRAIT, product_trait(dev.product_id)])
            for dev in pci_devices.values()
            if dev.vendor_id == VENDOR_ID and dev.physfn is None and
            dev.class_is(ACCELERATOR_CLASS)]
