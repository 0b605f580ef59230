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
"""Time the conductor's application of a large host report.

The host has 64 FPGAs with 8 virtual functions each: 64 devices, 64
deployables, 512 attach handles and 128 attributes. The report is applied
to an empty SQLite database, then again unchanged, then with one VF gone,
as ``cyborg.conductor.inventory.apply_report`` does it, host lease
included. Each step prints its time and its SQL statements; the lease
takes one UPDATE (an INSERT the first time) and one UPDATE to release.

    tools/bench/inventory_bench.py [--database URL] [--repeat N]
"""

import argparse
import copy
import statistics
import time

from cyborg.conductor import inventory
import cyborg.conf
from cyborg import context
from cyborg.db import api as db_api
from cyborg.db import models
from cyborg.drivers import pci
from cyborg.drivers import report
from cyborg import objects
from cyborg.objects import driver_report
from cyborg.tests import db_utils

CONF = cyborg.conf.CONF
HOST = 'bench-host'


def host_report(devices=64, vfs=8):
    return driver_report.HostReport(hostname=HOST, devices=[
        report.device(
            'FPGA', '8086', 'PAC Arria10', address,
            [report.deployable(
                address, 'intel_fpga', 'FPGA', ['CUSTOM_FPGA_INTEL'],
                [report.pci_handle(pci.offset_address(address, vf + 1))
                 for vf in range(vfs)])],
            std_board_info={'product_id': '09c4'})
        for address in ('0000:%02x:00.0' % (0x10 + i)
                        for i in range(devices))])


def without_one_vf(host_report):
    host_report = copy.deepcopy(host_report)
    deployable = host_report.devices[0].deployables[0]
    deployable.attach_handles = deployable.attach_handles[:-1]
    deployable.num_accelerators -= 1
    return host_report


def step(ctx, name, host_report, repeat, reset=None):
    times = []
    for _ in range(repeat):
        if reset is not None:
            reset()
        with db_utils.recorded_statements() as statements:
            started = time.perf_counter()
            diff = inventory.apply_report(ctx, host_report, 'bench')
            times.append(time.perf_counter() - started)
    writes = db_utils.writes(statements)
    print('%-22s median %6.1f ms, max %6.1f ms; %3d statements, %3d '
          'writes (%d outside the lease); %s'
          % (name, statistics.median(times) * 1000, max(times) * 1000,
             len(statements), len(writes),
             len(db_utils.writes(statements, ignore_table='hosts')), diff))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--database', default='sqlite://')
    parser.add_argument('--repeat', type=int, default=5)
    args = parser.parse_args()
    CONF([], project='cyborg')
    CONF.set_override('connection', args.database, group='database')
    objects.register_all()
    db_api.configure(CONF)
    engine = db_api.get_engine()
    ctx = context.get_admin_context()
    full = host_report()
    smaller = without_one_vf(full)

    def empty():
        models.BASE.metadata.drop_all(engine)
        models.BASE.metadata.create_all(engine)

    def full_again():
        inventory.apply_report(ctx, full, 'bench')

    print('report: %d devices, %d deployables, %d attach handles; %s'
          % (len(full.devices), len(full.devices),
             sum(len(d.deployables[0].attach_handles) for d in full.devices),
             engine.dialect.name))
    step(ctx, 'first report', full, args.repeat, reset=empty)
    step(ctx, 'unchanged report', full, args.repeat)
    step(ctx, 'one VF removed', smaller, args.repeat, reset=full_again)


if __name__ == '__main__':
    main()
