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
"""Schema migrations with alembic: upgrade, current version, stamp."""

import os

from alembic import command as alembic_command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script

from cyborg.db import api as db_api

_MIGRATIONS = os.path.join(os.path.dirname(__file__), 'migrations')


def _alembic_config(connection=None):
    config = alembic_config.Config(os.path.join(_MIGRATIONS, 'alembic.ini'))
    config.set_main_option('script_location', _MIGRATIONS)
    # env.py uses this connection when one is given (tests, dbsync).
    config.attributes['connection'] = connection
    return config


def upgrade(revision='head', engine=None):
    """Bring the schema to ``revision``."""
    engine = engine or db_api.get_engine()
    with engine.begin() as connection:
        alembic_command.upgrade(_alembic_config(connection), revision)


def stamp(revision, engine=None):
    """Record ``revision`` as the current one without running it."""
    engine = engine or db_api.get_engine()
    with engine.begin() as connection:
        alembic_command.stamp(_alembic_config(connection), revision)


def version(engine=None):
    """Return the schema revision the database is at, or None."""
    engine = engine or db_api.get_engine()
    with engine.connect() as connection:
        context = alembic_migration.MigrationContext.configure(connection)
        return context.get_current_revision()


def head():
    """Return the newest revision this code knows."""
    directory = alembic_script.ScriptDirectory.from_config(_alembic_config())
    return directory.get_current_head()
