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
"""Migrations on SQLite, MariaDB and PostgreSQL.

Each test gets a fresh database from oslo.db's provisioning. MariaDB and
PostgreSQL are found through ``OS_TEST_DBAPI_ADMIN_CONNECTION`` (set by
``tools/run-tests.sh``); a test is skipped, saying why, only when its
server cannot be reached.
"""

from oslo_db.sqlalchemy import test_fixtures
from oslo_db.sqlalchemy import test_migrations
import sqlalchemy as sa
import testtools

from cyborg.db import migration
from cyborg.db import models


class _MigrationsMixin(test_fixtures.OpportunisticDBTestMixin):

    def setUp(self):
        super().setUp()
        self.engine = self._get_default_provisioned_db().engine


class _ModelsMigrationsSync(_MigrationsMixin,
                            test_migrations.ModelsMigrationsSync):

    def get_engine(self):
        return self.engine

    def get_metadata(self):
        return models.BASE.metadata

    def db_sync(self, engine):
        migration.upgrade('head', engine=engine)

    def include_object(self, object_, name, type_, reflected, compare_to):
        return not (type_ == 'table' and name == 'alembic_version')


class _MigrationWalk(_MigrationsMixin):

    def test_walk_to_head_and_stamp(self):
        self.assertIsNone(migration.version(engine=self.engine))
        migration.upgrade('head', engine=self.engine)
        self.assertEqual(migration.head(),
                         migration.version(engine=self.engine))
        tables = set(sa.inspect(self.engine).get_table_names())
        self.assertLessEqual(set(models.BASE.metadata.tables), tables)
        # 0005's change counters went with the API's list cache (0010).
        self.assertNotIn('generations', tables)
        # Running it again is a no-op.
        migration.upgrade('head', engine=self.engine)
        migration.stamp('0001', engine=self.engine)
        self.assertEqual('0001', migration.version(engine=self.engine))


class TestModelsSyncSQLite(_ModelsMigrationsSync, testtools.TestCase):
    pass


class TestModelsSyncMySQL(_ModelsMigrationsSync, testtools.TestCase):
    FIXTURE = test_fixtures.MySQLOpportunisticFixture


class TestModelsSyncPostgreSQL(_ModelsMigrationsSync, testtools.TestCase):
    FIXTURE = test_fixtures.PostgresqlOpportunisticFixture


class TestWalkSQLite(_MigrationWalk, testtools.TestCase):
    pass


class TestWalkMySQL(_MigrationWalk, testtools.TestCase):
    FIXTURE = test_fixtures.MySQLOpportunisticFixture


class TestWalkPostgreSQL(_MigrationWalk, testtools.TestCase):
    FIXTURE = test_fixtures.PostgresqlOpportunisticFixture
