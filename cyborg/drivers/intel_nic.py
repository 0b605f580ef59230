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
"""Intel Ethernet NICs: their SR-IOV virtual functions, or whole ports.

The driver takes the Intel Ethernet physical functions (ports) whose
product id ``[nic] product_ids`` lists (the X710 and XXV710 by default, as
the replaced service did). A port with virtual functions (VFs) offers them
and keeps carrying the host's own traffic; a port without VFs is offered
itself. The ``device_addresses`` of the groups that ``[nic_devices]
enabled_nic_types`` names narrow that to some ports or VFs.

Each VF is a deployable of its own, as in the replaced service, unless
``[agent] group_virtual_functions`` makes the port's VFs the attach handles
of one deployable. ``[nic] physical_device_mappings`` says which physical
network each port is cabled to (or, when it is empty, the groups of
``enabled_nic_types`` do); their ``function_device_mappings`` give ports a
function trait.
"""

import os

from cyborg.common import pci_address
from cyborg.common import placement_names
import cyborg.conf
from cyborg.conf import nic_devices
from cyborg.drivers import base
from cyborg.drivers import cyborg17
from cyborg.drivers import report
from cyborg import exception
from cyborg.i18n import _

CONF = cyborg.conf.CONF

VENDOR_ID = '8086'
ETHERNET_CLASS = '0200'
VF_RESOURCE_CLASS = 'CUSTOM_NIC_VF'
PF_RESOURCE_CLASS = 'CUSTOM_NIC_PF'
#: The resource class and ``driver_name`` of the replaced service.
CYBORG17_RESOURCE_CLASS = 'CUSTOM_NIC'
CYBORG17_DRIVER_NAME = 'intel'
#: Any product id, in ``[nic] product_ids``.
ANY = '*'

#: Model names of common SR-IOV capable controllers, by PF product id.
MODELS = {
    '10fb': '82599ES',
    '1572': 'X710',
    '1583': 'XL710',
    '1584': 'XL710',
    '158a': 'XXV710',
    '158b': 'XXV710',
    '37d2': 'X722',
    '1592': 'E810-C',
    '1593': 'E810-C',
    '159b': 'E810-XXV',
}


def physnet_trait(physnet):
    return placement_names.custom_name('PHYSNET', physnet)


def parse_mappings(mappings, option='[nic] physical_device_mappings'):
    """``<name>:<interface>`` pairs as {interface: name}.

    :raises InvalidParameterValue: an entry is not ``<name>:<iface>``,
        or an interface is mapped twice.
    """
    result = {}
    for entry in mappings:
        name, sep, iface = entry.partition(':')
        if not (sep and name.strip() and iface.strip()):
            raise exception.InvalidParameterValue(
                name=option,
                reason=_('%r is not <name>:<interface>') % entry)
        if iface.strip() in result:
            raise exception.InvalidParameterValue(
                name=option,
                reason=_('interface %s is mapped twice') % iface.strip())
        result[iface.strip()] = name.strip()
    return result


def _type_options(option):
    """{group: its ``option``} of the ``enabled_nic_types`` groups."""
    nic_devices.register_type_opts(CONF)
    return {group: CONF[group][option]
            for group in CONF.nic_devices.enabled_nic_types}


def configured_mappings():
    """``[nic] physical_device_mappings``, else those of the NIC types.

    The groups of ``[nic_devices] enabled_nic_types`` hold the mappings in
    configuration files written for the replaced service.
    """
    if CONF.nic.physical_device_mappings:
        return list(CONF.nic.physical_device_mappings)
    return [mapping for mappings in
            _type_options('physical_device_mappings').values()
            for mapping in mappings]


def configured_addresses():
    """The ``device_addresses`` of the NIC types, checked; empty for all.

    :raises InvalidParameterValue: one is not a PCI address.
    """
    addresses = set()
    for group, values in _type_options('device_addresses').items():
        for address in values:
            try:
                pci_address.parse(address.strip().lower())
            except ValueError as e:
                raise exception.InvalidParameterValue(
                    name='[%s] device_addresses' % group, reason=e)
            addresses.add(address.strip().lower())
    return frozenset(addresses)


class IntelNicDriver(base.Driver):
    """Intel NIC VFs, or whole ports, with the port's physical network."""

    name = 'intel_nic_driver'

    def __init__(self):
        self.physnets = parse_mappings(configured_mappings())
        self.functions = parse_mappings(
            [mapping for mappings in
             _type_options('function_device_mappings').values()
             for mapping in mappings],
            '[<nic type>] function_device_mappings')
        self.addresses = configured_addresses()
        self.product_ids = frozenset(p.strip().lower().removeprefix('0x')
                                     for p in CONF.nic.product_ids)
        self.pci_ids = frozenset((VENDOR_ID, p) for p in self.product_ids)

    def reported_name(self, vendor_id):
        return CYBORG17_DRIVER_NAME

    def _takes(self, pf):
        return (pf.vendor_id == VENDOR_ID and pf.physfn is None and
                pf.class_is(ETHERNET_CLASS) and
                (ANY in self.product_ids or
                 pf.product_id in self.product_ids))

    def discover(self, pci_devices):
        devices = []
        for pf in pci_devices.values():
            if not self._takes(pf):
                continue
            whole = not self.addresses or pf.address in self.addresses
            vfs = [vf for vf in pf.virtfns
                   if whole or vf in self.addresses]
            # A port with VFs offers those allowed, one without itself.
            if not (vfs if pf.virtfns else whole):
                continue
            devices.append(self._device(pf, vfs))
        return devices

    def _device(self, pf, vfs):
        ifaces = [os.path.basename(p) for p in pf.glob('net/*')]
        physnet = next((self.physnets[i] for i in ifaces
                        if i in self.physnets), None)
        function = next((self.functions[i] for i in ifaces
                         if i in self.functions), None)
        model = MODELS.get(pf.product_id, pf.product_id)
        traits = ['CUSTOM_NIC_INTEL',
                  placement_names.custom_name('NIC_INTEL', model)]
        # The replaced service's traits, in its order.
        old_traits = ['CUSTOM_VF' if vfs else 'CUSTOM_PF']
        if function:
            traits.append(placement_names.custom_name(function))
            old_traits.append(placement_names.custom_name(function))
        extra = {}
        if physnet:
            traits.append(physnet_trait(physnet))
            old_traits.append(placement_names.custom_name(physnet))
            extra['physical_network'] = physnet
        resource_class, traits = cyborg17.names(
            VF_RESOURCE_CLASS if vfs else PF_RESOURCE_CLASS, traits,
            CYBORG17_RESOURCE_CLASS, old_traits)
        if not vfs:
            groups = {pf.address: [pf.address]}
        elif CONF.agent.group_virtual_functions:
            groups = {pf.address: vfs}
        else:
            groups = {vf: [vf] for vf in vfs}
        deployables = [
            report.deployable(
                name, self.reported_name(pf.vendor_id), resource_class,
                traits, [report.pci_handle(f, **extra) for f in functions])
            for name, functions in groups.items()]
        return report.device(
            'NIC', cyborg17.hex_id(VENDOR_ID), 'Intel Ethernet %s' % model,
            pf.address, deployables,
            std_board_info=report.std_board_info(pf),
            vendor_board_info={'interfaces': ifaces})
