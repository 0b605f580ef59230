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
"""Database access: the engine facade and reads and writes by noun.

The database layer is plain module functions in enginefacade
transactions, one module per noun beside this one
(:mod:`~cyborg.db.accelerator_request`, :mod:`~cyborg.db.device_profile`,
:mod:`~cyborg.db.attach_handle`, :mod:`~cyborg.db.host`,
:mod:`~cyborg.db.inventory`); this module holds the facade they share and
the generic access every noun's table has.

Every function takes a :class:`cyborg.context.RequestContext` first and
returns model rows. Filtering, sorting and paging happen in SQL. Bad input
raises a domain exception from :mod:`cyborg.exception` and changes nothing.

Only objects (:mod:`cyborg.objects`) and ``cyborg-dbsync`` call this layer:
the conductor writes through objects, and the API reads through them.
"""

import os
import threading

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db import options as db_options
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import exc_filters
from oslo_db.sqlalchemy import utils as sqlalchemyutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg import context as cyborg_context
from cyborg.db import models
from cyborg import exception
from cyborg.i18n import _

main_context_manager = enginefacade.transaction_context()

# The request context carries the transactions of this layer (its
# ``session`` and ``connection``): oslo.db's documented decorator, applied
# here rather than where the context is defined, so that processes without
# a database (the agent) never load SQLAlchemy. Every module of this layer
# imports this one before it opens a transaction.
enginefacade.transaction_context_provider(cyborg_context.RequestContext)


def _sqlite_file(url):
    """Whether SQLAlchemy ``url`` names an SQLite file (not memory)."""
    url = sa.engine.make_url(url)
    return url.get_backend_name() == 'sqlite' and url.database not in (
        None, '', ':memory:')


def _read_only(url):
    """The read-only connection URL of the SQLite file at ``url``."""
    url = sa.engine.make_url(url)
    return url.set(database='file:%s' % url.database,
                   query=dict(url.query, mode='ro', uri='true'))


#: The busy timeout of SQLite connections: sqlite3's default, which
#: oslo.db keeps.
_BUSY_TIMEOUT = 5.0
#: The key of a pooled connection's ``info`` that holds the writer lock it
#: holds (see :class:`_WriterQueue`).
_HOLDS_WRITER_LOCK = 'cyborg_holds_writer_lock'


class _WriterQueue:
    """The writers of one engine in one process: one at a time."""

    def __init__(self):
        self._pid, self._lock = os.getpid(), threading.Lock()

    def enter(self):
        """Wait for the lock; it, or None after ``_BUSY_TIMEOUT``.

        A child process gets a lock of its own: the one it inherits may
        have been held by a thread of its parent as it forked.
        """
        if self._pid != os.getpid():
            self._pid, self._lock = os.getpid(), threading.Lock()
        lock = self._lock
        return lock if lock.acquire(timeout=_BUSY_TIMEOUT) else None


