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
        help="""
Seconds between two device reports of this agent to the conductor.

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

Nova creates that provider; Cyborg adds one child provider per device under
it and never changes the compute node provider itself. When unset, the
fully qualified domain name of the host is used, and ``[DEFAULT] host`` if
that cannot be found. Set it when nova-compute names its provider
differently, for example when ``[DEFAULT] host`` is set in nova.conf.

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
]


def register_opts(conf):
    conf.register_group(agent_group)
    conf.register_opts(agent_opts, group=agent_group)


def list_opts():
    return {agent_group: agent_opts}
