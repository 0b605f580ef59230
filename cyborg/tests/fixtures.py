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
"""Test fixtures shared by unit and functional tests."""

import fixtures
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures

from cyborg.db import api as db_api
from cyborg.db import models


class Database(fixtures.Fixture):
    """A private in-memory SQLite schema, built from the models.

    The migrations are proved equal to the models on every engine by
    ``cyborg.tests.functional.db.test_migrations``, so unit tests may use
    the quicker ``create_all``.
    """

    def _setUp(self):
        facade = enginefacade.transaction_context()
        facade.configure(connection='sqlite://', sqlite_fk=True)
        models.BASE.metadata.create_all(facade.writer.get_engine())
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_api.main_context_manager, facade))
        self.addCleanup(facade.writer.get_engine().dispose)
