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
"""Schema migrations with alembic: upgrade, current version, stamp.

``upgrade`` also converts a database of openstack-cyborg 17.0.0 into ours
(:mod:`cyborg.db.cyborg17`) before it runs our migrations.
"""

import os

from alembic import command as alembic_command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script

from cyborg.db import api as db_api
from cyborg.db import cyborg17
from cyborg import exception
from cyborg.i18n import _

_MIGRATIONS = os.path.join(os.path.dirname(__file__), 'migrations')


def _alembic_config(connection=None):
    config = alembic_config.Config(os.path.join(_MIGRATIONS, 'alembic.ini'))
    config.set_main_option('script_location', _MIGRATIONS)
    # env.py uses this connection when one is given (tests, dbsync).
    config.attributes['connection'] = connection
    return config


def upgrade(revision='head', engine=None):
    """Bring the schema to ``revision``, converting 17.0.0's first.

    :returns: the :class:`cyborg.db.cyborg17.Found` database that was
        converted, or None when there was none.
    :raises DatabaseNotConvertible: a database of openstack-cyborg 17.0.0
        that cannot be converted; nothing was changed.
    """
    engine = engine or db_api.get_engine()
    found = _convert_cyborg17(engine, revision)
    with engine.begin() as connection:
        alembic_command.upgrade(_alembic_config(connection), revision)
    return found


def _convert_cyborg17(engine, revision):
    with engine.connect() as connection:
        found = cyborg17.find(connection)
    if found is None:
        return None
    if revision in _ancestors(cyborg17.CONVERTS_TO) - {cyborg17.CONVERTS_TO}:
        found.problems.append(_(
            'Its rows are written to the tables of revision %s: ask for '
            'that revision or a later one.') % cyborg17.CONVERTS_TO)
    if found.problems:
        raise exception.DatabaseNotConvertible(
            reason=' '.join(found.problems))
    steps = (cyborg17.set_aside, _build_tables_to_copy_into, cyborg17.copy,
             cyborg17.drop)
    if engine.dialect.name == 'mysql':
        # MySQL commits each schema change at once: each step commits on
        # its own, and finds the work of those before it done.
        for step in steps:
            with engine.begin() as connection:
                step(connection)
    else:
        with engine.begin() as connection:
            for step in steps:
                step(connection)
    return found


def _build_tables_to_copy_into(connection):
    """Our migrations up to the revision whose tables the copy fills."""
    context = alembic_migration.MigrationContext.configure(connection)
    current = context.get_current_revision()
    if current is None or current in _ancestors(cyborg17.CONVERTS_TO):
        alembic_command.upgrade(_alembic_config(connection),
                                cyborg17.CONVERTS_TO)


def _ancestors(revision):
    """``revision`` and the revisions before it."""
    directory = alembic_script.ScriptDirectory.from_config(_alembic_config())
    return {script.revision
            for script in directory.iterate_revisions(revision, 'base')}


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
