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
group named after the type with ``physical_device_mappings`` and
``function_device_mappings``. Cyborg reads the physical networks from
there when ``[nic] physical_device_mappings`` is empty.
"""

from oslo_config import cfg

from cyborg.conf import ignored

nic_devices_group = cfg.OptGroup(
    'nic_devices',
    title='NIC types (deprecated)',
    help='NIC settings of the service Cyborg replaces; use the [nic] group.')

nic_devices_opts = [
    cfg.ListOpt(
        'enabled_nic_types',
        default=[],
        deprecated_for_removal=True,
        deprecated_reason='Set [nic] physical_device_mappings instead.',
        help="""
Names of groups that hold NIC settings, such as ``x710_static``.

Each group named here may set ``physical_device_mappings``, in the format
of ``[nic] physical_device_mappings``; the Intel NIC driver uses the
mappings of all of them when ``[nic] physical_device_mappings`` is empty.
Their ``function_device_mappings`` are ignored.

Related options:

* ``[nic] physical_device_mappings``
"""),
]

#: The options of each group that ``enabled_nic_types`` names.
type_opts = [
    cfg.ListOpt(
        'physical_device_mappings',
        default=[],
        help='Physical networks of ports, as ``[nic] '
             'physical_device_mappings``.'),
    ignored.option(
        cfg.ListOpt, 'function_device_mappings',
        'Cyborg gives NIC ports no function traits.', default=[]),
]


def register_opts(conf):
    conf.register_group(nic_devices_group)
    conf.register_opts(nic_devices_opts, group=nic_devices_group)


def register_type_opts(conf):
    """Register the group of each of ``enabled_nic_types``.

    Their names depend on another option, so they are registered once the
    configuration files are parsed; a warning is logged for each ignored
    option they set, as :func:`cyborg.conf.opts.warn_deprecated` does for
    the others.
    """
    for group in conf.nic_devices.enabled_nic_types:
        conf.register_opts(type_opts, group=group)
        for opt in type_opts:
            if opt.deprecated_for_removal:
                conf[group][opt.dest]  # oslo.config warns as it reads it


def list_opts():
    return {nic_devices_group: nic_devices_opts}
