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
"""What cyborg-agent would report of this host, read-only.

Runs the agent's own discovery (:meth:`cyborg.agent.resource_tracker.
ResourceTracker.discover`: one PCI scan, every driver, the health checks)
on the host it runs on, or on a simulated sysfs tree (``--sysfs-root``),
and prints the report as JSON and as a table: each device's vendor and
product, PCI address, NUMA node, IOMMU group and kernel driver, and each
deployable's resource class, traits and attach handles. It talks to no
Placement, no conductor and no message bus, writes nothing, and needs no
root where sysfs is world-readable (it is on Linux).

Without ``--drivers`` every installed driver that reads the host runs
(the fake driver, which reports a device that does not exist, is left
out), each on its own: one that cannot load or fails (for want of
configuration, say) is listed with the reason and the others still
report. ``--drivers enabled`` runs ``[agent] enabled_drivers`` of the
configuration given with ``--config-file``/``--config-dir``, which also
set the drivers' options (``[gpu_devices]``, ``[pci] device_spec``, ...);
without them no file is read.

``tools/hardware-report.sh`` runs it in a virtualenv of the repository.
"""

import argparse
import json
import os
import sys

# The process-wide choices of a Cyborg program, before any library loads.
import cyborg.cmd  # noqa: F401,I100

from stevedore import extension  # noqa: E402,I100,I202

from cyborg.agent import resource_tracker  # noqa: E402
from cyborg.common import attributes  # noqa: E402
from cyborg.common import pci_address  # noqa: E402
import cyborg.conf  # noqa: E402
from cyborg.drivers import base  # noqa: E402
from cyborg.drivers import pci  # noqa: E402
from cyborg import objects  # noqa: E402

CONF = cyborg.conf.CONF

#: Drivers that report nothing of the host's PCI devices: the fake
#: driver's device does not exist, SPDK NVMe-oF targets are never offered.
NOT_OF_THE_HOST = frozenset(['fake_driver', 'nvmf_spdk_driver'])


def all_drivers():
    """The names of every installed driver that reads the host."""
    names = extension.ExtensionManager(base.NAMESPACE).names()
    return sorted(set(names) - NOT_OF_THE_HOST)


def iommu_group(dev):
    """The IOMMU group of a PciDevice, or None where the host has none."""
    try:
        return int(os.path.basename(os.readlink(
            os.path.join(dev.path, 'iommu_group'))))
    except (OSError, ValueError):
        return None


def _function(dev, address):
    """What the report shows of the PCI function at ``address``."""
    if dev is None:
        return {'pci_address': address}
    return {'pci_address': address,
            'vendor_product': '%s:%s' % (dev.vendor_id, dev.product_id),
            'subsystem': '%s:%s' % (dev.subsystem_vendor_id,
                                    dev.subsystem_product_id),
            'class': dev.class_code, 'kernel_driver': dev.driver,
            'numa_node': dev.numa_node, 'iommu_group': iommu_group(dev)}


def _handle(handle):
    return {'type': handle.attach_type,
            'pci_address': pci_address.address_of(handle.attach_info),
            'attach_info': dict(handle.attach_info)}


def _deployable(dep):
    resource_class, traits = attributes.decode(
        (a.key, a.value) for a in dep.attributes)
    return {'name': dep.name, 'driver_name': dep.driver_name,
            'resource_class': resource_class, 'traits': sorted(traits),
            'num_accelerators': dep.num_accelerators,
            'attach_handles': [_handle(h) for h in dep.attach_handles]}


