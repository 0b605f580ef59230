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

"""Options of the [agent] group: the per-host cyborg-agent service."""

from oslo_config import cfg

agent_group = cfg.OptGroup(
    'agent',
    title='Agent options',
    help='Options for the cyborg-agent service that runs on each compute '
         'host.')

agent_opts = [
    cfg.ListOpt(
        'enabled_drivers',
        default=['fake_driver'],
        help="""
Hardware drivers the agent loads, by entry-point name.

Each driver discovers one kind of device (an FPGA family, GPUs, QuickAssist,
NICs, NVMe, generic PCI devices) and reports it. The agent refuses to start
if a name is unknown or its driver fails to load. The default fake driver
reports simulated devices for development; list the drivers of the hardware
this host has in production.

Related options:

* ``sysfs_root``
* ``[pci] device_spec``, used by the generic PCI driver
* ``[gpu_devices] enabled_vgpu_types``, used by the NVIDIA GPU driver
"""),
    cfg.IntOpt(
        'report_interval',
        default=60,
        min=1,
        deprecated_opts=[cfg.DeprecatedOpt('periodic_interval',
                                           group='DEFAULT')],
        help="""
Seconds between two device reports of this agent to the conductor.

openstack-cyborg paced the agent with ``[DEFAULT] periodic_interval``: on
a host whose file sets that and not this option, the agent takes that
value (and warns, naming this option).

On each pass the agent runs every enabled driver's discovery and sends the
result to the conductor when it differs from the last report (or when a
full report is due). Lower it to notice added or removed devices sooner
where hot-plug events are not available; each pass reads sysfs and may run
vendor tools.

Related options:

* ``full_report_every``
* ``enable_hotplug_monitor``
"""),
    cfg.IntOpt(
        'full_report_every',
        default=10,
        min=1,
        help="""
Send the full report on every Nth pass, even when nothing changed.

Unchanged reports are normally skipped; a periodic full report lets the
conductor reconcile its records and Placement with what the host really
has, for example after a conductor lost state or the database was restored.
With the default ``report_interval`` of 60 seconds, 10 means a full report
every ten minutes. Set to 1 to send the full report on every pass.

Related options:

* ``report_interval``
* ``[conductor] reconcile_interval``
"""),
    cfg.StrOpt(
        'resource_provider_name',
        sample_default='<FQDN of this host, else [DEFAULT] host>',
        help="""
Name of this host's compute node resource provider in Placement.

Nova creates that provider, named after the compute node; Cyborg adds one
child provider per device under it and never changes the compute node
provider itself. At start the agent asks Placement for this name (the
fully qualified domain name of the host when unset), then for
``[DEFAULT] host``, and takes the first that Placement has, as
openstack-cyborg 17.0.0 does. The name taken is the host's name in Cyborg:
the devices of the host are recorded under it (the ``hostname`` of
devices in the API), its device providers are named after it, the
conductors call the agent by it, and Nova names it when it binds an
accelerator request. Set it when nova-compute names its compute node
differently from both. Changing it on a host that has reported devices
makes the conductors refuse the host's reports, so that no device is
recorded twice: set it back to the name the devices are recorded under.

Related options:

* ``[DEFAULT] host``
* ``placement_wait_retries``
"""),
    cfg.StrOpt(
        'sysfs_root',
        default='/sys',
        help="""
Directory where the agent reads the sysfs tree.

Drivers enumerate PCI devices and their attributes under this root. Keep
``/sys`` on real hosts. Another directory makes the agent read a simulated
sysfs tree instead, which is how functional tests and development setups
fake hosts with accelerators. udev events describe the real devices, not a
simulated tree, so disable ``enable_hotplug_monitor`` with such a root.

Related options:

* ``enabled_drivers``
* ``enable_hotplug_monitor``
"""),
    cfg.IntOpt(
        'placement_wait_retries',
        default=30,
        min=0,
        deprecated_name='resource_provider_startup_retries',
        help="""
Times the agent checks at start-up for its compute node in Placement.

Device providers are children of the compute node provider that
nova-compute creates, so the agent's first report is useless until that
provider exists. When Cyborg starts before nova-compute, the agent checks
this many times, ``placement_wait_interval`` seconds apart, before it gives
up and reports the error. Set to 0 to check only once.

Related options:

* ``placement_wait_interval``
* ``resource_provider_name``
"""),
    cfg.IntOpt(
        'placement_wait_interval',
        default=10,
        min=1,
        help="""
Seconds between two start-up checks for the compute node in Placement.

It is also how long one check waits for a conductor's answer, so that an
agent started together with the conductors is not held up by a question
asked before they were listening. With the defaults the agent waits up to
five minutes for nova-compute to register this host.

Related options:

* ``placement_wait_retries``
"""),
    cfg.BoolOpt(
        'enable_hotplug_monitor',
        default=True,
        help="""
Report at once when a PCI device is added or removed.

The agent listens for udev PCI events (through pyudev) and sends a report
right away instead of waiting for the next ``report_interval`` pass.
Disable it where udev events are not available, for example in some
containers; devices are then noticed on the next periodic pass.

Related options:

* ``report_interval``
* ``sysfs_root``
"""),
    cfg.StrOpt(
        'placement_names',
        default='cyborg17',
        choices=[
            ('cyborg17', 'the resource classes of openstack-cyborg 17.0.0, '
                         'and its traits beside the descriptive ones'),
            ('descriptive', 'the descriptive resource classes and traits '
                            'only'),
        ],
        help="""
Which resource class and traits the drivers give each device's provider.

Device profiles and flavors name resource classes and traits, so these names
are an interface. With ``cyborg17`` every driver reports the resource class
that openstack-cyborg 17.0.0 reported for the same card (``CUSTOM_NIC``,
``CUSTOM_PCI``, ``CUSTOM_SSD``, ...) and all its traits (such as
``CUSTOM_NVIDIA_<product id>``), plus Cyborg's more descriptive traits: the
profiles of a cloud that ran that service keep scheduling. With
``descriptive`` they report Cyborg's own names only (``CUSTOM_NIC_VF``,
``CUSTOM_PCI_<vendor id>_<product id>``, ``CUSTOM_NVME``, ...).

Before choosing ``descriptive`` on hosts that ran 17.0.0, run
``cyborg-status upgrade check``: its device profiles check lists the
profiles that would stop matching and the ``cyborg-manage device-profile
migrate --map`` arguments that rename their names. Set the same value on
every compute host.

Related options:

* ``group_virtual_functions``
"""),
    cfg.BoolOpt(
        'group_virtual_functions',
        default=False,
        help="""
Offer the virtual functions of a QAT or NIC card as one provider.

openstack-cyborg 17.0.0 made one deployable and one resource provider per
virtual function (VF) of an Intel QAT or NIC card, and the generic PCI
driver one per matched VF. By default Cyborg does the same, so a cloud that
ran it keeps its providers and allocations. Enable it to report each card
as one deployable whose VFs are its attach handles: one provider per card,
with one unit per VF. The per-VF providers are then replaced on the next
report; a VF that an instance holds stays busy, but its old provider keeps
counting it until the instance lets it go, so switch while no VF is held.

Related options:

* ``placement_names``
"""),
]


def register_opts(conf):
    conf.register_group(agent_group)
    conf.register_opts(agent_opts, group=agent_group)


def list_opts():
    return {agent_group: agent_opts}
