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
    cyborg-dbsync stamp REVISION
"""

import sys

from alembic import util as alembic_util
from oslo_config import cfg

import cyborg.conf
from cyborg.db import cyborg17
from cyborg.db import migration
from cyborg import exception
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
    migration.stamp(CONF.command.revision)
    print('Database stamped at revision %s' % migration.version())


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
    parser.add_argument('revision')
    parser.set_defaults(func=_stamp)


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
            exception.DatabaseNotConvertible) as e:
        print('cyborg-dbsync: %s' % e, file=sys.stderr)
        return 1
    return 0
