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
"""The database of openstack-cyborg 17.0.0: recognise it and convert it.

A database that openstack-cyborg 17.0.0 made is recognised by its alembic
revision (:data:`REVISION`) or, where it carries none, by its tables.
:func:`cyborg.db.migration.upgrade` converts it before our own migrations
run, in four steps:

1. :func:`set_aside` renames its tables, ``alembic_version`` included,
   with the prefix :data:`PREFIX`;
2. our migrations build our tables up to :data:`CONVERTS_TO`;
3. :func:`copy` writes every row into our tables, ids kept, in one
   transaction;
4. :func:`drop` checks that every row set aside is in our tables, by
   uuid, and drops the tables set aside.

MySQL commits each schema change at once, so there each step is a
transaction of its own, and each finds the work of the steps before it
done: a conversion stopped midway finishes when run again. Elsewhere the
four steps are one transaction.

:func:`find` says what a conversion would carry over and what stops it,
and changes nothing; ``cyborg-status upgrade check`` reports it.
"""

import collections

import sqlalchemy as sa

from cyborg.db import cyborg17_rows
from cyborg import exception
from cyborg.i18n import _

#: The newest alembic revision of openstack-cyborg 17.0.0.
REVISION = 'b47c8f2d1e3a'
#: Its older revisions, oldest first: openstack-cyborg 17.0.0's own
#: ``cyborg-dbsync upgrade`` brings such a database to :data:`REVISION`.
OLDER_REVISIONS = (
    'f50980397351', 'd6f033d8fa5b', 'ede4e3f1a232', '589ff20545b7',
    'c1b5abada09c', '57539722e5cf', '22fb1af2d51e', '7b696fd94949',
    '62bcf2610c5d', '7a4fd0fc3f8c', '60d8ac91fd20', '7e6f1f107f2b',
    '899cead40bc9', '4cc1d79978fc', '6c77bd6afea5', '9625668549b5',
    'a35b4295a0e5')
#: Our revision whose tables :func:`copy` fills.
CONVERTS_TO = '0002'
#: What :func:`set_aside` puts before the name of each of its tables.
PREFIX = 'cyborg17_'
#: The engines on which openstack-cyborg 17.0.0 can build its schema.
ENGINES = ('mysql', 'sqlite')

_TIMESTAMPS = ('created_at', 'updated_at')
#: Each of its tables we carry over, in the order they are written, with
#: our table and the columns read from it (timestamps besides).
_TABLES = {
    'device_profiles': ('device_profiles', (
        'id', 'uuid', 'name', 'profile_json', 'description')),
    'devices': ('devices', (
        'id', 'uuid', 'type', 'vendor', 'model', 'std_board_info',
        'vendor_board_info', 'hostname', 'status', 'device_state')),
    'deployables': ('deployables', (
        'id', 'uuid', 'parent_id', 'root_id', 'name', 'num_accelerators',
        'device_id', 'rp_uuid', 'driver_name', 'bitstream_id')),
    'attributes': ('attributes', (
        'id', 'uuid', 'deployable_id', 'key', 'value')),
    'controlpath_ids': ('controlpath_ids', (
        'id', 'uuid', 'device_id', 'cpid_type', 'cpid_info')),
    'attach_handles': ('attach_handles', (
        'id', 'uuid', 'deployable_id', 'cpid_id', 'in_use', 'attach_type',
        'attach_info')),
    'extended_accelerator_requests': ('accelerator_requests', (
        'id', 'uuid', 'project_id', 'state', 'device_profile_id',
        'device_profile_group_id', 'hostname', 'device_rp_uuid',
        'instance_uuid', 'attach_handle_id', 'deployable_id')),
}
#: Its tables that are dropped, not carried over: 17.0.0 defines quota
#: tables but never writes them.
_DROPPED = ('quota_usages', 'reservations', 'alembic_version')


class Found:
    """A database of openstack-cyborg 17.0.0, as :func:`find` saw it."""

    def __init__(self, revision, set_aside):
        #: Its alembic revision; None where it carries none.
        self.revision = revision
        #: Whether an earlier conversion set its tables aside and stopped.
        self.set_aside = set_aside
        #: Our table name -> how many rows go there.
        self.counts = {}
        #: ARQ state -> how many ARQs are in it.
        self.arq_states = collections.Counter()
        #: What stops the conversion, one sentence each.
        self.problems = []
        #: What the conversion changes that an operator should know.
        self.warnings = []


