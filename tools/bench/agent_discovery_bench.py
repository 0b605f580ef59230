#!/usr/bin/env python3
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
"""Time the agent's discovery of a large simulated host.

The host has 64 PCI accelerators with 512 virtual functions: 16 Intel PAC
FPGAs with 8 VFs each, 16 QAT C62x with 16 VFs each, 16 Intel X710 ports
with 8 VFs each and 16 NVIDIA T4 GPUs offering a vGPU type. Each pass scans
sysfs once, runs the four drivers and checks the reports, as the resource
tracker does. Then it shows which passes send a report to the conductor:
the first, and no unchanged one.

    tools/bench/agent_discovery_bench.py [--passes N]
"""

import argparse
import json
import statistics
import tempfile
import time

from cyborg.agent import resource_tracker
import cyborg.conf
from cyborg.drivers import base as drivers_base
from cyborg.tests import sysfs

CONF = cyborg.conf.CONF
DRIVERS = ['intel_fpga_driver', 'intel_qat_driver', 'intel_nic_driver',
           'nvidia_gpu_driver']


def host_description():
    description = []
    for i in range(16):
        description += [
            ('intel_fpga', '0000:%02x:00.0' % (0x10 + i), {'vfs': 8}),
            ('intel_qat', '0000:%02x:00.0' % (0x30 + i), {'vfs': 16}),
            ('intel_nic', '0000:%02x:00.0' % (0x50 + i),
             {'vfs': 8, 'ifname': 'ens%df0' % i}),
            ('nvidia_gpu', '0000:%02x:00.0' % (0x70 + i),
             {'mdev_types': {'nvidia-222': 16}}),
        ]
    return description


class RecordingConductor:
    """Counts the reports the tracker would send over RPC."""

    def __init__(self):
        self.reports = []

    def report_host(self, context, host_report):
        self.reports.append(host_report)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--passes', type=int, default=20)
    args = parser.parse_args()
    CONF([], project='cyborg')
    with tempfile.TemporaryDirectory() as root:
        started = time.perf_counter()
        sysfs.build(root, host_description())
        built = time.perf_counter() - started
        CONF.set_override('sysfs_root', root, group='agent')
        CONF.set_override('enabled_vgpu_types', ['nvidia-222'],
                          group='gpu_devices')
        conductor = RecordingConductor()
        tracker = resource_tracker.ResourceTracker(
            'bench-host', drivers_base.load(DRIVERS), conductor)

        pci_devices = tracker.scan()
        times = []
        for _ in range(args.passes):
            started = time.perf_counter()
            host_report = tracker.discover()
            times.append(time.perf_counter() - started)
        started = time.perf_counter()
        for _ in range(args.passes):
            tracker.scan()
        scan = (time.perf_counter() - started) / args.passes
        started = time.perf_counter()
        resource_tracker.fingerprint(host_report)
        digest = time.perf_counter() - started

        sent = [tracker.report() for _ in range(5)]
        payload = len(json.dumps(host_report.obj_to_primitive()))

    deployables = [d for dev in host_report.devices for d in dev.deployables]
    print('simulated host: %d PCI functions (%d physical, %d virtual), '
          'tree written in %.2f s'
          % (len(pci_devices),
             sum(1 for d in pci_devices.values() if d.physfn is None),
             sum(1 for d in pci_devices.values() if d.physfn),
             built))
    print('report: %d devices, %d deployables, %d attach handles, '
          '%d bytes as an RPC payload'
          % (len(host_report.devices), len(deployables),
             sum(len(d.attach_handles) for d in deployables), payload))
    print('discovery pass (scan + %d drivers + checks), %d passes: '
          'median %.1f ms, max %.1f ms'
          % (len(DRIVERS), args.passes,
             statistics.median(times) * 1000, max(times) * 1000))
    print('  of which the PCI scan: %.1f ms; fingerprint: %.1f ms'
          % (scan * 1000, digest * 1000))
    print('5 passes on an unchanged host sent %d report(s): %s'
          % (len(conductor.reports), sent))


if __name__ == '__main__':
    main()