def tune_sqlite_files(engine):
    """Tune an SQLite file for several threads and processes at once.

    Every connection uses the write-ahead log (``journal_mode=WAL``):
    readers never wait for a writer, nor a writer for readers. Its commits
    are synced at checkpoints (``synchronous=NORMAL``) unless
    ``[database] sqlite_synchronous = false`` turned syncing off: a power
    loss may undo the last commits, never corrupt the file.

    oslo.db begins SQLite transactions with a plain, deferred ``BEGIN``. A
    transaction that reads and then writes while another connection holds
    the write lock fails at once with "database is locked": SQLite does not
    wait, as the other writer is itself waiting for this reader to finish.
    On the writers' engine, oslo.db's ``BEGIN`` is sent as ``BEGIN
    IMMEDIATE`` instead (SQLAlchemy's ``before_cursor_execute`` event may
    change a statement), so writing transactions queue for the lock. It
    matters where the conductor's threads write at once to an SQLite file
    (``cyborg-all-in-one``, the quickstart). Read-only transactions run on
    read-only connections (see :func:`configure`) and keep the plain
    ``BEGIN``: they take no lock.

    The writers of one engine queue on a lock of the process before they
    ask SQLite for its own, and hold it until their connection is given
    back: the next one starts as soon as the last one ends. SQLite's busy
    handler, which would otherwise make them wait, polls in sleeps of 1 to
    100 ms. Other processes writing to the file (``cyborg-dbsync``, a
    second conductor) still wait for each other in SQLite's busy handler,
    and a writer that has waited for the process's lock as long as the
    driver's busy timeout (``_BUSY_TIMEOUT``) goes on to SQLite's lock
    without it, so a thread that opens a second writing transaction while
    it holds one fails with "database is locked" as before, never hangs.

    oslo.db's pool (a new connection per transaction on an SQLite file) is
    kept as it is. In-memory databases and other engines are left alone.
    """
    if not _sqlite_file(engine.url):
        return
    if engine.url.query.get('mode') == 'ro':
        return  # the writers' connections set the file up

    @sa.event.listens_for(engine, 'connect')
    def _write_ahead_log(dbapi_connection, record):
        dbapi_connection.execute('PRAGMA journal_mode=WAL')
        if dbapi_connection.execute('PRAGMA synchronous').fetchone()[0]:
            dbapi_connection.execute('PRAGMA synchronous=NORMAL')

    writers = _WriterQueue()

    @sa.event.listens_for(engine, 'before_cursor_execute', retval=True)
    def _begin_immediate(connection, cursor, statement, parameters, context,
                         executemany):
        if statement != 'BEGIN':
            return statement, parameters
        info = connection.info
        if info.get(_HOLDS_WRITER_LOCK) is None:
            info[_HOLDS_WRITER_LOCK] = writers.enter()
        return 'BEGIN IMMEDIATE', parameters

    @sa.event.listens_for(engine.pool, 'checkin')
    def _next_writer(dbapi_connection, record):
        lock = record.info.pop(_HOLDS_WRITER_LOCK, None)
        if lock is not None:
            lock.release()


main_context_manager.append_on_engine_create(tune_sqlite_files)


def facade_options(database):
    """The engine facade's options for ``[database]`` settings.

    On an SQLite file without ``slave_connection``, read-only transactions
    (``@main_context_manager.reader``) use read-only connections to the
    same file, which never take its write lock.

    Only oslo.db's own options are passed: the engine facade warns
    (``NotSupportedWarning``) about any other, such as the ignored
    ``mysql_engine`` of the replaced service (:mod:`cyborg.conf.database`),
    which an operator could do nothing about.

    :param database: option names and values, as ``[database]`` has them.
    """
    known = {opt.dest for _group, opts in db_options.list_opts()
             for opt in opts}
    options = {name: value for name, value in dict(database).items()
               if name in known}
    if (options.get('connection') and _sqlite_file(options['connection'])
            and not options.get('slave_connection')):
        options['slave_connection'] = _read_only(
            options['connection']).render_as_string(hide_password=False)
        options['synchronous_reader'] = False
    return options


@exc_filters.filters('postgresql', sa.exc.OperationalError,
                     r'.*connection to server .*failed')
def _postgresql_connect_failed(error, match, engine_name, is_disconnect):
    """A failed connect to PostgreSQL raises DBConnectionError.

    oslo.db knows libpq's older wording ("could not connect to server");
    libpq 14 and later say "connection to server at ... failed", which
    oslo.db would pass on as a bare OperationalError: the API would answer
    500 instead of 503, and a service starting before its database would
    not wait for it ([database] max_retries).
    """
    raise db_exc.DBConnectionError(error)


def configure(conf):
    """Point the engine facade at ``[database]`` of ``conf``."""
    main_context_manager.configure(**facade_options(conf.database.items()))


def get_engine():
    return main_context_manager.writer.get_engine()


# Per noun: the model and the exception raised when a uuid is unknown.
_NOUNS = {
    'device': (models.Device, exception.DeviceNotFound),
    'deployable': (models.Deployable, exception.DeployableNotFound),
    'attribute': (models.Attribute, exception.AttributeNotFound),
    'controlpath_id': (models.ControlpathID,
                       exception.ControlpathIDNotFound),
    'attach_handle': (models.AttachHandle, exception.AttachHandleNotFound),
    'device_profile': (models.DeviceProfile,
                       exception.DeviceProfileNotFound),
    'accelerator_request': (models.AcceleratorRequest,
                            exception.AcceleratorRequestNotFound),
}

#: Run a whole writer transaction again when the database reports a
#: deadlock (MySQL/MariaDB under concurrent conditional UPDATEs, a Galera
#: certification failure at COMMIT). The first retry waits 50 ms, each
#: later one a random time up to twice the last bound (oslo.db's jitter
#: on deadlocks): at most about 1.6 s over five retries. oslo.db's default
#: first wait of a whole second would make every deadlock a request that
#: takes a second longer than its peers.
retry_on_deadlock = oslo_db_api.wrap_db_retry(max_retries=5,
                                              retry_interval=0.05,
                                              retry_on_deadlock=True)


