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
"""What openstack-cyborg 17.0.0's drivers report for given cards.

Not part of our code: ``test_cyborg17_names`` runs this file with the
Python of the virtualenv that holds openstack-cyborg 17.0.0, so every
``cyborg`` below is that package. It reads a JSON list of cards on stdin
and prints, as JSON, what the driver of each reports: per device its type
and vendor, per deployable its name, ``driver_name``, resource class,
traits and attach handle addresses.

17.0.0's drivers read the host through ``lspci`` and fixed ``/sys``
paths. Where they read ``lspci``, its output is given and the whole
discovery runs; elsewhere the functions that turn what they read into
reports are called with what they would have read of the card.
"""

import json
import sys
from unittest import mock

from cyborg.accelerator.common import utils
from cyborg.accelerator.drivers.aichip.huawei import ascend
from cyborg.accelerator.drivers.fpga.inspur import sysinfo as inspur
from cyborg.accelerator.drivers.fpga.intel import sysinfo as intel_fpga
from cyborg.accelerator.drivers.fpga.xilinx import sysinfo as xilinx
from cyborg.accelerator.drivers.gpu.nvidia import sysinfo as gpu
from cyborg.accelerator.drivers.nic.intel import sysinfo as nic
from cyborg.accelerator.drivers.pci.pci import sysinfo as pci
from cyborg.accelerator.drivers.pci import utils as pci_utils
from cyborg.accelerator.drivers.qat.intel import sysinfo as qat
from cyborg.accelerator.drivers.ssd import utils as ssd
from cyborg.common import constants
from cyborg.conf import CONF

HOST = 'compute-17'


def _lspci(card):
    """Discovery of an lspci-reading driver, given lspci's lines."""
    text = '\n'.join(card['lspci'])
    with mock.patch.object(utils, 'lspci_privileged', return_value=text), \
            mock.patch.object(pci_utils, 'get_pci_devices',
                              return_value=(text, '')):
        return {
            'nvidia_gpu': lambda: gpu.discover('10de'),
            'pci': pci.discover,
            'nvme_ssd': lambda: ssd.discover_ssds('1bd4'),
            'inspur_fpga': inspur.fpga_tree,
            'xilinx_fpga': xilinx.fpga_tree,
            'huawei_ascend': ascend.AscendDriver().discover,
        }[card['driver']]()


def _vgpu(card):
    """A GPU offering one vGPU type, as ``_discover_gpus`` makes it."""
    # How _discover_gpus turns the type's sysfs name into the trait's.
    type_name = card['type_name'].split(' ')[1].replace('-', '_')
    info = dict(vendor_id='10de', device_id=card['product_id'],
                address=card['address'], hostname=HOST,
                rc=constants.RESOURCES['VGPU'], vGPU_type=card['mdev_type'],
                **gpu._get_traits('10de', card['product_id'], type_name))
    with mock.patch.object(gpu.os, 'listdir', return_value=[]), \
            mock.patch('builtins.open',
                       mock.mock_open(read_data=str(card['instances']))):
        return [gpu._generate_driver_device(info)]


def _nic(card):
    """An Intel NIC port and its VFs, as ``nic_tree`` makes them."""
    physnets = utils.parse_mappings(card.get('physnets', []))
    functions = utils.parse_mappings(card.get('functions', []))

    def nic_gen(address, product, pf=None):
        # What nic_gen() reads of a PF or VF.
        info = {'name': HOST + '_' + address, 'device': address,
                'type': 'NIC', 'vendor': '0x8086', 'product_id': product,
                'rc': 'CUSTOM_NIC', 'stub': False}
        info.update(nic.get_physical_network_and_traits(
            {'PCI_SLOT_NAME': address}, physnets, functions, pf))
        return info

    with mock.patch.object(utils, 'get_ifname_by_pci_address',
                           return_value=card['ifname']):
        port = nic_gen(card['address'], '0x' + card['product_id'])
        if card['vfs']:
            port['vfs'] = [nic_gen(vf, '0x154c', port) for vf in card['vfs']]
    return [nic._generate_driver_device(port)]


def _qat(card):
    """A QAT card and its VFs, as ``qat_tree`` makes them."""
    def qat_gen(address, product):
        # What qat_gen() reads of a PF or VF.
        return {'name': HOST + '_' + address, 'device': address,
                'type': 'QAT', 'vendor': '0x8086', 'product_id': product,
                'rc': qat.RESOURCES['qat'], 'stub': False}

    card_info = qat_gen(card['address'], '0x37c8')
    if card['vfs']:
        card_info['vfs'] = [qat_gen(vf, '0x37c9') for vf in card['vfs']]
    return [qat._generate_driver_device(card_info)]


def _intel_fpga(card):
    """A PAC Arria 10 without VFs, as ``fpga_tree`` makes it."""
    with mock.patch.object(intel_fpga, 'get_afu_ids',
                           return_value=card['afu_ids']), \
            mock.patch.object(intel_fpga, 'get_region_ids',
                              return_value=card['region_ids']):
        traits = intel_fpga.get_traits('intel-fpga-dev.0', '0x09c4',
                                       vf=False)
    info = {'type': 'FPGA', 'devices': card['address'], 'stub': False,
            'name': HOST + '_' + card['address'], 'vendor': '0x8086',
            'product_id': '0x09c4', 'rc': 'FPGA', **traits}
    return [intel_fpga._generate_driver_device(info, False)]


def _address(info):
    info = json.loads(info) if isinstance(info, str) else info
    return '%(domain)s:%(bus)s:%(device)s.%(function)s' % info


def _plain(device):
    deployables = []
    for dep in device.deployable_list:
        # The Ascend driver sets no attributes at all.
        attributes = ({a.key: a.value for a in dep.attribute_list}
                      if dep.obj_attr_is_set('attribute_list') else {})
        deployables.append({
            'name': dep.name, 'driver_name': dep.driver_name,
            'rc': attributes.pop('rc', None),
            'traits': sorted(attributes.values()),
            'handles': [_address(h.attach_info)
                        for h in dep.attach_handle_list]})
    return {'type': device.type, 'vendor': device.vendor,
            'deployables': deployables}


def main():
    CONF([], project='cyborg')
    CONF.set_override('host', HOST)
    handlers = {'nic': _nic, 'qat': _qat, 'vgpu': _vgpu,
                'intel_fpga': _intel_fpga}
    out = []
    for card in json.load(sys.stdin):
        CONF.set_override('passthrough_whitelist', card.get('whitelist', []),
                          group='pci')
        handler = handlers.get(card['driver'], _lspci)
        out.append([_plain(device) for device in handler(card)])
    json.dump(out, sys.stdout)


if __name__ == '__main__':
    main()
