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
"""Options of the [nic_devices] group: NIC settings of the replaced service.

That service took the NIC types in ``enabled_nic_types`` and, for each, a
group named after the type with ``physical_device_mappings``,
``function_device_mappings`` and ``device_addresses``. Cyborg reads them
all; the physical networks only when ``[nic] physical_device_mappings`` is
empty.
"""

from oslo_config import cfg

nic_devices_group = cfg.OptGroup(
    'nic_devices',
    title='NIC types',
    help='NIC settings in the format of the service Cyborg replaces.')

nic_devices_opts = [
    cfg.ListOpt(
        'enabled_nic_types',
        default=[],
        help="""
Names of groups that hold NIC settings, such as ``x710_static``.

Each group named here may set ``physical_device_mappings``, in the format
of ``[nic] physical_device_mappings``; the Intel NIC driver uses the
mappings of all of them when ``[nic] physical_device_mappings`` is empty.
Their ``function_device_mappings`` give ports a function trait and their
``device_addresses`` restrict the ports and VFs offered, as in the service
Cyborg replaces.

Related options:

* ``[nic] physical_device_mappings``
* ``[nic] product_ids``
"""),
]

#: The options of each group that ``enabled_nic_types`` names.
type_opts = [
    cfg.ListOpt(
        'physical_device_mappings',
        default=[],
        help='Physical networks of ports, as ``[nic] '
             'physical_device_mappings``.'),
    cfg.ListOpt(
        'function_device_mappings',
        default=[],
        help="""
Functions of ports, as ``<function>:<interface>`` pairs.

The physical and virtual functions of a listed port carry the trait
``CUSTOM_<FUNCTION>``, as openstack-cyborg 17.0.0 gave them.
"""),
    cfg.ListOpt(
        'device_addresses',
        default=[],
        help="""
PCI addresses of the NIC functions the Intel NIC driver offers.

A physical function's address offers its VFs, or the port itself while it
has no VFs; a VF's address offers that VF only. Empty: every port that
``[nic] product_ids`` selects. A malformed address stops the agent.
"""),
]


def register_opts(conf):
    conf.register_group(nic_devices_group)
    conf.register_opts(nic_devices_opts, group=nic_devices_group)


def register_type_opts(conf):
    """Register the group of each of ``enabled_nic_types``.

    Their names depend on another option, so they are registered once the
    configuration files are parsed.
    """
    for group in conf.nic_devices.enabled_nic_types:
        conf.register_opts(type_opts, group=group)


def list_opts():
    return {nic_devices_group: nic_devices_opts}
