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
"""Virtual functions of Intel Ethernet NICs (SR-IOV).

Any Intel Ethernet physical function with virtual functions enabled is a
device whose VFs instances get; the physical function keeps carrying the
host's own traffic and is never offered. ``[nic] physical_device_mappings``
says which physical network each port is cabled to (or, when it is empty,
the groups that the replaced service's ``[nic_devices] enabled_nic_types``
names).
"""

import os

from cyborg.common import placement_names
import cyborg.conf
from cyborg.conf import nic_devices
from cyborg.drivers import base
from cyborg.drivers import report
from cyborg import exception
from cyborg.i18n import _

CONF = cyborg.conf.CONF

VENDOR_ID = '8086'
ETHERNET_CLASS = '0200'
RESOURCE_CLASS = 'CUSTOM_NIC_VF'

#: Model names of common SR-IOV capable controllers, by PF product id.
MODELS = {
    '10fb': '82599ES',
    '1572': 'X710',
    '1583': 'XL710',
    '1584': 'XL710',
    '158b': 'XXV710',
    '37d2': 'X722',
    '1592': 'E810-C',
    '1593': 'E810-C',
    '159b': 'E810-XXV',
}


def physnet_trait(physnet):
    return placement_names.custom_name('PHYSNET', physnet)


def parse_mappings(mappings):
    """``[nic] physical_device_mappings`` as {interface: physical network}.

    :raises InvalidParameterValue: an entry is not ``<network>:<iface>``,
        or an interface is mapped twice.
    """
    result = {}
    for entry in mappings:
        physnet, sep, iface = entry.partition(':')
        if not (sep and physnet.strip() and iface.strip()):
            raise exception.InvalidParameterValue(
                name='[nic] physical_device_mappings',
                reason=_('%r is not <physical_network>:<interface>') % entry)
        if iface.strip() in result:
            raise exception.InvalidParameterValue(
                name='[nic] physical_device_mappings',
                reason=_('interface %s is mapped twice') % iface.strip())
        result[iface.strip()] = physnet.strip()
    return result


def configured_mappings():
    """``[nic] physical_device_mappings``, else those of the NIC types.

    The groups of ``[nic_devices] enabled_nic_types`` hold the mappings in
    configuration files written for the replaced service.
    """
    if CONF.nic.physical_device_mappings:
        return list(CONF.nic.physical_device_mappings)
    nic_devices.register_type_opts(CONF)
    return [mapping for group in CONF.nic_devices.enabled_nic_types
            for mapping in CONF[group].physical_device_mappings]


class IntelNicDriver(base.Driver):
    """SR-IOV VFs of Intel NICs, with the port's physical network."""

    name = 'intel_nic_driver'
    # Every Intel Ethernet function with SR-IOV VFs, whatever its model.
    pci_ids = frozenset([(VENDOR_ID, '*')])

    def __init__(self):
        self.physnets = parse_mappings(configured_mappings())

    def discover(self, pci_devices):
        devices = []
        for pf in pci_devices.values():
            if (pf.vendor_id != VENDOR_ID or not pf.virtfns or
                    not pf.class_is(ETHERNET_CLASS)):
                continue
            ifaces = [os.path.basename(p) for p in pf.glob('net/*')]
            physnet = next((self.physnets[i] for i in ifaces
                            if i in self.physnets), None)
            model = MODELS.get(pf.product_id, pf.product_id)
            traits = ['CUSTOM_NIC_INTEL',
                      placement_names.custom_name('NIC_INTEL', model)]
            extra = {}
            if physnet:
                traits.append(physnet_trait(physnet))
                extra['physical_network'] = physnet
            deployable = report.deployable(
                pf.address, self.name, RESOURCE_CLASS, traits,
                [report.pci_handle(vf, **extra) for vf in pf.virtfns])
            devices.append(report.device(
                'NIC', VENDOR_ID, 'Intel Ethernet %s' % model, pf.address,
                [deployable], std_board_info=report.std_board_info(pf),
                vendor_board_info={'interfaces': ifaces}))
        return devices
