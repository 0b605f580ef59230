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
"""Time the Placement sync of one large host, and a resync with no change.

The host has 64 PCI accelerators with 512 virtual functions (64 Intel PAC
FPGAs with 8 VFs each, one provider per card with 8 accelerators), as
the agent's drivers report them and the conductor stores them. Placement
is the real service, served by this process on SQLite. The first sync
creates the providers, custom traits and inventories; the second finds
nothing to change and must write nothing and read once.

    tools/bench/placement_sync_bench.py [--cards 64] [--vfs 8]
"""

import argparse
import json
import os
import tempfile
import time

from cyborg.agent import resource_tracker
from cyborg.clients import placement as placement_client
from cyborg.conductor import inventory
from cyborg.conductor import placement_sync
import cyborg.conf
from cyborg import context
from cyborg.drivers import base as drivers_base
from cyborg import objects
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import sysfs
from cyborg_quickstart import placement

CONF = cyborg.conf.CONF
HOST = 'bench-host'


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--cards', type=int, default=64)
    parser.add_argument('--vfs', type=int, default=8)
    args = parser.parse_args()
    objects.register_all()
    CONF([], project='cyborg', default_config_files=[])
    tmp = tempfile.mkdtemp(prefix='cyborg-bench-')
    database = cyborg_fixtures.Database()
    database.setUp()
    server = placement.PlacementServer(
        'sqlite:///' + os.path.join(tmp, 'placement.sqlite')).start()
    try:
        adapter = placement.adapter(server.url, '1.39')
        compute = adapter.post('/resource_providers',
                               json={'name': HOST}).json()['uuid']
        root = os.path.join(tmp, 'sysfs')
        sysfs.build(root, [
            ('intel_fpga', '%04x:%02x:00.0' % (i // 200, 0x10 + i % 200),
             {'vfs': args.vfs}) for i in range(args.cards)])
        CONF.set_override('sysfs_root', root, group='agent')
        tracker = resource_tracker.ResourceTracker(
            HOST, drivers_base.load(['intel_fpga_driver']), None)
        ctx = context.get_admin_context()
        report = tracker.discover()
        inventory.apply_report(ctx, report, 'bench')

        client = placement_client.PlacementClient(adapter)
        deployables = [dep for dev in report.devices
                       for dep in dev.deployables]
        results = {'deployables': len(deployables),
                   'accelerators': sum(dep.num_accelerators
                                       for dep in deployables)}
        for name in ('first_sync', 'no_change_resync'):
            before = client.requests.copy()
            start = time.monotonic()
            summary = placement_sync.sync_host(ctx, HOST, compute, client)
            elapsed = time.monotonic() - start
            sent = client.requests - before
            results[name] = {
                'seconds': round(elapsed, 3),
                'reads': sent['GET'],
                'writes': sum(sent.values()) - sent['GET'],
                'summary': summary}
        print(json.dumps(results, indent=2))
    finally:
        server.stop()
        database.cleanUp()


if __name__ == '__main__':
    main()
