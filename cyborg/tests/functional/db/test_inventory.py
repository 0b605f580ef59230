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
"""The host lease and inventory_apply on MariaDB and PostgreSQL.

Conductors racing for one host's lease, each in its own transaction,
must leave exactly one owner, whether the host's row exists yet or not
and when a lease has expired, and many hosts added at once must all be
added; a report that removes a tree of deployables
must satisfy the servers' foreign key checks.
"""

import datetime

import fixtures
from oslo_db.sqlalchemy import test_fixtures
import testtools

from cyborg.conductor import inventory_plan
from cyborg import context
from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg.db import host as host_db
from cyborg.tests import db_utils
from cyborg.tests.functional.db import test_concurrency

HOST = 'host1'


class _HostLease:

    THREADS = 8

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()
        self.now = datetime.datetime(2026, 1, 1)
        self.useFixture(fixtures.MockPatch(
            'oslo_utils.timeutils.utcnow', autospec=True,
            side_effect=lambda with_timezone=False: self.now))

    def _race_for_lease(self, owners):
        results = db_utils.race(host_db.lease_acquire,
                                [(HOST, owner, 60) for owner in owners])
        self.assertEqual({bool}, {type(r) for r in results})
        winners = [o for o, won in zip(owners, results) if won]
        self.assertEqual(1, len(winners))
        self.assertEqual(winners[0], host_db.get(self.ctx,
                                                 HOST).lease_owner)
        return winners[0]

    def test_one_winner_for_a_new_host(self):
        self._race_for_lease(['c%d' % i for i in range(self.THREADS)])
        self.assertEqual(1, len(host_db.get_all(self.ctx)))

    def test_many_new_hosts_at_once(self):
        # Agents starting together: each conductor thread adds another
        # host. On MariaDB, adding rows in one gap of the unique index
        # must not deadlock (nor fail on a savepoint the deadlock ended).
        hosts = ['new-host-%d' % i for i in range(self.THREADS)]
        results = db_utils.race(host_db.set_compute_rp,
                                [(h, 'rp-' + h) for h in hosts])
        self.assertEqual(hosts, [r.hostname for r in results])
        results = db_utils.race(host_db.lease_acquire,
                                [('other-' + h, 'c', 60) for h in hosts])
        self.assertEqual([True] * self.THREADS, results)
        self.assertEqual(2 * self.THREADS, len(host_db.get_all(self.ctx)))

    def test_one_winner_for_a_free_lease(self):
        host_db.set_compute_rp(self.ctx, HOST, 'rp')
        self._race_for_lease(['c%d' % i for i in range(self.THREADS)])

    def test_expired_lease_taken_over_once(self):
        self.assertTrue(host_db.lease_acquire(self.ctx, HOST, 'dead',
                                              60))
        owners = ['c%d' % i for i in range(self.THREADS)]
        self.assertEqual([False] * self.THREADS, db_utils.race(
            host_db.lease_acquire, [(HOST, o, 60) for o in owners]))
        self.now += datetime.timedelta(seconds=61)
        self.assertIn(self._race_for_lease(owners), owners)


class _InventoryApply:

    def test_remove_tree_with_a_vanished_device(self):
        ctx = context.get_admin_context()

        def device(address, children):
            return {
                'type': 'GPU', 'vendor': '10de', 'model': 'T4',
                'std_board_info': None, 'vendor_board_info': None,
                'cpid_type': 'PCI',
                'cpid_info': dict(zip(('domain', 'bus', 'device',
                                       'function'),
                                      address.replace('.', ':').split(':'))),
                'deployables': [
                    {'name': name, 'parent_name': parent,
                     'num_accelerators': 1, 'driver_name': 'nvidia_gpu',
                     'bitstream_id': None, 'attributes': [('rc', 'VGPU')],
                     'attach_handles': [{'attach_type': 'PCI',
                                         'attach_info': {'name': name},
                                         'in_use': False}]}
                    for name, parent in [(address, None)] + [
                        ('%s_%d' % (address, i), address)
                        for i in range(children)]]}

        gpus = [device('0000:%02x:00.0' % bus, 3) for bus in (0x10, 0x20)]
        self.assertEqual(8, len(inventory_plan.apply(ctx, HOST,
                                                     gpus).added))
        profile = db_utils.create_profile(ctx)
        arq = db_utils.create_arqs(ctx, profile, state='BindStarted')[0]
        held = db_api.get_all(ctx, 'deployable',
                              filters={'name': '0000:20:00.0_1'})[0]
        arq_db.claim_handle(ctx, arq.uuid, held.id)

        diff = inventory_plan.apply(ctx, HOST, [])
        self.assertEqual(4, len(diff.removed))
        self.assertEqual(4, len(diff.vanished))
        arq_db.unbind(ctx, arq.uuid)
        diff = inventory_plan.apply(ctx, HOST, [])
        self.assertEqual(4, len(diff.removed))
        self.assertEqual([], db_api.get_all(ctx, 'device'))


class TestHostLeaseSQLiteFile(_HostLease,
                              test_concurrency.SQLiteFileTestCase):
    pass


class TestHostLeaseMySQL(_HostLease, test_fixtures.OpportunisticDBTestMixin,
                         testtools.TestCase):
    FIXTURE = test_concurrency.MySQLFixture


class TestHostLeasePostgreSQL(_HostLease,
                              test_fixtures.OpportunisticDBTestMixin,
                              testtools.TestCase):
    FIXTURE = test_concurrency.PostgreSQLFixture


class TestInventoryApplySQLiteFile(_InventoryApply,
                                   test_concurrency.SQLiteFileTestCase):
    pass


class TestInventoryApplyMySQL(_InventoryApply,
                              test_fixtures.OpportunisticDBTestMixin,
                              testtools.TestCase):
    FIXTURE = test_concurrency.MySQLFixture


class TestInventoryApplyPostgreSQL(_InventoryApply,
                                   test_fixtures.OpportunisticDBTestMixin,
                                   testtools.TestCase):
    FIXTURE = test_concurrency.PostgreSQLFixture