def _model(noun):
    return _NOUNS[noun][0]


def not_found(noun, key):
    exc = _NOUNS[noun][1]
    return exc(uuid=key, name=key)


def _filtered(query, model, filters):
    """Exact-match filters; a list or tuple value matches any member."""
    for key, value in (filters or {}).items():
        column = getattr(model, key, None)
        if column is None or key not in model.__table__.columns:
            raise exception.InvalidParameterValue(
                name=key, reason=_('not a filterable field'))
        if isinstance(value, (list, tuple, set, frozenset)):
            query = query.filter(column.in_(list(value)))
        else:
            query = query.filter(column == value)
    return query


def _paged(context, query, model, limit=None, marker=None, sort_key=None,
           sort_dir=None):
    sort_key = sort_key or 'id'
    if sort_key not in model.__table__.columns:
        raise exception.InvalidParameterValue(
            name='sort_key', reason=_('%s is not a sortable field')
            % sort_key)
    sort_keys = [sort_key] if sort_key == 'id' else [sort_key, 'id']
    marker_row = None
    if marker is not None:
        marker_row = context.session.query(model).filter_by(
            uuid=marker).first()
        if marker_row is None:
            raise exception.MarkerNotFound(marker=marker)
    try:
        return sqlalchemyutils.paginate_query(
            query, model, limit, sort_keys, marker=marker_row,
            sort_dir=sort_dir or 'asc')
    except db_exc.InvalidSortKey as e:
        raise exception.InvalidParameterValue(name='sort_key',
                                              reason=str(e))


# --- generic access by noun ------------------------------------------------

@retry_on_deadlock
@main_context_manager.writer
def create(context, noun, values):
    """Insert a row of ``noun``; a uuid is generated when absent."""
    values = dict(values)
    values.setdefault('uuid', uuidutils.generate_uuid())
    row = _model(noun)(**values)
    try:
        context.session.add(row)
        context.session.flush()
    except db_exc.DBDuplicateEntry as e:
        field = (e.columns or ['uuid'])[-1]
        raise exception.DuplicateEntry(kind=noun, field=field,
                                       value=values.get(field))
    except db_exc.DBReferenceError as e:
        raise exception.MissingReference(
            name=e.key or noun, reason=_('refers to a missing row'))
    return row


@main_context_manager.reader
def get(context, noun, uuid):
    row = context.session.query(_model(noun)).filter_by(uuid=uuid).first()
    if row is None:
        raise not_found(noun, uuid)
    return row


@main_context_manager.reader
def get_by_id(context, noun, row_id):
    row = context.session.query(_model(noun)).filter_by(id=row_id).first()
    if row is None:
        raise not_found(noun, row_id)
    return row


def _selected(session, model):
    """A query of ``model``'s rows, as plain rows where that will do.

    A model without relationships is read column by column: the rows
    carry the same attributes, and no ORM instance is made and tracked for
    each (200 device profiles: 1.7 to 1.8 ms of CPU as rows, 2.3 to 3.3
    ms as instances). A model with relationships is read as its
    instances, which load them.
    """
    if sa.inspect(model).relationships:
        return session.query(model)
    return session.query(*model.__table__.columns)


@main_context_manager.reader
def get_all(context, noun, filters=None, limit=None, marker=None,
            sort_key=None, sort_dir=None):
    """List rows of ``noun`` with exact-match ``filters``, paged."""
    model = _model(noun)
    query = _filtered(_selected(context.session, model), model, filters)
    return _paged(context, query, model, limit, marker, sort_key,
                  sort_dir).all()


@retry_on_deadlock
@main_context_manager.writer
def update(context, noun, uuid, values):
    row = get(context, noun, uuid)
    row.update(values)
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry as e:
        field = (e.columns or ['uuid'])[-1]
        raise exception.DuplicateEntry(kind=noun, field=field,
                                       value=values.get(field))
    return row


@retry_on_deadlock
@main_context_manager.writer
def delete(context, noun, uuid):
    count = context.session.query(_model(noun)).filter_by(
        uuid=uuid).delete(synchronize_session=False)
    if not count:
        raise not_found(noun, uuid)