def report(driver_names, host):
    """The report of ``driver_names`` on this host, as plain data."""
    pci_devices = pci.scan(CONF.agent.sysfs_root)
    drivers, devices = {}, []
    for name in driver_names:
        try:
            (driver,) = base.load([name])
            host_report = resource_tracker.ResourceTracker(
                host, [driver], None).discover()
        except Exception as e:
            drivers[name] = 'failed: %s' % e
            continue
        drivers[name] = 'reported %d device(s)' % len(host_report.devices)
        for dev in host_report.devices:
            address = pci_address.address_of(dev.controlpath_id.cpid_info)
            devices.append(dict(
                _function(pci_devices.get(address), address),
                driver=name, type=dev.type, vendor=dev.vendor,
                model=dev.model, health=dev.health,
                health_reasons=list(dev.health_reasons),
                deployables=[_deployable(d) for d in dev.deployables]))
    reported = {dev['pci_address'] for dev in devices} | {
        h['pci_address'] for dev in devices for dep in dev['deployables']
        for h in dep['attach_handles']}
    return {'host': host, 'sysfs_root': CONF.agent.sysfs_root,
            'pci_functions': len(pci_devices), 'drivers': drivers,
            'devices': devices,
            # What no driver took, to see what the host has besides.
            'other_functions': [_function(dev, address)
                                for address, dev in pci_devices.items()
                                if address not in reported]}


def _cell(value):
    return '-' if value is None or value == [] else str(value)


def table(data):
    """The report as a text table: one row per deployable."""
    columns = ('PCI ADDRESS', 'VENDOR:PRODUCT', 'MODEL', 'NUMA', 'IOMMU',
               'DRIVER', 'HEALTH', 'DEPLOYABLE', 'RESOURCE CLASS', 'TRAITS',
               'ATTACH HANDLES')
    rows = []
    for dev in data['devices']:
        for dep in dev['deployables'] or [{}]:
            rows.append([_cell(v) for v in (
                dev['pci_address'], dev.get('vendor_product'), dev['model'],
                dev.get('numa_node'), dev.get('iommu_group'),
                '%s (%s)' % (dev['driver'], dev.get('kernel_driver')),
                dev['health'], dep.get('name'), dep.get('resource_class'),
                ','.join(dep.get('traits', [])) or None,
                ' '.join('%s:%s' % (h['type'], h['pci_address'])
                         for h in dep.get('attach_handles', [])) or None)])
    widths = [max(len(c) for c in column)
              for column in zip(columns, *rows)]
    lines = ['  '.join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
             for row in [columns] + rows]
    lines += ['', 'PCI functions scanned: %d (sysfs %s); no driver took:' % (
        data['pci_functions'], data['sysfs_root'])]
    lines += ['  %s %s class %s (%s)' % (
        f['pci_address'], f.get('vendor_product'), f.get('class'),
        f.get('kernel_driver')) for f in data['other_functions']]
    lines += ['driver %s: %s' % item for item in sorted(
        data['drivers'].items())]
    return '\n'.join(lines)


def _parser():
    parser = argparse.ArgumentParser(
        description='Print what cyborg-agent would report of this host, '
                    'without Placement, RPC or any write.')
    parser.add_argument('--sysfs-root', default=pci.REAL_SYSFS,
                        help='the sysfs tree to read (default: /sys)')
    parser.add_argument('--drivers', default='all',
                        help='"all" (default: every driver that reads the '
                             'host), "enabled" ([agent] enabled_drivers of '
                             'the configuration) or a comma-separated list')
    parser.add_argument('--format', choices=('both', 'json', 'table'),
                        default='both')
    parser.add_argument('--host', default=None,
                        help='the host name to report as (default: '
                             '[DEFAULT] host)')
    return parser


def main(argv=None):
    args, config_args = _parser().parse_known_args(argv)
    CONF(config_args, project='cyborg', default_config_files=[])
    CONF.set_override('sysfs_root', args.sysfs_root, group='agent')
    objects.register_all()
    if args.drivers == 'all':
        names = all_drivers()
    elif args.drivers == 'enabled':
        names = list(CONF.agent.enabled_drivers)
    else:
        names = [n.strip() for n in args.drivers.split(',') if n.strip()]
    data = report(names, args.host or CONF.host)
    if args.format in ('both', 'json'):
        print(json.dumps(data, indent=2, sort_keys=True))
    if args.format == 'both':
        print()
    if args.format in ('both', 'table'):
        print(table(data))
    return 0


if __name__ == '__main__':
    sys.exit(main())
