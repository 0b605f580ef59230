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
"""Xilinx Alveo cards through the Xilinx Runtime (XRT) drivers.

An Alveo card shows two PCI functions: the management function (function
0, driver ``xclmgmt``) and the user function (function 1, driver
``xocl``). They are one device with one deployable, both named after the
management function, as in the replaced service; the management function
is the control path and instances get the user function. The shell's
``logic_uuids`` identify the loaded shell partitions and the first of its
``interface_uuids`` the type of its user region; the user function shows
the loaded xclbin's uuid. XRT's ``xbmgmt`` loads images: a bind always
into the user partition (``--user``); the shell only in an operator's
shell update (see :meth:`XilinxFpgaDriver.command`).
"""

from cyborg.common import pci_address
from cyborg.common import placement_names
import cyborg.conf
from cyborg.drivers import base
from cyborg.drivers import cyborg17
from cyborg.drivers import fpga
from cyborg import exception
from cyborg.i18n import _
from cyborg.privsep import vendor_tool

CONF = cyborg.conf.CONF

VENDOR_ID = '10ee'

#: Management function product ids: (model, board as bitstreams name it).
#: The user function's product id is the next one.
CARDS = {
    '5000': ('Xilinx Alveo U200', 'U200'),
    '5004': ('Xilinx Alveo U250', 'U250'),
    '500c': ('Xilinx Alveo U280', 'U280'),
    '5020': ('Xilinx Alveo U50', 'U50'),
    '505c': ('Xilinx Alveo U55C', 'U55C'),
}


def _uuids(dev, name):
    """The uuids listed one per line in a device file, in file order."""
    text = next(iter(dev.read_all(name)), '')
    ids = map(placement_names.normalize_id, text.splitlines())
    return tuple(u for u in ids if u)


class XilinxFpgaDriver(fpga.FpgaDriver):
    """Alveo cards: management and user function as one device."""

    name = 'xilinx_fpga_driver'
    pci_ids = frozenset((VENDOR_ID, product) for product in CARDS)
    kernel_drivers = frozenset(('xclmgmt',))
    vendor = 'Xilinx'
    tool = 'xbmgmt'

    def reported_name(self, vendor_id):
        return cyborg17.vendor_name(cyborg17.PCI_VENDORS, vendor_id)

    def cards(self, pci_devices):
        cards = []
        for mgmt in pci_devices.values():
            if mgmt.vendor_id != VENDOR_ID or mgmt.product_id not in CARDS:
                continue
            user = pci_devices.get(pci_address.offset(mgmt.address, 1))
            if user is None or user.vendor_id != VENDOR_ID:
                continue
            model, board = CARDS[mgmt.product_id]
            vbnv = mgmt.read_all('rom.*/VBNV')
            cards.append(fpga.Card(
                controlpath=mgmt, port=user, model=model,
                region=base.FpgaRegion(
                    deployable_name=mgmt.address, vendor=self.vendor,
                    board=board,
                    region_type=next(iter(_uuids(mgmt, 'interface_uuids')),
                                     None),
                    shell_ids=_uuids(mgmt, 'logic_uuids')),
                function_ids=placement_names.normalize_ids(user.read_all(
                    'xclbinuuid')),
                vendor_board_info={'vbnv': vbnv[0]} if vbnv else None,
                # The replaced service's trait, of the management function.
                traits=(placement_names.custom_name('FPGA_PRODUCT_ID',
                                                    mgmt.product_id),)))
        return cards

    def command(self, region, bitstream_path, image, allow_shell=False):
        # A bind loads the user partition, whatever the image says: the
        # shell is persistent flash that outlives the tenant and reboots.
        # Only an image that declares itself a shell image, in an
        # operator's shell update (allow_shell), goes into the shell.
        partition = vendor_tool.USER
        if fpga.is_shell_image(image):
            if not allow_shell:
                raise exception.BitstreamRejected(
                    image=image['id'], deployable=region.deployable_name,
                    reason=_('it is a shell image (%s): only an '
                             "operator's shell update of an unallocated "
                             'card flashes one, never a bind')
                    % fpga.SHELL_IMAGE_PROPERTY)
            partition = vendor_tool.SHELL
        return {'tool': 'xbmgmt', 'device': region.deployable_name,
                'bitstream': bitstream_path, 'partition': partition}
