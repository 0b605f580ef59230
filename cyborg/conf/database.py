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

"""Options of the [database] group, defined by oslo.db."""

import copy

from oslo_config import cfg
from oslo_db import options as db_options

from cyborg.conf import ignored

# A file under state_path, so a single-host or development deployment works
# without a database server; production sets a MySQL/MariaDB or PostgreSQL
# URL instead.
DEFAULT_CONNECTION = 'sqlite:///$state_path/cyborg.sqlite'

database_group = cfg.OptGroup(
    'database',
    title='Database options',
    help='How cyborg-api, cyborg-conductor and the management commands '
         '(cyborg-dbsync, cyborg-manage, cyborg-status) reach the Cyborg '
         'database. The options are those of oslo.db; only the default '
         'connection is Cyborg\'s.')


database_opts = [
    ignored.option(
        cfg.StrOpt, 'mysql_engine',
        'the database migrations create every MySQL table with InnoDB.'),
]


def register_opts(conf):
    conf.register_group(database_group)
    db_options.set_defaults(conf, connection=DEFAULT_CONNECTION)
    conf.register_opts(database_opts, group=database_group)


def list_opts():
    # oslo.db hands out its module-level option objects; change the default
    # on copies so the sample shows Cyborg's connection without altering
    # the library's options for other users in the same process.
    opts = []
    for _group, group_opts in db_options.list_opts():
        opts.extend(copy.deepcopy(group_opts))
    cfg.set_defaults(opts, connection=DEFAULT_CONNECTION)
    return {database_group: opts + database_opts}
