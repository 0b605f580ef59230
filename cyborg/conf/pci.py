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

"""Options of the [pci] group: devices the generic PCI driver reports."""

from oslo_config import cfg

pci_group = cfg.OptGroup(
    'pci',
    title='Generic PCI device options',
    help='Options of the generic PCI driver of cyborg-agent.')

pci_opts = [
    cfg.MultiStrOpt(
        'device_spec',
        default=[],
        deprecated_name='passthrough_whitelist',
        help="""
PCI devices the generic PCI driver reports as accelerators.

Each occurrence of this option is one JSON object in the format of Nova's
``[pci] device_spec``; a device is reported when it matches any of them.
Keys that select devices:

* ``vendor_id`` and ``product_id``: four hexadecimal digits, or ``*``
* ``address``: a PCI address such as ``0000:81:00.0``, with ``*`` allowed
  in each part, or an object with ``domain``, ``bus``, ``slot`` and
  ``function`` regular expressions
* ``devname``: a network interface name, for NICs
* ``physical_network``: the physical network a NIC is attached to

Keys that say how a matched device is reported, with the meaning they have
in Nova's PCI-in-Placement support:

* ``resource_class``: the Placement resource class, a standard one or a
  ``CUSTOM_`` name (a bare name gets the ``CUSTOM_`` prefix); when absent,
  ``CUSTOM_PCI`` with the traits ``CUSTOM_PCI_<vendor name>`` and
  ``CUSTOM_PCI_PRODUCT_ID_<product_id>``, as openstack-cyborg 17.0.0
  reported them, or ``CUSTOM_PCI_<vendor_id>_<product_id>`` when ``[agent]
  placement_names`` is ``descriptive``
* ``traits``: a comma-separated list of traits to add to the device's
  resource provider (``CUSTOM_`` is added to names that are not standard
  traits)

Example::

  device_spec = {"vendor_id": "8086", "product_id": "0d5c",
                 "resource_class": "CUSTOM_ACCEL", "traits": "ZIP"}

Only listed devices are reported; the default reports none. Nova must not
also pass the same devices through its own ``[pci] device_spec``, or both
services would hand them out (``cyborg-status upgrade check`` warns about
this when ``[nova] nova_conf`` is set).

Related options:

* ``[agent] enabled_drivers``, which must include the generic PCI driver
* ``[agent] placement_names`` and ``[agent] group_virtual_functions``
* ``[nova] nova_conf``
"""),
]


def register_opts(conf):
    conf.register_group(pci_group)
    conf.register_opts(pci_opts, group=pci_group)


def list_opts():
    return {pci_group: pci_opts}
