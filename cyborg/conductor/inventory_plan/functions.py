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
"""One owner per PCI function: what a report applied never gives twice.

A PCI function attached to two instances is one device in two servers.
Drivers report each function once, but a report is the agent's word (a
bitstream topology, a driver's bug, an agent taken over): when two
devices of a host report a ``PCI`` attach handle for the same function,
only one keeps it, and the other's handle is left out with a warning.
The owner is the device whose control path is that function, else the
device that already has a handle for it, else the first by address.
:func:`cyborg.db.attach_handle.claim` checks the same at bind time, for
rows that came otherwise.

This decides what the plan of a report (:mod:`.matching`) is given; the
function of a handle is :func:`cyborg.common.pci_address.address_of` of
its attach info, everywhere (the audit included).
"""

import collections

from oslo_log import log

from cyborg.common import pci_address
from cyborg import states

LOG = log.getLogger(__name__)
_PCI = states.ATTACH_PCI_FUNCTION_TYPES


def _recorded_owners(rows):
    """{function address: address of the device with a handle for it}."""
    device_address = {}
    for cpid in rows.control_paths:
        device_address.setdefault(cpid.device_id,
                                  pci_address.address_of(cpid.cpid_info))
    deployable_device = {dep.id: dep.device_id for dep in rows.deployables}
    owners = {}
    for handle in rows.attach_handles:
        if handle.attach_type not in _PCI:
            continue
        function = pci_address.address_of(handle.attach_info)
        device = device_address.get(
            deployable_device.get(handle.deployable_id))
        if function is not None and device is not None:
            owners.setdefault(function, device)
    return owners


def _owner(function, claimants, recorded):
    if function in claimants:
        return function
    if recorded.get(function) in claimants:
        return recorded[function]
    return min(claimants)


def one_owner(hostname, wanted, rows):
    """The report with each PCI function under one device only.

    :param wanted: the report as :func:`.report.wanted` indexes it:
        {device address: (device, [deployable, ...])}.
    :param rows: the host's :class:`cyborg.db.inventory.HostRows`.
    :returns: ``wanted``, with the handles of the functions other devices
        own left out (a deployable's ``num_accelerators`` counts one
        fewer per handle left out).
    """
    claimants = collections.defaultdict(dict)
    for address, (_device, deps) in wanted.items():
        for dep in deps:
            for handle in dep['attach_handles']:
                function = pci_address.address_of(handle['attach_info'])
                if handle['attach_type'] in _PCI and function:
                    claimants[function].setdefault(address, dep['name'])
    contested = {f: c for f, c in claimants.items() if len(c) > 1}
    if not contested:
        return wanted
    recorded = _recorded_owners(rows)
    refused = set()
    for function, by_device in sorted(contested.items()):
        owner = _owner(function, by_device, recorded)
        for address, name in sorted(by_device.items()):
            if address == owner:
                continue
            LOG.warning('Host %(host)s reports PCI function %(function)s '
                        'under deployable %(name)s of device %(device)s, '
                        'but deployable %(owner_name)s of device %(owner)s '
                        'has it: no second attach handle is made for it',
                        {'host': hostname, 'function': function,
                         'name': name, 'device': address,
                         'owner_name': by_device[owner], 'owner': owner})
            refused.add((address, function))
    result = {}
    for address, (device, deps) in wanted.items():
        result[address] = (device, [_without(dep, address, refused)
                                    for dep in deps])
    return result


def _without(dep, address, refused):
    kept = [handle for handle in dep['attach_handles']
            if handle['attach_type'] not in _PCI or
            (address, pci_address.address_of(handle['attach_info']))
            not in refused]
    dropped = len(dep['attach_handles']) - len(kept)
    if not dropped:
        return dep
    return dict(dep, attach_handles=kept, num_accelerators=max(
        0, dep['num_accelerators'] - dropped))
