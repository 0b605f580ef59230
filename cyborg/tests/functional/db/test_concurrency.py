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
"""Concurrent binds on real database servers never share a handle.

Many threads, each in its own transaction, race to bind ARQs to a
deployable with fewer free handles than ARQs, to move one ARQ out of
the same state, and to take the same Nova events for sending. The
conditional UPDATEs of cyborg.db.api must let exactly the right number
win on SQLite, MariaDB and PostgreSQL alike. The SQLite
database is a file, as with ``cyborg-all-in-one`` and the quickstart,
where every connection of the race is a connection of its own.
"""

import os
import threading

import fixtures
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
from oslo_utils import uuidutils
import testtools

from cyborg.common import pci_address
from cyborg import context
from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg.db import metric as metric_db
from cyborg.db import migration
from cyborg.db import models
from cyborg.db import nova_event as nova_event_db
from cyborg.db import programming as programming_db
from cyborg import exception
from cyborg import states
from cyborg.tests import db_utils


class _CyborgSchema(test_fixtures.GeneratesSchemaFromMigrations,
                    test_fixtures.DeletesFromSchema):
    """Our migrated schema behind cyborg.db.api's facade, emptied per test.

    The migrations run when a test process first needs the database; the
    suite's ``conftest`` keeps it for the whole run, and each test leaves
    it with every table empty.
    """

    def get_enginefacade(self):
        return db_api.main_context_manager

    def generate_schema_migrations(self, engine):
        migration.upgrade('head', engine=engine)

    def delete_from_schema(self, engine):
        with engine.begin() as connection:
            for table in reversed(models.BASE.metadata.sorted_tables):
                connection.execute(table.delete())


class MySQLFixture(_CyborgSchema, test_fixtures.MySQLOpportunisticFixture):
    pass


class PostgreSQLFixture(_CyborgSchema,
                        test_fixtures.PostgresqlOpportunisticFixture):
    pass


class SQLiteFileFixture(fixtures.Fixture):
    """A migrated SQLite file behind cyborg.db.api, set up as its own.

    It is set up as :func:`cyborg.db.api.configure` sets up a file.

    :param query: appended to the connection URL (``?timeout=0``).
    """

    def __init__(self, query=''):
        super().__init__()
        self.query = query

    def _setUp(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'cyborg.sqlite')
        facade = enginefacade.transaction_context()
        facade.configure(**db_api.facade_options(
            {'connection': 'sqlite:///' + path + self.query}))
        facade.append_on_engine_create(db_api.tune_sqlite_files)
        migration.upgrade('head', engine=facade.writer.get_engine())
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_api.main_context_manager, facade))
        self.addCleanup(facade.writer.get_engine().dispose)
        self.addCleanup(facade.reader.get_engine().dispose)
        self.path = path