def find(connection):
    """The database of openstack-cyborg 17.0.0 there, or None.

    Reads every row to convert, and changes nothing.

    :returns: a :class:`Found`; its ``problems`` say what stops the
        conversion, and are empty when it can go ahead.
    """
    names = set(sa.inspect(connection).get_table_names())
    set_aside_already = any(name.startswith(PREFIX) for name in names)
    if not (set_aside_already or 'extended_accelerator_requests' in names):
        return None
    source = _source_names(set_aside_already)
    found = Found(_revision(connection, names, source['alembic_version']),
                  set_aside_already)
    found.problems = _shape_problems(connection, names, source, found)
    if not (found.problems or set_aside_already and _copied(connection)):
        _convert(connection, source, found)
    return found


def summary(found):
    """One sentence: what is there and what a conversion carries over."""
    states_seen = ', '.join('%d %s' % (count, state) for state, count
                            in sorted(found.arq_states.items()))
    carried = ', '.join(
        '%d %s' % (found.counts.get(ours, 0), ours.replace('_', ' '))
        + (' (%s)' % states_seen
           if ours == 'accelerator_requests' and states_seen else '')
        for ours, _columns in _TABLES.values())
    text = _('A database of openstack-cyborg 17.0.0, %s') % (
        _('at revision %s') % found.revision if found.revision
        else _('recognised by its tables (it carries no revision)'))
    if found.set_aside:
        text += _(', whose conversion stopped midway')
    if found.counts:
        text += _('; rows to carry over: %s') % carried
    return text + '.'


def set_aside(connection):
    """Rename its tables with :data:`PREFIX`, unless that is done."""
    names = set(sa.inspect(connection).get_table_names())
    if any(name.startswith(PREFIX) for name in names):
        return
    theirs = [name for name in (*_TABLES, *_DROPPED) if name in names]
    quote = connection.dialect.identifier_preparer.quote_identifier
    if connection.dialect.name == 'mysql':
        # One statement renames them all, or none.
        connection.exec_driver_sql('RENAME TABLE ' + ', '.join(
            '%s TO %s' % (quote(name), quote(PREFIX + name))
            for name in theirs))
        return
    for name in theirs:
        connection.exec_driver_sql('ALTER TABLE %s RENAME TO %s' % (
            quote(name), quote(PREFIX + name)))
    # Index names are the schema's, not the table's, outside MySQL:
    # drop those of the tables set aside, whose names ours may reuse.
    inspector = sa.inspect(connection)
    for name in theirs:
        for index in inspector.get_indexes(PREFIX + name):
            connection.exec_driver_sql('DROP INDEX %s'
                                       % quote(index['name']))


def copy(connection):
    """Write the rows set aside into our tables, unless they are there.

    Our tables hold rows only once an earlier copy committed: then this
    does nothing, and :func:`drop` checks that copy.

    :raises DatabaseNotConvertible: a row cannot be converted.
    """
    if _copied(connection):
        return
    target = _target_tables(connection)
    found = Found(None, True)
    rows = _convert(connection, _source_names(True), found)
    if found.problems:
        raise exception.DatabaseNotConvertible(
            reason=' '.join(found.problems))
    for ours, table in target.items():
        values = rows[ours]
        if not values:
            continue
        if ours == 'deployables':
            # Parents and roots are set once every deployable is there.
            connection.execute(table.insert(), [
                dict(v, parent_id=None, root_id=None) for v in values])
            tree = [v for v in values
                    if v['parent_id'] is not None or v['root_id'] is not None]
            if tree:
                connection.execute(
                    table.update().where(table.c.id == sa.bindparam('b_id'))
                    .values(parent_id=sa.bindparam('parent_id'),
                            root_id=sa.bindparam('root_id')),
                    [{'b_id': v['id'], 'parent_id': v['parent_id'],
                      'root_id': v['root_id']} for v in tree])
        else:
            connection.execute(table.insert(), values)


def drop(connection):
    """Drop the tables set aside, once every row of theirs is in ours.

    :raises DatabaseNotConvertible: a row set aside is missing from ours.
    """
    names = set(sa.inspect(connection).get_table_names())
    target = _target_tables(connection)
    metadata = sa.MetaData()
    for theirs, (ours, _columns) in _TABLES.items():
        if PREFIX + theirs not in names:
            continue
        source = sa.Table(PREFIX + theirs, metadata,
                          autoload_with=connection)
        mine = target[ours]
        missing = connection.execute(
            sa.select(source.c.uuid).where(~sa.exists().where(
                mine.c.uuid == source.c.uuid)).limit(
                    cyborg17_rows.EXAMPLES)).scalars()
        missing = list(missing)
        if missing:
            raise exception.DatabaseNotConvertible(reason=_(
                'rows of %(table)s set aside are missing from %(ours)s: '
                '%(uuids)s') % {'table': PREFIX + theirs, 'ours': ours,
                                'uuids': ', '.join(missing)})
    quote = connection.dialect.identifier_preparer.quote_identifier
    # Children first: a table goes before those it refers to. A stop
    # midway leaves some of them, which the next run drops.
    for name in reversed((*_TABLES, *_DROPPED)):
        if PREFIX + name in names:
            connection.exec_driver_sql('DROP TABLE ' + quote(PREFIX + name))


