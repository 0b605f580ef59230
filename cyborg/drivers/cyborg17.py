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
"""The names that openstack-cyborg 17.0.0's drivers gave, kept by ours.

Device profiles and flavors written for that service name its resource
classes and traits, and its database rows hold its device vendor spellings
and deployable ``driver_name`` values. Each driver reports those beside its
own descriptive traits, unless ``[agent] placement_names`` is
``descriptive`` (:func:`names`). :func:`retired` tells which names a
profile would lose with that choice, and what replaces each.
"""

import re

from cyborg.common import placement_names
import cyborg.conf

CONF = cyborg.conf.CONF

#: ``[agent] placement_names`` values.
CYBORG17 = 'cyborg17'
DESCRIPTIVE = 'descriptive'

#: Vendor names of 17.0.0's GPU and generic PCI drivers, by PCI vendor id
#: (``cyborg/accelerator/drivers/pci/utils.py``).
PCI_VENDORS = {'10de': 'nvidia', '102b': 'matrox', '8086': 'intel',
               '1bd4': 'inspur', '10ee': 'xilinx', '19e5': 'huawei'}
#: Vendor names of 17.0.0's NVMe SSD driver
#: (``get_vendor_maps`` in ``cyborg/accelerator/common/utils.py``).
SSD_VENDORS = {'10de': 'nvidia', '102b': 'matrox', '1bd4': 'inspur',
               '8086': 'intel', '1099': 'samsung', '1cf2': 'zte'}

#: 17.0.0's resource classes that descriptive names replace, and by what.
_CLASSES = {'CUSTOM_NIC': 'CUSTOM_NIC_VF',
            'CUSTOM_SSD': 'CUSTOM_NVME',
            'CUSTOM_PCI': None}
_HEX = '[0-9A-F]+'
#: 17.0.0's traits that no descriptive name keeps: a pattern and a
#: function of its match giving the replacement, if there is one.
_TRAITS = (
    (r'CUSTOM_NVIDIA_(%s)' % _HEX,
     lambda m: placement_names.custom_name('GPU_PRODUCT_ID', m[1])),
    (r'CUSTOM_NVIDIA_%s_\w+' % _HEX, None),
    (r'CUSTOM_[PV]F', None),
    (r'CUSTOM_PCI_PRODUCT_ID_%s' % _HEX, None),
    (r'CUSTOM_PCI_(%s)' % '|'.join(v.upper() for v in
                                   sorted(set(PCI_VENDORS.values()))), None),
    (r'CUSTOM_FPGA_(FUNCTION_ID|REGION)_INTEL_(\w+)',
     lambda m: placement_names.custom_name('FPGA', m[1], m[2])),
    (r'CUSTOM_SSD_PRODUCT_ID_%s' % _HEX, None),
    (r'CUSTOM_SSD_(\w+)',
     lambda m: placement_names.custom_name('NVME', m[1])),
)


def descriptive():
    """Whether ``[agent] placement_names`` asks for descriptive names."""
    return CONF.agent.placement_names == DESCRIPTIVE


def names(resource_class, traits, cyborg17_class=None, cyborg17_traits=()):
    """The resource class and traits a deployable reports, as configured.

    :param resource_class: the descriptive resource class.
    :param traits: the descriptive traits.
    :param cyborg17_class: the class 17.0.0 reported for the same
        accelerator, when it differs.
    :param cyborg17_traits: the traits 17.0.0 reported for it.
    :returns: (resource class, traits): the descriptive ones, or 17.0.0's
        class with 17.0.0's traits and the descriptive ones, each once.
    """
    if descriptive():
        return resource_class, list(traits)
    return (cyborg17_class or resource_class,
            list(dict.fromkeys(list(cyborg17_traits) + list(traits))))


def vendor_product_traits(kind, vendors, dev):
    """``CUSTOM_<kind>_<vendor>`` and ``CUSTOM_<kind>_PRODUCT_ID_<id>``.

    The traits the replaced service gave a PCI device ``dev`` of ``kind``;
    the first only for a vendor ``vendors`` names.
    """
    vendor = vendors.get(dev.vendor_id)
    traits = [placement_names.custom_name(kind, vendor)] if vendor else []
    traits.append(placement_names.custom_name('%s_PRODUCT_ID' % kind,
                                              dev.product_id))
    return traits


def hex_id(vendor_id):
    """A PCI id as 17.0.0 read it from a sysfs file: ``0x8086``."""
    return '0x' + vendor_id


def vendor_name(vendors, vendor_id):
    """17.0.0's ``driver_name`` for a vendor: its upper-case name or id."""
    return vendors.get(vendor_id, vendor_id).upper()


def retired(name):
    """Whether ``[agent] placement_names = descriptive`` drops ``name``.

    :returns: (dropped, replacement): whether it is one of 17.0.0's names
        that descriptive names drop, and the name that replaces it where
        one does for every device (None where it depends on the device).
    """
    if name in _CLASSES:
        return True, _CLASSES[name]
    for pattern, replacement in _TRAITS:
        match = re.fullmatch(pattern, name)
        if match:
            return True, replacement(match) if replacement else None
    return False, None
