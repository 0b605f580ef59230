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
"""What one bind cycle costs in transactions, statements and RPC calls.

A cycle is what Nova does for an instance with one accelerator: create
the ARQ, bind it (its ``accelerator-request-bound`` event delivered),
unbind it, delete it, through the API application with the conductor in
this process. The counts are exact, so that the path cannot grow back
unnoticed; ``doc/source/contributor/performance.rst`` lists them. They
are counted through SQLAlchemy's engine events (``begin``, ``commit``,
``before_cursor_execute``) and by wrapping the function every RPC client
of Cyborg calls through (:func:`cyborg.common.rpc.call`).
"""

import collections
import contextlib
import json

import fixtures
from oslo_db.sqlalchemy import test_fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa
import webob

from cyborg.common import rpc
from cyborg import context
from cyborg.db import api as db_api
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.db import test_concurrency
from cyborg.tests import openstack_fixtures

#: The statements SQLite's driver gets to open a transaction (oslo.db
#: sends them): counted as transactions, not as statements.
_BEGIN = ('BEGIN', 'BEGIN IMMEDIATE')


def _counts(transactions, commits, statements, locking_reads, rpc_calls):
    return collections.Counter({
        'transactions': transactions, 'commits': commits,
        'statements': statements, 'locking reads': locking_reads,
        'rpc calls': rpc_calls})


@contextlib.contextmanager
def counted():
    """Count what the block costs, on every engine and RPC client."""
    counts = collections.Counter()
    engines = {db_api.main_context_manager.writer.get_engine(),
               db_api.main_context_manager.reader.get_engine()}

    def begin(conn):
        counts['transactions'] += 1

    def commit(conn):
        counts['commits'] += 1

    def statement(conn, cursor, text, parameters, context, executemany):
        if text not in _BEGIN:
            counts['statements'] += 1
            if ' FOR UPDATE' in text:
                counts['locking reads'] += 1

    listeners = [('begin', begin), ('commit', commit),
                 ('before_cursor_execute', statement)]
    for engine in engines:
        for name, listener in listeners:
            sa.event.listen(engine, name, listener)
    call = rpc.call

    def counted_call(*args, **kwargs):
        counts['rpc calls'] += 1
        return call(*args, **kwargs)

    try:
        with fixtures.MonkeyPatch('cyborg.common.rpc.call', counted_call):
            yield counts
    finally:
        for engine in engines:
            for name, listener in listeners:
                sa.event.remove(engine, name, listener)


class _BindCycle:
    """The cycle and its counts, on the engine the test case gives."""

    #: What each step costs: transactions, commits, statements (of which
    #: SELECT ... FOR UPDATE), RPC calls. The API reads the ARQ it changes
    #: in a transaction of its own.
    EXPECTED = {
        # The profile found and the ARQ inserted.
        'create': _counts(1, 1, 2, 0, 1),
        # The ARQ and the deployable's device and attributes read at once;
        # the ARQ moved to BindStarted, its handle claimed (the tree and
        # the host's PCI handles locked), Bound with its event, in one
        # transaction; the event removed once Nova took it.
        'bind': _counts(4, 2, 11, 2, 1),
        # The ARQ read; locked and read, released with its handle.
        'unbind': _counts(3, 1, 5, 1, 1),
        # The ARQ read twice; locked and read in one statement, its handle
        # released, deleted.
        'delete': _counts(3, 1, 5, 1, 1),
    }
    #: Whether the engine has locking reads (SQLite locks the file).
    LOCKING = True

    def setUp(self):
        super().setUp()
        self.useFixture(cyborg_fixtures.RPC())
        self.useFixture(cyborg_fixtures.Conductor())
        self.nova = self.useFixture(openstack_fixtures.NovaEvents()).receiver
        self.app = self.useFixture(cyborg_fixtures.API()).app
        ctx = context.get_admin_context()
        _, deployable, _ = db_utils.create_device_tree(
            ctx, resource_class='FPGA', traits=['CUSTOM_FPGA_INTEL'])
        self.rp_uuid = uuidutils.generate_uuid()
        db_api.update(ctx, 'deployable', deployable.uuid,
                      {'rp_uuid': self.rp_uuid})
        db_utils.create_profile(ctx, name='fpga')

    def _request(self, method, path, body=None, status=None):
        # Sent as Nova sends them: noauth's defaults are an admin with a
        # service token.
        request = webob.Request.blank('/v2' + path, method=method, headers={
            'Accept': 'application/json',
            'OpenStack-API-Version': 'accelerator 2.0'})
        if body is not None:
            request.body = json.dumps(body).encode()
            request.content_type = 'application/json'
        response = request.get_response(self.app)
        self.assertEqual(status, response.status_int, response.body)
        return response

    def _cycle(self):
        """One cycle: {step: its counts}."""
        steps = {}
        instance = uuidutils.generate_uuid()
        with counted() as steps['create']:
            arq = self._request('POST', '/accelerator_requests',
                                {'device_profile_name': 'fpga'},
                                status=201).json['arqs'][0]['uuid']
        with counted() as steps['bind']:
            self._request('PATCH', '/accelerator_requests', {arq: [
                {'op': 'add', 'path': '/hostname', 'value': 'host1'},
                {'op': 'add', 'path': '/device_rp_uuid',
                 'value': self.rp_uuid},
                {'op': 'add', 'path': '/instance_uuid',
                 'value': instance}]}, status=202)
        self.assertEqual([(arq, 'completed')],
                         [(e['tag'], e['status'])
                          for e in self.nova.for_instance(instance)])
        with counted() as steps['unbind']:
            self._request('PATCH', '/accelerator_requests', {arq: [
                {'op': 'remove', 'path': '/' + field}
                for field in ('hostname', 'device_rp_uuid',
                              'instance_uuid')]}, status=202)
        with counted() as steps['delete']:
            self._request('DELETE', '/accelerator_requests?arqs=' + arq,
                          status=204)
        return steps

    def test_counts(self):
        # The first cycle warms what is made once per process.
        self._cycle()
        steps = self._cycle()
        expected = {step: collections.Counter(counts)
                    for step, counts in self.EXPECTED.items()}
        if not self.LOCKING:
            for counts in expected.values():
                del counts['locking reads']
        # Counters compare missing keys as zeros.
        self.assertEqual(expected, steps)


class TestBindCycleSQLite(_BindCycle, base.TestCase):
    USES_DB = True
    LOCKING = False


class TestBindCycleMySQL(_BindCycle, test_fixtures.OpportunisticDBTestMixin,
                         base.TestCase):
    FIXTURE = test_concurrency.MySQLFixture


class TestBindCyclePostgreSQL(_BindCycle,
                              test_fixtures.OpportunisticDBTestMixin,
                              base.TestCase):
    FIXTURE = test_concurrency.PostgreSQLFixture
