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
"""Which PCI functions belong to an FPGA card: a topology names no others.

A bitstream image's ``topology`` gives PCI offsets from the card's port,
and the functions at those offsets become attach handles. An offset is
image metadata, which whoever uploads the image chooses: unchecked, it
could reach the host's NVMe drive or NIC and hand it to an instance. A
function belongs to the card when it is

* behind the card's own upstream bridge (the PCIe root or switch port
  above the card's port): a bus that bridge forwards to, or a function
  sysfs shows below the bridge's directory; or, for a card on a root bus
  with no bridge of its own, a function of the port's own PCI device
  (same domain, bus and device number);
* or a virtual function of such a function;

and, where the host shows it, it has the card's PCI vendor id.
"""

import os

from cyborg.common import pci_address


def _upstream_bridge(port):
    """The sysfs directory of the bridge above ``port``, or None.

    None where the port sits directly on a root bus
    (``devices/pci0000:5e/0000:5e:00.0``).
    """
    parent = os.path.dirname(os.path.realpath(port.path))
    try:
        pci_address.parse(os.path.basename(parent))
    except ValueError:
        return None
    return parent


def _bus_range(bridge):
    """The buses ``bridge`` forwards to, as sysfs shows them, or None."""
    try:
        with open(os.path.join(bridge, 'secondary_bus_number')) as f:
            first = int(f.read().strip(), 0)
        with open(os.path.join(bridge, 'subordinate_bus_number')) as f:
            last = int(f.read().strip(), 0)
    except (OSError, ValueError):
        return None
    return first, last


def _below(path, directory):
    return os.path.realpath(path).startswith(directory + os.sep)


def _same_device(address, port):
    return address.rsplit('.', 1)[0] == port.rsplit('.', 1)[0]


def reaches(card, address, pci_devices):
    """Whether ``address`` may be a function of ``card``.

    A function the host does not show (yet: a bitstream may add it) is
    judged by its address alone; one it shows must have the card's
    vendor id too.

    :param card: a :class:`cyborg.drivers.fpga.Card`.
    :param pci_devices: the host's PCI devices, by address.
    """
    port = card.port
    device = pci_devices.get(address)
    if device is not None:
        if device.vendor_id != card.controlpath.vendor_id:
            return False
        if address in (port.address, card.controlpath.address):
            return True
        if device.physfn is not None and device.physfn != address:
            parent = pci_devices.get(device.physfn)
            if parent is not None and reaches(card, parent.address,
                                              pci_devices):
                return True
    parts = pci_address.parse(address)
    own = pci_address.parse(port.address)
    if parts['domain'] != own['domain']:
        return False
    bridge = _upstream_bridge(port)
    if bridge is None:
        return _same_device(address, port.address)
    if device is not None and _below(device.path, bridge):
        return True
    buses = _bus_range(bridge)
    return (buses is not None and
            buses[0] <= int(parts['bus'], 16) <= buses[1])


def foreign(card, addresses, pci_devices):
    """The ``addresses`` that are not functions of ``card``, sorted."""
    return sorted(a for a in set(addresses)
                  if not reaches(card, a, pci_devices))
