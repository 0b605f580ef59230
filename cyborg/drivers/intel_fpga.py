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
"""Intel FPGA cards (PAC Arria 10, PAC D5005, PAC N3000) through OPAE.

Both kernel drivers are read: the out-of-tree ``intel-fpga`` driver and the
upstream DFL drivers. The FPGA Management Engine shows the partial
reconfiguration interface id of the loaded shell (FIM), which is the
region's type; each port shows the id of its loaded accelerator function
(AFU). OPAE's ``fpgaconf`` loads partial bitstreams (green bitstreams).

Besides the region and function traits, a card has those the replaced
service gave (``CUSTOM_FPGA_REGION_INTEL_<id>``,
``CUSTOM_FPGA_FUNCTION_ID_INTEL_<id>``), unless ``[agent] placement_names``
is ``descriptive``.
"""

from cyborg.common import placement_names
import cyborg.conf
from cyborg.drivers import base
from cyborg.drivers import cyborg17
from cyborg.drivers import fpga
from cyborg import exception
from cyborg.i18n import _

CONF = cyborg.conf.CONF

VENDOR_ID = '8086'
#: The ``driver_name`` of the replaced service.
CYBORG17_DRIVER_NAME = 'intel'
#: The AFU id of a port that holds no function.
_NO_FUNCTION = '0' * 32

#: Physical function product ids: (model, board as bitstreams name it).
CARDS = {
    '09c4': ('Intel PAC Arria 10 GX', 'PAC_ARRIA10'),
    'bcc0': ('Intel PAC Arria 10 GX', 'PAC_ARRIA10'),
    '0b2b': ('Intel PAC D5005', 'D5005'),
    '0b30': ('Intel PAC N3000', 'N3000'),
}

#: Where each kernel driver shows the PR interface id, and the AFU ids.
_INTERFACE_ID = (
    'fpga/intel-fpga-dev.*/intel-fpga-fme.*/pr/interface_id',
    'fpga_region/region*/dfl-fme.*/dfl-fme-region.*/fpga_region/region*/'
    'compat_id',
)
_AFU_ID = (
    'fpga/intel-fpga-dev.*/intel-fpga-port.*/afu_id',
    'fpga_region/region*/dfl-port.*/afu_id',
)


class IntelFpgaDriver(fpga.FpgaDriver):
    """Intel PAC cards: one region per card, its VFs as attach handles.

    The loaded shell is identified by its PR interface id, so an image's
    ``shell_id`` and ``region_uuid`` are both compared with it.
    """

    name = 'intel_fpga_driver'
    pci_ids = frozenset((VENDOR_ID, product) for product in CARDS)
    kernel_drivers = frozenset(('dfl-pci', 'intel-fpga-pci'))
    # The FME's and the port's error registers, in both kernel drivers'
    # layouts (inject_errors is written, not read).
    error_files = tuple(
        base + name
        for base in ('fpga_region/region*/dfl-fme.*/errors/',
                     'fpga/intel-fpga-dev.*/intel-fpga-fme.*/errors/')
        for name in ('catfatal_errors', 'fatal_errors', 'nonfatal_errors',
                     'pcie0_errors', 'pcie1_errors')) + (
        'fpga_region/region*/dfl-port.*/errors/errors',
        'fpga/intel-fpga-dev.*/intel-fpga-port.*/errors/errors')
    vendor = 'Intel'
    tool = 'fpgaconf'

    def reported_name(self, vendor_id):
        return CYBORG17_DRIVER_NAME

    def reported_vendor(self, vendor_id):
        return cyborg17.hex_id(vendor_id)

    def cyborg17_traits(self, region, function_ids):
        # The replaced service made a trait of the all-zero id a port
        # shows while no function is loaded, too.
        traits = [placement_names.custom_name('FPGA_FUNCTION_ID_INTEL', f)
                  for f in function_ids or [_NO_FUNCTION]]
        if region.region_type:
            traits.append(placement_names.custom_name(
                'FPGA_REGION_INTEL', region.region_type))
        return traits

    def cards(self, pci_devices):
        cards = []
        for dev in pci_devices.values():
            if (dev.vendor_id != VENDOR_ID or dev.physfn is not None or
                    dev.product_id not in CARDS):
                continue
            model, board = CARDS[dev.product_id]
            interface_id = placement_names.normalize_id(
                next(iter(dev.read_all(*_INTERFACE_ID)), None))
            # With SR-IOV on, the port and its AFU move to the VF.
            function_ids = []
            for function in (dev.address,) + dev.virtfns:
                if function in pci_devices:
                    function_ids.extend(
                        pci_devices[function].read_all(*_AFU_ID))
            cards.append(fpga.Card(
                controlpath=dev, port=dev, model=model,
                region=base.FpgaRegion(
                    deployable_name=dev.address, vendor=self.vendor,
                    board=board, region_type=interface_id,
                    shell_ids=(interface_id,) if interface_id else ()),
                function_ids=placement_names.normalize_ids(function_ids)))
        return cards

    def command(self, region, bitstream_path, image, allow_shell=False):
        # Every seed-002 image names its board: one without shell_id is a
        # shell. An image without that metadata (made for the replaced
        # service) is loaded as that service loaded every image.
        if fpga.is_shell_image(image) or (image.get('board') and
                                          not image.get('shell_id')):
            raise exception.BitstreamRejected(
                image=image['id'], deployable=region.deployable_name,
                reason=_('it is a shell (FIM) image, and fpgaconf loads '
                         'partial bitstreams only'))
        return {'tool': 'fpgaconf', 'device': region.deployable_name,
                'bitstream': bitstream_path, 'partition': None}
