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
"""Builders of realistic rows for tests that need a populated database."""

import concurrent.futures
import contextlib
import threading

import sqlalchemy as sa

from cyborg import context
from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg import exception
from cyborg import states

_WRITES = ('INSERT', 'UPDATE', 'DELETE')


def create_device_tree(context, hostname='host1', handles=2,
                       pci_address='0000:5e:00.0', resource_class=None,
                       traits=(), attach_type='PCI', asked_type=None,
                       name=None, status=states.DEVICE_ENABLED,
                       device_type='FPGA', vendor='8086',
                       model='PAC Arria10', driver_name='intel_fpga'):
    """One device with one deployable offering ``handles`` VFs.

    By default the device is an Intel FPGA; ``device_type``, ``vendor``,
    ``model`` and ``driver_name`` make it another. The deployable is
    named ``name``, by default ``<hostname>_<address>`` (drivers name it
    after the PCI address alone); the device's status is ``status``.

    ``resource_class`` and ``traits``, when given, become the deployable's
    ``rc`` and ``trait<N>`` attributes, which binding checks. An MDEV
    ``attach_type`` gives handles of mdev type ``asked_type`` on the
    device's own address.

    :returns: (device, deployable, [attach_handle, ...]) rows.
    """
    domain, bus, rest = pci_address.split(':')
    slot, function = rest.split('.')
    device = db_api.create(context, 'device', {
        'type': device_type, 'vendor': vendor, 'model': model,
        'std_board_info': '{"product_id": "09c4"}',
        'hostname': hostname, 'status': status})
    cpid = db_api.create(context, 'controlpath_id', {
        'device_id': device.id, 'cpid_type': 'PCI',
        'cpid_info': {'domain': domain, 'bus': bus, 'device': slot,
                      'function': function}})
    deployable = db_api.create(context, 'deployable', {
        'name': name or '%s_%s' % (hostname, pci_address),
        'num_accelerators': handles, 'device_id': device.id,
        'driver_name': driver_name})
    if resource_class is not None:
        db_api.create(context, 'attribute', {
            'deployable_id': deployable.id, 'key': 'rc',
            'value': resource_class})
    for i, trait in enumerate(traits):
        db_api.create(context, 'attribute', {
            'deployable_id': deployable.id, 'key': 'trait%d' % i,
            'value': trait})
    attach_handles = []
    for vf in range(handles):
        info = {'domain': domain, 'bus': bus, 'device': slot,
                'function': str(vf + 1)}
        if attach_type == 'MDEV':
            info = {'domain': domain, 'bus': bus, 'device': slot,
                    'function': function, 'asked_type': asked_type}
        attach_handles.append(db_api.create(context, 'attach_handle', {
            'deployable_id': deployable.id, 'cpid_id': cpid.id,
            'attach_type': attach_type, 'attach_info': info}))
    return device, deployable, attach_handles


def create_profile(context, name='fpga-dp1', groups=None):
    groups = groups or [{'resources:FPGA': '1',
                         'trait:CUSTOM_FPGA_INTEL': 'required'}]
    return db_api.create(context, 'device_profile',
                         {'name': name, 'groups': groups,
                          'description': 'test profile'})


@db_api.main_context_manager.writer
def _insert_arqs(context, values, count):
    return [db_api.create(context, 'accelerator_request', values).uuid
            for _ in range(count)]


def create_arqs(context, profile, count=1, project_id='fake-project',
                **values):
    """``count`` ARQs of ``profile``'s first group, in one transaction.

    Written as an ARQ object writes itself (:func:`cyborg.db.api.create`),
    then read as the API reads it (with its profile and attach handle).
    """
    uuids = _insert_arqs(context, dict({
        'state': states.INITIAL, 'device_profile_id': profile.id,
        'device_profile_group_id': 0,
        'device_profile_group': profile.groups[0],
        'project_id': project_id}, **values), count)
    return [db_api.get(context, 'accelerator_request', uuid)
            for uuid in uuids]


@contextlib.contextmanager
def recorded_statements():
    """Collect the SQL statements run on Cyborg's engine in a block."""
    engine = db_api.get_engine()
    statements = []

    def record(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    sa.event.listen(engine, 'before_cursor_execute', record)
    try:
        yield statements
    finally:
        sa.event.remove(engine, 'before_cursor_execute', record)


def writes(statements, ignore_table=None):
    """The INSERT, UPDATE and DELETE statements, except on one table."""
    return [s for s in statements
            if s.split(None, 1)[0].upper() in _WRITES and
            not (ignore_table and ' %s ' % ignore_table in s + ' ')]


def race(func, args_list):
    """Call ``func(admin context, *args)`` for each args, all at once.

    Each call runs in its own thread, so in its own transaction; they are
    released together by a barrier.

    :returns: each call's result, or the CyborgException it raised.
    """
    barrier = threading.Barrier(len(args_list))

    def run(args):
        barrier.wait()
        try:
            return func(context.get_admin_context(), *args)
        except exception.CyborgException as e:
            return e

    with concurrent.futures.ThreadPoolExecutor(len(args_list)) as pool:
        return list(pool.map(run, args_list))


@contextlib.contextmanager
def meanwhile(prefix, func, *args, wait=1.0):
    """Run ``func(*args)`` in another thread once, mid-transaction.

    When this thread first sends Cyborg's engine a statement starting with
    ``prefix``, ``func`` starts in a thread of its own, and this one waits
    for it up to ``wait`` seconds (longer, and a database that locks more
    than the statement's rows would make the two wait on each other) before
    the statement goes on.

    :returns: a future of ``func``'s result, done when the block ends.
    """
    engine = db_api.get_engine()
    caller = threading.get_ident()
    pool = concurrent.futures.ThreadPoolExecutor(1)
    futures = []

    def before(conn, cursor, statement, parameters, context, executemany):
        if (threading.get_ident() == caller and not futures and
                statement.startswith(prefix)):
            futures.append(pool.submit(func, *args))
            concurrent.futures.wait(futures, timeout=wait)

    sa.event.listen(engine, 'before_cursor_execute', before)
    try:
        yield _Later(futures)
    finally:
        # The other thread's statements run through the listeners: remove
        # this one once they are done, not while they iterate over them.
        pool.shutdown(wait=True)
        sa.event.remove(engine, 'before_cursor_execute', before)


class _Later:
    """The future that :func:`meanwhile` will have started."""

    def __init__(self, futures):
        self._futures = futures

    def result(self):
        if not self._futures:
            raise AssertionError('no statement started the other thread')
        return self._futures[0].result()


def bind_arq(context, uuid, deployable_id):
    """Bind a BindStarted ARQ as the conductor does, minus its checks.

    :returns: the Bound row.
    """
    arq_db.claim_handle(context, uuid, deployable_id)
    return arq_db.update_state(context, uuid, states.BOUND,
                               expected=[states.BIND_STARTED])
