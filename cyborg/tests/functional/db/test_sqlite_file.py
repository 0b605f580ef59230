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
transactions.
"""

import sqlite3

import sqlalchemy as sa

from cyborg import context
from cyborg.db import api as db_api
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

    def test_connections_are_kept(self):
        seen = []

        @db_api.main_context_manager.reader
        def connection_of(context):
            seen.append(context.session.connection().connection
                        .dbapi_connection)

        connection_of(self.ctx)
        connection_of(self.ctx)
        self.assertIs(seen[0], seen[1])
