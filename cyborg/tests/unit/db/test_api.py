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
"""Tests of cyborg.db.api on SQLite: CRUD by noun, filters, paging."""

import ast
import os
import time

import fixtures
from oslo_db import exception as db_exc
from oslo_utils import uuidutils

from cyborg.db import api as db_api
from cyborg import exception
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils


class TestGenericAccess(base.TestCase):
    USES_DB = True

    def test_create_get_update_delete(self):
        device, _, _ = db_utils.create_device_tree(self.admin_context)
        self.assertTrue(uuidutils.is_uuid_like(device.uuid))
        got = db_api.get(self.admin_context, 'device', device.uuid)
        self.assertEqual('host1', got.hostname)
        self.assertEqual(states.DEVICE_ENABLED, got.status)
        self.assertIsNotNone(got.created_at)
        db_api.update(self.admin_context, 'device', device.uuid,
                      {'status': states.DEVICE_MAINTAINING})
        got = db_api.get(self.admin_context, 'device', device.uuid)
        self.assertEqual(states.DEVICE_MAINTAINING, got.status)
        self.assertIsNotNone(got.updated_at)

    def test_unknown_uuid_raises_noun_not_found(self):
        missing = uuidutils.generate_uuid()
        for noun, exc in [('device', exception.DeviceNotFound),
                          ('deployable', exception.DeployableNotFound),
                          ('attribute', exception.AttributeNotFound),
                          ('attach_handle', exception.AttachHandleNotFound),
                          ('device_profile',
                           exception.DeviceProfileNotFound),
                          ('accelerator_request',
                           exception.AcceleratorRequestNotFound)]:
            self.assertRaises(exc, db_api.get, self.admin_context, noun,
                              missing)
            self.assertRaises(exc, db_api.delete, self.admin_context, noun,
                              missing)
            self.assertRaises(exc, db_api.update, self.admin_context, noun,
                              missing, {})

    def test_duplicate_name_raises_and_keeps_the_first(self):
        first = db_utils.create_profile(self.admin_context, name='dp')
        exc = self.assertRaises(exception.DuplicateEntry,
                                db_utils.create_profile,
                                self.admin_context, name='dp')
        self.assertIn('name', str(exc))
        rows = db_api.get_all(self.admin_context, 'device_profile')
        self.assertEqual([first.uuid], [r.uuid for r in rows])

    def test_duplicate_uuid_raises(self):
        device, _, _ = db_utils.create_device_tree(self.admin_context)
        self.assertRaises(
            exception.DuplicateEntry, db_api.create, self.admin_context,
            'device', {'uuid': device.uuid, 'type': 'GPU', 'vendor': '10de',
                       'model': 'x', 'hostname': 'h'})

    def test_missing_parent_row_is_invalid(self):
        self.assertRaises(
            exception.InvalidParameterValue, db_api.create,
            self.admin_context, 'deployable',
            {'name': 'd', 'num_accelerators': 1, 'device_id': 4242})

    def test_filters_are_exact_and_accept_lists(self):
        for host in ('host1', 'host2', 'host3'):
            db_utils.create_device_tree(self.admin_context, hostname=host)
        rows = db_api.get_all(self.admin_context, 'device',
                              filters={'hostname': 'host2'})
        self.assertEqual(['host2'], [r.hostname for r in rows])
        rows = db_api.get_all(self.admin_context, 'device',
                              filters={'hostname': ['host1', 'host3']})
        self.assertEqual({'host1', 'host3'}, {r.hostname for r in rows})
        self.assertRaises(exception.InvalidParameterValue, db_api.get_all,
                          self.admin_context, 'device',
                          filters={'no_such_column': 1})

    def test_paging_with_marker_and_sort(self):
        for name in ('c', 'a', 'b', 'd'):
            db_utils.create_profile(self.admin_context, name=name)
        page = db_api.get_all(self.admin_context, 'device_profile',
                              limit=2, sort_key='name')
        self.assertEqual(['a', 'b'], [r.name for r in page])
        page = db_api.get_all(self.admin_context, 'device_profile',
                              limit=2, sort_key='name',
                              marker=page[-1].uuid)
        self.assertEqual(['c', 'd'], [r.name for r in page])
        page = db_api.get_all(self.admin_context, 'device_profile',
                              sort_key='name', sort_dir='desc')
        self.assertEqual(['d', 'c', 'b', 'a'], [r.name for r in page])

    def test_bad_marker_and_sort_key_are_invalid(self):
        self.assertRaises(exception.InvalidParameterValue, db_api.get_all,
                          self.admin_context, 'device_profile',
                          marker=uuidutils.generate_uuid())
        self.assertRaises(exception.InvalidParameterValue, db_api.get_all,
                          self.admin_context, 'device_profile',
                          sort_key='bogus')


class TestRetryOnDeadlock(base.TestCase):

    def test_a_deadlock_is_retried_at_once(self):
        calls = []

        @db_api.retry_on_deadlock
        def transaction():
            calls.append(time.monotonic())
            if len(calls) < 3:
                raise db_exc.DBDeadlock()
            return 'done'

        self.assertEqual('done', transaction())
        # 50 ms, then a random wait up to 100 ms; oslo.db's default
        # would wait a second before the first retry.
        self.assertLess(calls[-1] - calls[0], 0.5)

    def test_every_writer_transaction_retries_deadlocks(self):
        # On Galera a certification failure surfaces as a deadlock at
        # COMMIT, on any write: each writer transaction is run again
        # whole, never turned into a 500 or a lost bind.
        db_dir = os.path.dirname(db_api.__file__)
        writers, missing = [], []
        for name in sorted(os.listdir(db_dir)):
            if not name.endswith('.py'):
                continue
            with open(os.path.join(db_dir, name)) as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if not isinstance(node, ast.FunctionDef):
                    continue
                decorators = [ast.unparse(d) for d in node.decorator_list]
                if not any(d.endswith('main_context_manager.writer')
                           for d in decorators):
                    continue
                writers.append(node.name)
                if not any(d.endswith('retry_on_deadlock')
                           for d in decorators[:1]):
                    missing.append('%s:%s' % (name, node.name))
        self.assertGreater(len(writers), 20)
        self.assertEqual([], missing)

    def test_a_deadlock_that_lasts_is_raised(self):
        calls = []

        @db_api.retry_on_deadlock
        def transaction():
            calls.append(None)
            raise db_exc.DBDeadlock()

        self.assertRaises(db_exc.DBDeadlock, transaction)
        self.assertEqual(6, len(calls))


class TestWriterQueue(base.TestCase):

    def test_one_writer_at_a_time(self):
        self.useFixture(fixtures.MonkeyPatch('cyborg.db.api._BUSY_TIMEOUT',
                                             0.01))
        writers = db_api._WriterQueue()
        lock = writers.enter()
        self.assertIsNotNone(lock)
        # The next one waits as long as SQLite would, then goes on to
        # SQLite's lock without this one.
        self.assertIsNone(writers.enter())
        lock.release()
        self.assertIs(lock, writers.enter())

    def test_a_forked_child_has_a_lock_of_its_own(self):
        writers = db_api._WriterQueue()
        parents = writers.enter()  # held by a thread as the process forks
        child = os.getpid() + 1
        self.useFixture(fixtures.MonkeyPatch('os.getpid', lambda: child))
        self.useFixture(fixtures.MonkeyPatch('cyborg.db.api._BUSY_TIMEOUT',
                                             0.01))
        childs = writers.enter()
        self.assertIsNotNone(childs)
        self.assertIsNot(parents, childs)
