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
"""An SQLite file as cyborg.db.api sets it up: readers never wait.

The file uses the write-ahead log; read-only transactions run on
read-only connections that take no lock, so they go on while another
connection holds the write lock; connections are kept between
transactions. Writers begin with one ``BEGIN IMMEDIATE`` and queue on
their process's lock rather than in SQLite's busy handler.
"""

import sqlite3
import sys
import threading
import time

import sqlalchemy as sa

from cyborg import context
from cyborg.db import api as db_api
from cyborg import exception
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests.functional.db import test_concurrency


class SQLiteFileTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(test_concurrency.SQLiteFileFixture())
        self.ctx = context.get_admin_context()
        self.profile = db_utils.create_profile(self.ctx, name='p1')

    def test_write_ahead_log(self):
        with sqlite3.connect(self.db.path) as connection:
            self.assertEqual(
                ('wal',),
                connection.execute('PRAGMA journal_mode').fetchone())

    def test_readers_go_on_while_the_write_lock_is_held(self):
        # A busy timeout of 0: a reader that needed the lock would fail
        # at once with "database is locked" rather than wait for it.
        writer = sqlite3.connect(self.db.path, timeout=0,
                                 isolation_level=None)
        self.addCleanup(writer.close)
        writer.execute('BEGIN IMMEDIATE')
        writer.execute("UPDATE device_profiles SET description = 'new'")
        rows = db_api.get_all(self.ctx, 'device_profile')
        # It sees what was committed before, not the open transaction.
        self.assertEqual([(self.profile.uuid, self.profile.description)],
                         [(r.uuid, r.description) for r in rows])
        writer.execute('COMMIT')
        self.assertEqual('new', db_api.get(self.ctx, 'device_profile',
                                           self.profile.uuid).description)

    def test_readers_cannot_write(self):
        @db_api.main_context_manager.reader
        def write_in_a_reader(context):
            context.session.execute(sa.text(
                "UPDATE device_profiles SET description = 'x'"))

        error = self.assertRaises(sa.exc.OperationalError,
                                  write_in_a_reader, self.ctx)
        self.assertIn('readonly database', str(error))

    def test_a_writer_sends_one_begin_immediate(self):
        statements = []
        engine = db_api.get_engine()

        def record(conn, cursor, statement, *args):
            statements.append(statement)
        sa.event.listen(engine, 'before_cursor_execute', record)
        self.addCleanup(sa.event.remove, engine, 'before_cursor_execute',
                        record)
        db_api.update(self.ctx, 'device_profile', self.profile.uuid,
                      {'description': 'new'})
        self.assertEqual('BEGIN IMMEDIATE', statements[0])
        self.assertNotIn('BEGIN', statements)
        self.assertNotIn('ROLLBACK', statements)

    def test_a_failed_writer_lets_the_next_one_in(self):
        self.assertRaises(exception.DuplicateEntry, db_utils.create_profile,
                          self.ctx, name='p1')
        # On another thread, as the lock is no thread's own.
        created = []
        writer = threading.Thread(target=lambda: created.append(
            db_utils.create_profile(self.ctx, name='p2')))
        writer.start()
        writer.join(timeout=4)
        self.assertEqual(['p2'], [p.name for p in created])


class WriterQueueTest(base.TestCase):
    """The writers of a process queue on its lock, not in SQLite's."""

    def setUp(self):
        super().setUp()
        # A busy timeout of 0: a writer that asked SQLite for the write
        # lock while another holds it would fail at once.
        self.useFixture(test_concurrency.SQLiteFileFixture('?timeout=0'))
        self.ctx = context.get_admin_context()

    def _waits_for_the_lock(self, thread):
        """Whether ``thread`` is waiting in cyborg.db.api's begin."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            frame = sys._current_frames().get(thread.ident)
            while frame is not None:
                if frame.f_code.co_name == '_begin_immediate':
                    return True
                frame = frame.f_back
            time.sleep(0.01)  # no event marks a thread waiting on a lock
        return False

    def test_a_writer_waits_for_the_one_writing(self):
        holding, done = threading.Event(), threading.Event()

        @db_api.main_context_manager.writer
        def hold(context):
            db_utils.create_profile(context, name='first')
            holding.set()
            done.wait(timeout=10)

        first = threading.Thread(target=hold, args=(self.ctx,))
        first.start()
        self.addCleanup(first.join)
        self.addCleanup(done.set)
        holding.wait(timeout=10)
        results = []

        def write():
            try:
                results.append(db_utils.create_profile(
                    context.get_admin_context(), name='second').name)
            except Exception as e:  # a failure is the result under test
                results.append(e)

        second = threading.Thread(target=write)
        second.start()
        self.assertTrue(self._waits_for_the_lock(second))
        done.set()
        second.join(timeout=10)
        self.assertEqual(['second'], results)