def _source_names(set_aside_already):
    prefix = PREFIX if set_aside_already else ''
    return {name: prefix + name for name in (*_TABLES, *_DROPPED)}


def _copied(connection):
    """Whether our tables hold rows, as they do once a copy committed.

    Only once the tables of 17.0.0 are set aside are those names ours.
    """
    names = set(sa.inspect(connection).get_table_names())
    return any(connection.execute(sa.select(sa.func.count()).select_from(
        sa.table(ours))).scalar()
        for ours, _columns in _TABLES.values() if ours in names)


def _target_tables(connection):
    metadata = sa.MetaData()
    return {ours: sa.Table(ours, metadata, autoload_with=connection)
            for ours, _columns in _TABLES.values()}


def _revision(connection, names, table):
    if table not in names:
        return None
    quote = connection.dialect.identifier_preparer.quote_identifier
    # The table name is one of ours, quoted by the dialect.
    versions = connection.exec_driver_sql(
        'SELECT version_num FROM %s' % quote(table)  # nosec B608
    ).scalars().all()
    return ', '.join(sorted(versions)) or None


def _shape_problems(connection, names, source, found):
    """What stops the conversion before any row is read."""
    problems = []
    dialect = connection.dialect.name
    if dialect not in ENGINES:
        problems.append(_(
            'openstack-cyborg 17.0.0 cannot build its schema on %s, so '
            'this is not its database; only MySQL and SQLite databases '
            'are converted.') % dialect)
    if found.revision in OLDER_REVISIONS:
        problems.append(_(
            'The database is at revision %(revision)s of a release of '
            'openstack-cyborg older than 17.0.0: upgrade it to '
            '%(latest)s with the "cyborg-dbsync upgrade" of '
            'openstack-cyborg 17.0.0 first.')
            % {'revision': found.revision, 'latest': REVISION})
    elif found.revision not in (None, REVISION):
        problems.append(_(
            'The database is at revision %(revision)s, which is not one '
            'of openstack-cyborg (17.0.0 is at %(latest)s) nor ours.')
            % {'revision': found.revision, 'latest': REVISION})
    if not found.set_aside and names & {'accelerator_requests', 'hosts'}:
        problems.append(_(
            'The database holds tables of both openstack-cyborg 17.0.0 '
            '(extended_accelerator_requests) and of this release '
            '(accelerator_requests, hosts).'))
    inspector = sa.inspect(connection)
    for theirs, (_ours, columns) in _TABLES.items():
        table = source[theirs]
        if table not in names:
            # Tables set aside are all there until drop() starts, after
            # the copy: then those missing were dropped, not lost.
            if not found.set_aside:
                problems.append(_('Table %s is missing.') % table)
            continue
        present = {c['name'] for c in inspector.get_columns(table)}
        lacking = set(columns + _TIMESTAMPS) - present
        if lacking:
            problems.append(_(
                'Table %(table)s lacks the columns %(columns)s of '
                'openstack-cyborg 17.0.0.')
                % {'table': table, 'columns': ', '.join(sorted(lacking))})
    return problems


def _convert(connection, source, found):
    """Read its rows and make ours; fills ``found``.

    :returns: our table -> rows to insert.
    """
    names = set(sa.inspect(connection).get_table_names())
    metadata = sa.MetaData()
    read = collections.defaultdict(list)
    for theirs, (_ours, columns) in _TABLES.items():
        if source[theirs] not in names:
            continue  # dropped once copied; see _shape_problems
        table = sa.Table(source[theirs], metadata, autoload_with=connection)
        read[theirs] = connection.execute(
            sa.select(*(table.c[c] for c in columns + _TIMESTAMPS))
            .order_by(table.c.id)).mappings().all()
    rows = cyborg17_rows.convert(read, found)
    found.counts = {ours: len(rows[ours]) for ours, _c in _TABLES.values()}
    return rows