class _Concurrency:

    THREADS = 8

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()
        self.profile = db_utils.create_profile(self.ctx)
        _, self.deployable, self.handles = db_utils.create_device_tree(
            self.ctx, handles=3)

    def _bind_started_arqs(self, count):
        arqs = db_utils.create_arqs(self.ctx, self.profile, count=count)
        values = {'hostname': 'host1'}
        return [arq_db.update_state(
                    self.ctx, arq.uuid, states.BIND_STARTED,
                    values=dict(values,
                                instance_uuid=uuidutils.generate_uuid()))
                for arq in arqs]

    def test_handles_never_shared(self):
        arqs = self._bind_started_arqs(self.THREADS)
        results = db_utils.race(arq_db.claim_handle,
                                [(a.uuid, self.deployable.id) for a in arqs])
        bound = [r for r in results if not isinstance(r, Exception)]
        refused = [r for r in results if isinstance(r, Exception)]
        self.assertEqual(len(self.handles), len(bound))
        self.assertEqual({h.id for h in self.handles},
                         {r.handle.id for r in bound})
        self.assertEqual(
            {exception.AttachHandleUnavailable},
            {type(r) for r in refused})
        in_use = db_api.get_all(self.ctx, 'attach_handle',
                                filters={'in_use': True})
        self.assertEqual(len(self.handles), len(in_use))

    def test_one_function_never_claimed_twice(self):
        # Another device's handle is the function 0000:5e:00.1 too: of
        # the claims racing for both, one gets it (see
        # cyborg.conductor.inventory_plan.functions).
        _, other, _ = db_utils.create_device_tree(
            self.ctx, handles=1, pci_address='0000:5e:00.4')
        arqs = self._bind_started_arqs(self.THREADS)
        db_utils.race(arq_db.claim_handle, [
            (a.uuid, (self.deployable.id, other.id)[i % 2])
            for i, a in enumerate(arqs)])
        functions = [pci_address.address_of(h.attach_info)
                     for h in db_api.get_all(self.ctx, 'attach_handle',
                                             filters={'in_use': True})]
        self.assertEqual(sorted(set(functions)), sorted(functions))
        self.assertEqual(3, len(functions))

    def test_one_winner_per_transition(self):
        arq = db_utils.create_arqs(self.ctx, self.profile)[0]
        results = db_utils.race(
            arq_db.update_state,
            [(arq.uuid, states.BIND_STARTED)] * self.THREADS)
        winners = [r for r in results if not isinstance(r, Exception)]
        self.assertEqual(1, len(winners))
        self.assertEqual(
            {exception.AcceleratorRequestInvalidState},
            {type(r) for r in results if isinstance(r, Exception)})

    def test_creates_at_once_each_get_their_rows(self):
        results = db_utils.race(arq_db.create_for_profile,
                                [(self.profile.name, 'p1', 1)] * self.THREADS)
        rows = [row for result in results for row in result]
        self.assertEqual(self.THREADS, len({row.id for row in rows}))
        columns = [c.name for c in arq_db._MODEL.__table__.columns]
        for row in rows:
            stored = db_api.get(self.ctx, 'accelerator_request', row.uuid)
            # As stored; the creation time to the second (what RPC
            # carries), as a server's DATETIME keeps it.
            self.assertEqual(
                {c: getattr(stored, c) for c in columns if c != 'created_at'},
                {c: getattr(row, c) for c in columns if c != 'created_at'})
            self.assertEqual(stored.created_at.replace(microsecond=0),
                             row.created_at.replace(microsecond=0))

    def test_each_nova_event_taken_once(self):
        arqs = self._bind_started_arqs(12)
        for arq in arqs:
            arq_db.bind_failed(self.ctx, arq.uuid)
        results = db_utils.race(nova_event_db.take_due,
                                [(5, 60)] * self.THREADS)
        taken = [e.arq_uuid for r in results for e in r]
        self.assertEqual(len(set(taken)), len(taken))
        self.assertTrue(taken)
        # A thread that lost every row it saw takes nothing this time;
        # what nobody took is still due.
        left = [e.arq_uuid for e in nova_event_db.take_due(self.ctx, 20, 60)]
        self.assertEqual(sorted(a.uuid for a in arqs), sorted(taken + left))
        self.assertEqual([], nova_event_db.take_due(self.ctx, 20, 60))

    def test_observations_at_once_all_count(self):
        # The first observations of a series make its rows at once.
        db_utils.race(metric_db.observe,
                      [('h', 'result=x', i % 3, 3, 1.0)
                       for i in range(self.THREADS)])
        self.assertEqual(
            [(0, 3), (1, 6), (2, self.THREADS)],
            [(bucket, observed) for _name, _labels, bucket, observed, _sum
             in metric_db.buckets(self.ctx)])
        # The aggregates /metrics reads run on every engine.
        snapshot = metric_db.snapshot(self.ctx)
        self.assertEqual([('host1', 'FPGA', None, False, 'enabled', 1, 0)],
                         [tuple(row) for row in snapshot.devices])
        self.assertEqual([('host1', 'FPGA', False, 3)], snapshot.handles)


class _RowLocks:
    """What a transaction locks, on the servers that lock rows."""

    def test_claims_of_two_deployables_of_one_host_wait_for_neither(self):
        # A claim locks its deployable's root, then the host's PCI
        # handles: while one transaction holds its root, a claim of
        # another deployable of the host neither waits for it nor, as
        # the first goes on, deadlocks with it.
        _, other, _ = db_utils.create_device_tree(
            self.ctx, handles=1, pci_address='0000:5f:00.0')
        first, second = self._bind_started_arqs(2)
        claimed = threading.Event()

        def claim_other():
            arq_db.claim_handle(context.get_admin_context(), second.uuid,
                                other.id)
            claimed.set()

        holder = context.get_admin_context()
        thread = threading.Thread(target=claim_other)
        with db_api.main_context_manager.writer.using(holder):
            programming_db.check_free(holder.session, self.deployable.id)
            thread.start()
            self.addCleanup(thread.join)
            self.assertTrue(claimed.wait(10),
                            'the claim waited for the other deployable')
            arq_db.claim_handle(holder, first.uuid, self.deployable.id)
        self.assertEqual(2, len(db_api.get_all(
            self.ctx, 'attach_handle', filters={'in_use': True})))


class SQLiteFileTestCase(testtools.TestCase):
    """A test case on a :class:`SQLiteFileFixture`."""

    def setUp(self):
        super().setUp()
        self.useFixture(SQLiteFileFixture())


class TestConcurrencySQLiteFile(_Concurrency, SQLiteFileTestCase):
    pass


class TestConcurrencyMySQL(_Concurrency, _RowLocks,
                           test_fixtures.OpportunisticDBTestMixin,
                           testtools.TestCase):
    FIXTURE = MySQLFixture


class TestConcurrencyPostgreSQL(_Concurrency, _RowLocks,
                                test_fixtures.OpportunisticDBTestMixin,
                                testtools.TestCase):
    FIXTURE = PostgreSQLFixture
