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
"""NVMe SSDs, passed through whole.

A drive the host itself uses (a namespace that is mounted, partitioned or
held by LVM, MD or device-mapper) is reported with an attach handle marked
in use, so it is shown but never handed to an instance.

Drives are recorded as the replaced service's NVMe SSD driver recorded
them: type ``SSD``, resource class ``CUSTOM_SSD`` and its traits
(``CUSTOM_SSD_<vendor>``, ``CUSTOM_SSD_PRODUCT_ID_<product id>``) beside
the descriptive ones, or with ``[agent] placement_names = descriptive``
``CUSTOM_NVME`` and the descriptive traits only.
"""

import os

from cyborg.common import placement_names
from cyborg.drivers import base
from cyborg.drivers import cyborg17
from cyborg.drivers import report

NVME_CLASS = '010802'
RESOURCE_CLASS = 'CUSTOM_NVME'
#: The resource class and device type of the replaced service.
CYBORG17_RESOURCE_CLASS = 'CUSTOM_SSD'
CYBORG17_DEVICE_TYPE = 'SSD'
#: Where the host's mounted file systems are listed.
MOUNTS = '/proc/self/mounts'

#: Vendor names of common NVMe makers; others show their PCI vendor id.
VENDORS = {
    '144d': 'SAMSUNG',
    '8086': 'INTEL',
    '15b7': 'WESTERN_DIGITAL',
    '1c5c': 'SK_HYNIX',
    '1344': 'MICRON',
    '1e0f': 'KIOXIA',
    '1bd4': 'INSPUR',
}


def _mounted_devices():
    try:
        with open(MOUNTS) as f:
            return {os.path.basename(line.split()[0]) for line in f
                    if line.startswith('/dev/')}
    except FileNotFoundError:
        return set()


def host_uses(dev, mounted):
    """Whether the host uses a namespace of the drive ``dev``.

    A namespace is in use when it or one of its partitions is mounted,
    when it has partitions at all, or when another block device holds it.
    """
    if dev.driver != 'nvme':
        # Unbound or bound to vfio-pci: the host cannot be using it.
        return False
    for ns in dev.glob('nvme/nvme*/nvme*n*'):
        name = os.path.basename(ns)
        partitions = [p for p in os.listdir(ns) if p.startswith(name + 'p')]
        holders = os.path.join(ns, 'holders')
        if (partitions or name in mounted or
                (os.path.isdir(holders) and os.listdir(holders))):
            return True
    return False


class NvmeSsdDriver(base.Driver):
    """Each NVMe controller is one device and one accelerator."""

    name = 'nvme_ssd_driver'
    # The driver takes any NVMe controller (it goes by PCI class); name the
    # vendors it knows, which a whitelist entry can collide with.
    pci_ids = frozenset((vendor, '*') for vendor in VENDORS)

    def reported_name(self, vendor_id):
        return cyborg17.vendor_name(cyborg17.SSD_VENDORS, vendor_id)

    def discover(self, pci_devices):
        drives = [dev for dev in pci_devices.values()
                  if dev.class_code == NVME_CLASS and dev.physfn is None]
        mounted = _mounted_devices() if drives else set()
        devices = []
        for dev in drives:
            vendor = VENDORS.get(dev.vendor_id, dev.vendor_id)
            model = next(iter(dev.read_all('nvme/nvme*/model')),
                         '%s:%s' % (dev.vendor_id, dev.product_id))
            resource_class, traits = cyborg17.names(
                RESOURCE_CLASS,
                ['CUSTOM_NVME', placement_names.custom_name('NVME', vendor)],
                CYBORG17_RESOURCE_CLASS,
                cyborg17.vendor_product_traits('SSD', cyborg17.SSD_VENDORS,
                                               dev))
            deployable = report.deployable(
                dev.address, self.reported_name(dev.vendor_id),
                resource_class, traits,
                [report.pci_handle(dev.address,
                                   in_use=host_uses(dev, mounted))])
            devices.append(report.device(
                CYBORG17_DEVICE_TYPE, dev.vendor_id, model, dev.address,
                [deployable], std_board_info=report.std_board_info(dev)))
        return devices
