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
"""Builders of the report objects that drivers return.

They keep the conventions agreed with the conductor in one place:

* a deployable is named after its PCI address, or ``<parent PCI
  address>_<mdev type>`` for a mediated device type, unique on the host;
* attribute ``rc`` holds the resource class, ``trait0``, ``trait1``, ...
  the traits of the deployable's resource provider;
* a PCI attach handle holds ``domain``, ``bus``, ``device`` and
  ``function``; an MDEV handle adds ``asked_type``, and the address is the
  parent's. Every handle is one accelerator.
"""

import json

from cyborg.common import attributes as common_attributes
from cyborg.common import pci_address
from cyborg.objects import driver_report
from cyborg import states


def attributes(resource_class, traits):
    """The ``rc`` and ``trait<N>`` attributes, traits sorted."""
    return [driver_report.AttributeReport(key=key, value=value)
            for key, value in common_attributes.encode(resource_class,
                                                       traits)]


def pci_handle(address, in_use=False, **extra):
    """A PCI attach handle for ``address``, plus ``extra`` information."""
    info = pci_address.parse(address)
    info.update(extra)
    return driver_report.AttachHandleReport(
        attach_type=states.ATTACH_PCI, attach_info=info, in_use=in_use)


def mdev_handle(parent_address, mdev_type):
    """An MDEV attach handle: one mediated device of ``mdev_type``."""
    info = pci_address.parse(parent_address)
    info['asked_type'] = mdev_type
    return driver_report.AttachHandleReport(
        attach_type=states.ATTACH_MDEV, attach_info=info)


def deployable(name, driver_name, resource_class, traits, handles,
               parent_name=None, bitstream_id=None):
    """A deployable offering one accelerator per attach handle."""
    return driver_report.DeployableReport(
        name=name, parent_name=parent_name, num_accelerators=len(handles),
        driver_name=driver_name, bitstream_id=bitstream_id,
        attributes=attributes(resource_class, traits),
        attach_handles=list(handles))


def device(device_type, vendor, model, controlpath, deployables,
           std_board_info=None, vendor_board_info=None):
    """A device managed through the PCI function at address ``controlpath``.

    Board information given as a dictionary is stored as JSON text; text
    is stored as it is.
    """
    return driver_report.DeviceReport(
        type=device_type, vendor=vendor, model=model,
        std_board_info=_json(std_board_info),
        vendor_board_info=_json(vendor_board_info),
        controlpath_id=driver_report.ControlpathReport(
            cpid_type=states.CPID_PCI,
            cpid_info=pci_address.parse(controlpath)),
        deployables=list(deployables))


def whole_function(dev, driver_name, device_type, model, resource_class,
                   traits):
    """A PCI function offered whole: its own deployable and attach handle."""
    return device(
        device_type, dev.vendor_id, model, dev.address,
        [deployable(dev.address, driver_name, resource_class, traits,
                    [pci_handle(dev.address)])],
        std_board_info=std_board_info(dev))


def std_board_info(dev):
    """The standard board information of a PCI device."""
    return {'vendor_id': dev.vendor_id, 'product_id': dev.product_id,
            'class_code': dev.class_code, 'numa_node': dev.numa_node}


def _json(info):
    if info is None or isinstance(info, str):
        return info
    return json.dumps(info, sort_keys=True)
