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
"""Start-up shared by every process: config, logging, database, objects.

Only the composition roots (``cyborg.cmd`` and ``cyborg.wsgi``) call it.
"""

import os
import sys

from oslo_config import cfg
from oslo_log import log
import setproctitle

from cyborg.common import rpc
import cyborg.conf
from cyborg.conf import opts
from cyborg.db import api as db_api
from cyborg import objects
from cyborg import version

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


def process_argv(name, argv=None):
    """The arguments of service ``name``; without ``argv``, its process's.

    A service started as a program (``argv`` None) calls itself ``name``
    in ps and top, however it was launched: the quickstart and the tests
    start services as ``python -c``, which would show as ``-c``. cotyledon
    titles its master and worker processes after ``sys.argv[0]`` too.
    """
    if argv is not None:
        return argv
    sys.argv[0] = name
    setproctitle.setproctitle(' '.join(sys.argv))
    return sys.argv


def parse_config(argv, default_config_files=None):
    """Parse ``argv`` and config files, then set up logging.

    Enough for ``cyborg-agent``, which uses no database.
    """
    log.register_options(CONF)
    # Alembic narrates every connection at INFO; its own output is enough.
    log.set_defaults(default_log_levels=log.get_default_log_levels() +
                     ['alembic=WARN'])
    CONF(argv[1:], project='cyborg',
         version=version.version_info.version_string(),
         default_config_files=default_config_files)
    log.setup(CONF, 'cyborg')
    opts.warn_deprecated(CONF)


def prepare_service(argv, default_config_files=None):
    """Parse ``argv`` and config files, then set up the process."""
    parse_config(argv, default_config_files)
    db_api.configure(CONF)
    objects.register_all()


def prepare_server(name, argv=None, default_config_files=None):
    """:func:`prepare_service` for server ``name`` (API, conductor).

    Says so when ``[database] connection`` is not set, since a server
    then keeps its data in an SQLite file under ``state_path``.
    """
    prepare_service(process_argv(name, argv), default_config_files)
    if CONF.get_location('connection', 'database').location in (
            cfg.Locations.opt_default, cfg.Locations.set_default):
        LOG.warning('[database] connection is not set: using the SQLite '
                    'file %s, which suits one host for development. Set a '
                    'MySQL/MariaDB or PostgreSQL URL in production.',
                    CONF.database.connection)


def wsgi_config_args(argv):
    """The ``--config-file`` and ``--config-dir`` arguments of ``argv``.

    uWSGI's ``pyargv`` puts them in ``sys.argv``, where openstack-cyborg's
    WSGI module read them. Other arguments there are the web server's own
    (gunicorn's, for one): they are not Cyborg's to parse.
    """
    picked = []
    args = iter(argv[1:])
    for arg in args:
        if arg in ('--config-file', '--config-dir'):
            picked += [arg, next(args, '')]
        elif arg.startswith(('--config-file=', '--config-dir=')):
            picked.append(arg)
    return picked


def prepare_wsgi_api(argv):
    """Prepare an API process that a WSGI server loaded, without its database.

    The configuration comes from the ``--config-file`` and
    ``--config-dir`` of ``argv`` (:func:`wsgi_config_args`), else from the
    file ``CYBORG_CONFIG_FILE`` names, else from the usual places.
    """
    args = wsgi_config_args(argv)
    config_file = os.environ.get('CYBORG_CONFIG_FILE')
    prepare_server(
        'cyborg-api', ['cyborg-api'] + args,
        default_config_files=[config_file] if config_file and not args
        else None)
    # Not the database: the process that serves opens it, answering 503
    # until it can (cyborg.api.database_gate); a WSGI server loads the
    # application whether the database answers yet or not.
    rpc.init(CONF)


def connect_api(conf):
    """Open an API process's database engine and RPC transport.

    Done as the process starts (after the fork, for a worker), waiting
    for the database as ``[database] max_retries`` and ``retry_interval``
    allow: made by the first request instead, the engine would hold that
    request for as long while the database is down.
    """
    open_database()
    rpc.init(conf)


def open_database():
    """Open the database engine, waiting as ``[database] max_retries`` says.

    Raises oslo.db's ``DBConnectionError`` when the database does not
    answer in that time.
    """
    db_api.get_engine()
