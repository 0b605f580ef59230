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
"""``cyborg-dbsync``: create or upgrade the database schema.

``upgrade`` first converts a database of openstack-cyborg 17.0.0, and
says what it carried over. Usage::

    cyborg-dbsync [--config-file cyborg.conf] upgrade [--revision REV]
    cyborg-dbsync version
    cyborg-dbsync stamp REVISION          (or: stamp --revision REVISION)
    cyborg-dbsync create_schema
    cyborg-dbsync online_data_migrations

``create_schema``, ``stamp --revision`` and ``online_data_migrations``
are openstack-cyborg 17.0.0's commands, kept so that the tools and
upgrade guides written for it keep working.
"""

import sys

from alembic import util as alembic_util
from oslo_config import cfg

import cyborg.conf
from cyborg.db import cyborg17
from cyborg.db import migration
from cyborg import exception
from cyborg.i18n import _
from cyborg import startup

CONF = cyborg.conf.CONF


def _upgrade():
    found = migration.upgrade(CONF.command.revision)
    if found is not None:
        print('Converted: %s' % cyborg17.summary(found))
        for warning in found.warnings:
            print('Warning: %s.' % warning)
    print('Database is at revision %s' % migration.version())


def _version():
    print(migration.version() or 'None (empty database)')


def _stamp():
    revision = CONF.command.revision or CONF.command.revision_option
    if not revision or (CONF.command.revision and
                        CONF.command.revision_option):
        raise exception.DatabaseSchemaRefused(reason=_(
            'stamp takes one revision: stamp REVISION or stamp --revision '
            'REVISION.'))
    migration.stamp(revision)
    print('Database stamped at revision %s' % migration.version())


def _create_schema():
    """17.0.0's command for a new database: ``upgrade`` on an empty one."""
    current = migration.version()
    if current is not None:
        raise exception.DatabaseSchemaRefused(reason=_(
            'The database is already at revision %s: use cyborg-dbsync '
            'upgrade.') % current)
    migration.upgrade('head')
    print('Database schema created at revision %s' % migration.version())


def _online_data_migrations():
    """17.0.0's backfills, which ``upgrade`` does as it converts.

    openstack-cyborg filled the project of old accelerator requests and
    the state of old devices in place, while it served; here ``upgrade``
    writes every row of its database whole as it converts it, so a
    database at the head revision has nothing left to migrate.
    """
    current = migration.version()
    if current != migration.head():
        raise exception.DatabaseSchemaRefused(reason=_(
            'The database is at revision %(current)s, not %(head)s: run '
            'cyborg-dbsync upgrade first.') % {
                'current': current or 'None (empty database)',
                'head': migration.head()})
    print('Nothing to migrate: the database is at revision %s, and '
          'cyborg-dbsync upgrade migrates the data with the schema.'
          % current)


def _add_parsers(subparsers):
    parser = subparsers.add_parser(
        'upgrade', help='Run migrations up to REVISION (default: head).')
    parser.add_argument('--revision', default='head')
    parser.set_defaults(func=_upgrade)

    parser = subparsers.add_parser(
        'version', help='Print the revision the database is at.')
    parser.set_defaults(func=_version)

    parser = subparsers.add_parser(
        'stamp', help='Record REVISION without running migrations.')
    parser.add_argument('revision', nargs='?')
    # openstack-cyborg 17.0.0's spelling.
    parser.add_argument('--revision', dest='revision_option')
    parser.set_defaults(func=_stamp)

    parser = subparsers.add_parser(
        'create_schema',
        help='Create the schema in an empty database (as upgrade does).')
    parser.set_defaults(func=_create_schema)

    parser = subparsers.add_parser(
        'online_data_migrations',
        help='Check that no data is left to migrate (upgrade migrates it).')
    parser.set_defaults(func=_online_data_migrations)


_COMMAND = cfg.SubCommandOpt('command', title='Commands',
                             handler=_add_parsers)


def main(argv=None):
    """Run the sub-command; exit status 1 when it is refused."""
    argv = sys.argv if argv is None else argv
    CONF.register_cli_opt(_COMMAND)
    startup.prepare_service(argv)
    try:
        CONF.command.func()
    except (alembic_util.CommandError,
            exception.DatabaseNotConvertible,
            exception.DatabaseSchemaRefused) as e:
        print('cyborg-dbsync: %s' % e, file=sys.stderr)
        return 1
    return 0
