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
"""Huawei Ascend AI processors (NPUs), passed through whole.

Each Ascend PCI function is one accelerator of resource class
``CUSTOM_AICHIP``. The replaced service's Ascend driver found only the
Ascend 310 (product ``d100``) and reported no resource class, so its
devices never reached Placement; this one reports the Ascend models below,
with that service's ``driver_name``.
"""

from cyborg.common import placement_names
from cyborg.drivers import base
from cyborg.drivers import report

VENDOR_ID = '19e5'
RESOURCE_CLASS = 'CUSTOM_AICHIP'
VENDOR_TRAIT = 'CUSTOM_AICHIP_HUAWEI'
#: The ``driver_name`` of the replaced service.
CYBORG17_DRIVER_NAME = 'huawei'
DEVICE_TYPE = 'AICHIP'

#: Product ids of the Ascend processors, and their model names.
MODELS = {
    'd100': 'Ascend 310',
    'd500': 'Ascend 310P',
    'd801': 'Ascend 910',
}


class HuaweiAscendDriver(base.Driver):
    """Ascend processors as ``CUSTOM_AICHIP``, one per PCI function."""

    name = 'huawei_ascend_driver'
    pci_ids = frozenset((VENDOR_ID, product) for product in MODELS)

    def reported_name(self, vendor_id):
        return CYBORG17_DRIVER_NAME

    def discover(self, pci_devices):
        devices = []
        for dev in pci_devices.values():
            if (dev.vendor_id != VENDOR_ID or dev.physfn is not None or
                    dev.product_id not in MODELS):
                continue
            model = MODELS[dev.product_id]
            devices.append(report.whole_function(
                dev, self.reported_name(dev.vendor_id), DEVICE_TYPE,
                'Huawei ' + model, RESOURCE_CLASS,
                [VENDOR_TRAIT, placement_names.custom_name('AICHIP', model)]))
        return devices
