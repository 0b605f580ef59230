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
"""Accelerator requests in the database, on SQLite: states and handles."""

from oslo_utils import uuidutils
import sqlalchemy as sa

from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg.db import nova_event as nova_event_db
from cyborg import exception
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils


class TestAcceleratorRequests(base.TestCase):
    USES_DB = True

    def setUp(self):
        super().setUp()
        self.profile = db_utils.create_profile(self.admin_context)
        _, self.deployable, self.handles = db_utils.create_device_tree(
            self.admin_context)

    def _arq(self, **values):
        return db_utils.create_arqs(self.admin_context, self.profile,
                                    **values)[0]

    def _bind_started(self):
        arq = self._arq()
        return arq_db.update_state(
            self.admin_context, arq.uuid, states.BIND_STARTED,
            values={'hostname': 'host1',
                    'instance_uuid': uuidutils.generate_uuid()})

    def test_created_arqs_carry_profile_name_and_snapshot(self):
        arqs = db_utils.create_arqs(self.admin_context, self.profile,
                                    count=3)
        self.assertEqual(3, len({a.uuid for a in arqs}))
        got = db_api.get(self.admin_context, 'accelerator_request',
                         arqs[0].uuid)
        self.assertEqual(states.INITIAL, got.state)
        self.assertEqual('fpga-dp1', got.device_profile.name)
        self.assertEqual(self.profile.groups[0], got.device_profile_group)

    def _state(self, arq):
        return db_api.get(self.admin_context, 'accelerator_request',
                          arq.uuid).state

    def _statements(self):
        statements = []
        engine = db_api.get_engine()

        def count(conn, cursor, statement, *args):
            statements.append(statement.split()[0].upper())
        sa.event.listen(engine, 'before_cursor_execute', count)
        self.addCleanup(sa.event.remove, engine, 'before_cursor_execute',
                        count)
        return statements

    def test_create_for_profile_makes_groups_times_units(self):
        profile = db_utils.create_profile(
            self.admin_context, name='two-groups',
            groups=[{'resources:FPGA': '2'}, {'resources:PGPU': '1'}])
        statements = self._statements()
        rows = arq_db.create_for_profile(self.admin_context, 'two-groups',
                                         'p1', limit=3)
        # The profile found, one INSERT per ARQ; nothing read back.
        self.assertEqual(['SELECT', 'INSERT', 'INSERT', 'INSERT'],
                         [s for s in statements if s != 'BEGIN'])
        self.assertEqual([0, 0, 1],
                         [r.device_profile_group_id for r in rows])
        columns = [c.name for c in
                   db_api._model('accelerator_request').__table__.columns]
        for row in rows:
            stored = db_api.get(self.admin_context, 'accelerator_request',
                                row.uuid)
            # Returned as a later read sees it.
            self.assertEqual({c: getattr(stored, c) for c in columns},
                             {c: getattr(row, c) for c in columns})
            self.assertEqual(profile.id, row.device_profile.id)
            self.assertEqual('two-groups', row.device_profile.name)
            self.assertIsNone(row.attach_handle)
            self.assertEqual('p1', row.project_id)
            self.assertEqual(states.INITIAL, row.state)

    def test_create_for_profile_refuses_more_units_than_the_limit(self):
        # Before any row is written: an amount of 999,999,999 would make
        # as many rows, one by one.
        db_utils.create_profile(
            self.admin_context, name='huge',
            groups=[{'resources:FPGA': '2'}, {'resources:PGPU': '999999999'}])
        e = self.assertRaises(exception.TooManyAccelerators,
                              arq_db.create_for_profile, self.admin_context,
                              'huge', 'p1', 256)
        self.assertIn('asks for 1000000001 accelerators', str(e))
        self.assertEqual([], db_api.get_all(self.admin_context,
                                            'accelerator_request'))
        db_utils.create_profile(
            self.admin_context, name='three',
            groups=[{'resources:FPGA': '2'}, {'resources:PGPU': '1'}])
        self.assertRaises(exception.TooManyAccelerators,
                          arq_db.create_for_profile, self.admin_context,
                          'three', 'p1', 2)
        # Up to the limit, the create is made.
        self.assertEqual(3, len(arq_db.create_for_profile(
            self.admin_context, 'three', 'p1', 3)))

    def test_create_for_profile_refuses_unknown_and_disabled_profiles(self):
        self.assertRaises(exception.DeviceProfileNotFound,
                          arq_db.create_for_profile, self.admin_context,
                          'nope', 'p1', 1)
        db_api.update(self.admin_context, 'device_profile',
                      self.profile.uuid, {'enabled': False})
        self.assertRaises(exception.DeviceProfileDisabled,
                          arq_db.create_for_profile, self.admin_context,
                          self.profile.name, 'p1', 1)
        self.assertEqual([], db_api.get_all(self.admin_context,
                                            'accelerator_request'))

    def test_allowed_transition(self):
        arq = self._bind_started()
        self.assertEqual(states.BIND_STARTED, arq.state)
        self.assertEqual('host1', arq.hostname)

    def test_start_binds_moves_all_or_none(self):
        unbound = self._bind_started()
        arq_db.unbind(self.admin_context, unbound.uuid)
        fresh = self._arq()
        values = {'hostname': 'host2', 'instance_uuid':
                  uuidutils.generate_uuid()}
        # The caller saw the unbound one as Initial: it changed since.
        self.assertRaises(exception.AcceleratorRequestInvalidState,
                          arq_db.start_binds, self.admin_context,
                          {fresh.uuid: (states.INITIAL, values),
                           unbound.uuid: (states.INITIAL, values)})
        rows = [db_api.get(self.admin_context, 'accelerator_request', u)
                for u in (fresh.uuid, unbound.uuid)]
        self.assertEqual([(states.INITIAL, None), (states.UNBOUND, None)],
                         [(r.state, r.hostname) for r in rows])

        self.assertEqual(({}, []), arq_db.start_binds(
            self.admin_context, {unbound.uuid: (states.UNBOUND, values),
                                 fresh.uuid: (states.INITIAL, values)}))
        rows = [db_api.get(self.admin_context, 'accelerator_request', u)
                for u in (fresh.uuid, unbound.uuid)]
        self.assertEqual({(states.BIND_STARTED, 'host2')},
                         {(r.state, r.hostname) for r in rows})

    def _bind_now(self, deployable_id, count=1):
        arqs = db_utils.create_arqs(self.admin_context, self.profile,
                                    count=count)
        instance = uuidutils.generate_uuid()
        self.statements = self._statements()
        return arq_db.start_binds(
            self.admin_context,
            {a.uuid: (states.INITIAL, {'hostname': 'host1',
                                       'instance_uuid': instance})
             for a in arqs},
            claims={a.uuid: deployable_id for a in arqs}, hold=60)

    def test_start_binds_binds_at_once(self):
        outcomes, events = self._bind_now(self.deployable.id)
        # Moved to BindStarted; the tree locked and its mark read, a free
        # handle found, the host's PCI handles locked, the handle claimed;
        # Bound with it, and its event recorded; nothing read back.
        self.assertEqual(['UPDATE', 'SELECT', 'SELECT', 'SELECT', 'UPDATE',
                          'UPDATE', 'INSERT'],
                         [s for s in self.statements if s != 'BEGIN'])
        [(uuid, claim)] = outcomes.items()
        row = db_api.get(self.admin_context, 'accelerator_request', uuid)
        self.assertEqual((states.BOUND, claim.handle.id, True),
                         (row.state, row.attach_handle_id, claim.bound))
        self.assertEqual((row.attach_handle.uuid, 'PCI'),
                         (claim.handle.uuid, claim.handle.attach_type))
        # The event is held for the caller: no sender takes it meanwhile.
        self.assertEqual([(row.instance_uuid, uuid, 'completed')],
                         [(e.instance_uuid, e.arq_uuid, e.status)
                          for e in events])
        self.assertEqual([], nova_event_db.take_due(self.admin_context,
                                                    10, 60))

    def test_start_binds_at_once_all_or_none(self):
        # Two handles for three binds: none is started.
        self.assertRaises(exception.AttachHandleUnavailable, self._bind_now,
                          self.deployable.id, count=3)
        self.assertEqual({states.INITIAL}, {r.state for r in db_api.get_all(
            self.admin_context, 'accelerator_request')})
        self.assertEqual([], db_api.get_all(
            self.admin_context, 'attach_handle', filters={'in_use': True}))
        self.assertIsNone(nova_event_db.next_due(self.admin_context))

    def test_start_binds_leaves_an_mdev_handle_binding(self):
        _, deployable, _ = db_utils.create_device_tree(
            self.admin_context, pci_address='0000:3b:00.0',
            attach_type='MDEV', asked_type='nvidia-222')
        outcomes, events = self._bind_now(deployable.id)
        [(uuid, claim)] = outcomes.items()
        row = db_api.get(self.admin_context, 'accelerator_request', uuid)
        self.assertEqual((states.BIND_STARTED, claim.handle.id, False, []),
                         (row.state, row.attach_handle_id, claim.bound,
                          events))

    def test_forbidden_transition_raises_and_changes_nothing(self):
        arq = self._arq()
        exc = self.assertRaises(
            exception.AcceleratorRequestInvalidState,
            arq_db.update_state, self.admin_context, arq.uuid,
            states.BOUND, values={'hostname': 'sneaky'})
        self.assertIn(states.INITIAL, str(exc))
        got = db_api.get(self.admin_context, 'accelerator_request',
                         arq.uuid)
        self.assertEqual(states.INITIAL, got.state)
        self.assertIsNone(got.hostname)

    def test_expected_state_narrows_the_transition(self):
        arq = self._arq()
        self.assertRaises(
            exception.AcceleratorRequestInvalidState,
            arq_db.update_state, self.admin_context, arq.uuid,
            states.BIND_STARTED, expected=[states.UNBOUND])

    def test_unknown_arq_state_change(self):
        self.assertRaises(exception.AcceleratorRequestNotFound,
                          arq_db.update_state, self.admin_context,
                          uuidutils.generate_uuid(), states.BIND_STARTED)

    def test_bind_claims_distinct_handles_until_none_left(self):
        first = self._bind_started()
        second = self._bind_started()
        third = self._bind_started()
        bound = [db_utils.bind_arq(self.admin_context, a.uuid,
                                   self.deployable.id)
                 for a in (first, second)]
        self.assertEqual({states.BOUND}, {a.state for a in bound})
        self.assertEqual({h.id for h in self.handles},
                         {a.attach_handle_id for a in bound})
        self.assertEqual('PCI', bound[0].attach_handle.attach_type)
        self.assertRaises(exception.AttachHandleUnavailable,
                          arq_db.claim_handle, self.admin_context,
                          third.uuid,
                          self.deployable.id)
        got = db_api.get(self.admin_context, 'accelerator_request',
                         third.uuid)
        self.assertEqual(states.BIND_STARTED, got.state)

    def test_claim_that_finishes_binds_a_pci_handle_at_once(self):
        arq = self._bind_started()
        statements = self._statements()
        handle, finished = arq_db.claim_handle(
            self.admin_context, arq.uuid, self.deployable.id, finish=True)
        self.assertTrue(finished)
        # The ARQ locked and read, the deployable's tree locked (its root
        # locked and read: not being programmed), a free handle found with
        # its type, the host's PCI handles locked to see that its function
        # is free, the handle claimed, then the ARQ Bound with it and
        # Nova's event; nothing read back.
        self.assertEqual(['SELECT', 'SELECT', 'SELECT', 'SELECT', 'UPDATE',
                          'UPDATE', 'INSERT'],
                         [s for s in statements if s != 'BEGIN'])
        bound = db_api.get(self.admin_context, 'accelerator_request',
                           arq.uuid)
        self.assertEqual(states.BOUND, bound.state)
        self.assertEqual(('PCI', handle.id),
                         (bound.attach_handle.attach_type,
                          bound.attach_handle_id))
        # Its event for Nova is recorded with it.
        self.assertEqual([(arq.instance_uuid, arq.uuid, 'completed')], [
            (e.instance_uuid, e.arq_uuid, e.status)
            for e in nova_event_db.take_due(self.admin_context, 10, 60)])

    def test_resumed_claim_keeps_its_handle_and_finishes(self):
        arq = self._bind_started()
        claimed, finished = arq_db.claim_handle(
            self.admin_context, arq.uuid, self.deployable.id)
        self.assertEqual((states.BIND_STARTED, False),
                         (self._state(arq), finished))
        bound, finished = arq_db.claim_handle(
            self.admin_context, arq.uuid, self.deployable.id, finish=True)
        self.assertEqual((states.BOUND, True), (self._state(arq), finished))
        self.assertEqual(claimed.id, bound.id)
        self.assertEqual([(arq.instance_uuid, 'completed')], [
            (e.instance_uuid, e.status)
            for e in nova_event_db.take_due(self.admin_context, 10, 60)])

    def test_claim_that_finishes_leaves_an_mdev_handle_binding(self):
        _, deployable, _ = db_utils.create_device_tree(
            self.admin_context, pci_address='0000:3b:00.0',
            attach_type='MDEV', asked_type='nvidia-222')
        arq = self._bind_started()
        claimed, finished = arq_db.claim_handle(
            self.admin_context, arq.uuid, deployable.id, finish=True)
        self.assertEqual((states.BIND_STARTED, False),
                         (self._state(arq), finished))
        self.assertEqual([], nova_event_db.take_due(self.admin_context,
                                                    10, 60))
        # Resumed, it keeps its handle, whose type is read again: still
        # an mdev to make.
        resumed, finished = arq_db.claim_handle(
            self.admin_context, arq.uuid, deployable.id, finish=True)
        self.assertEqual((states.BIND_STARTED, False),
                         (self._state(arq), finished))
        self.assertEqual(claimed.id, resumed.id)

    def test_bind_of_arq_in_wrong_state_releases_the_handle(self):
        arq = self._arq()
        self.assertRaises(exception.AcceleratorRequestInvalidState,
                          arq_db.claim_handle, self.admin_context,
                          arq.uuid,
                          self.deployable.id)
        in_use = db_api.get_all(self.admin_context, 'attach_handle',
                                filters={'in_use': True})
        self.assertEqual([], in_use)

    def test_unbind_releases_handle(self):
        arq = self._bind_started()
        arq = db_utils.bind_arq(self.admin_context, arq.uuid,
                                self.deployable.id)
        arq_db.unbind(self.admin_context, arq.uuid)
        arq = db_api.get(self.admin_context, 'accelerator_request', arq.uuid)
        self.assertEqual(states.UNBOUND, arq.state)
        self.assertIsNone(arq.attach_handle_id)
        self.assertIsNone(arq.instance_uuid)
        self.assertEqual([], db_api.get_all(self.admin_context,
                                            'attach_handle',
                                            filters={'in_use': True}))
        # An unbound ARQ may be bound again (unshelve).
        arq_db.update_state(self.admin_context, arq.uuid,
                            states.BIND_STARTED)

    def test_delete_by_uuids_is_all_or_nothing(self):
        a, b = (self._arq(), self._arq())
        self.assertRaises(exception.AcceleratorRequestNotFound,
                          arq_db.delete_many, self.admin_context,
                          uuids=[a.uuid, uuidutils.generate_uuid()])
        self.assertEqual(2, len(db_api.get_all(self.admin_context,
                                               'accelerator_request')))
        arq_db.delete_many(self.admin_context, uuids=[a.uuid, b.uuid])
        self.assertEqual([], db_api.get_all(self.admin_context,
                                            'accelerator_request'))

    def test_delete_by_instance_releases_handles_and_is_idempotent(self):
        arq = self._bind_started()
        db_utils.bind_arq(self.admin_context, arq.uuid, self.deployable.id)
        deleted = arq_db.delete_many(self.admin_context,
                                     instance_uuid=arq.instance_uuid)
        self.assertEqual([arq.uuid], [r.uuid for r in deleted])
        self.assertEqual([], db_api.get_all(self.admin_context,
                                            'attach_handle',
                                            filters={'in_use': True}))
        self.assertEqual([], arq_db.delete_many(
            self.admin_context, instance_uuid=arq.instance_uuid))

    def test_holders_name_each_arq_and_its_handle_type(self):
        pci = self._bind_started()
        db_utils.bind_arq(self.admin_context, pci.uuid, self.deployable.id)
        _, mdev_deployable, _ = db_utils.create_device_tree(
            self.admin_context, pci_address='0000:3b:00.0',
            attach_type='MDEV', asked_type='nvidia-222')
        mdev = self._bind_started()
        arq_db.claim_handle(self.admin_context, mdev.uuid,
                            mdev_deployable.id)
        bare = self._arq()
        self._arq()  # named by neither call
        rows = arq_db.holders(self.admin_context,
                              uuids=[pci.uuid, mdev.uuid, bare.uuid])
        self.assertEqual(sorted([
            (pci.uuid, 'host1', 'PCI'), (mdev.uuid, 'host1', 'MDEV'),
            (bare.uuid, None, None)]), sorted(
                (r.uuid, r.hostname, r.attach_handle_type) for r in rows))
        self.assertEqual(
            {pci.uuid: True, mdev.uuid: True, bare.uuid: False},
            {r.uuid: r.attach_handle_id is not None for r in rows})
        rows = arq_db.holders(self.admin_context,
                              instance_uuid=mdev.instance_uuid)
        self.assertEqual([(mdev.uuid, 'MDEV')],
                         [(r.uuid, r.attach_handle_type) for r in rows])

    def test_list_filters_in_sql(self):
        instance = uuidutils.generate_uuid()
        self._arq(instance_uuid=instance)
        self._arq(project_id='other')
        rows = db_api.get_all(self.admin_context, 'accelerator_request',
                              filters={'instance_uuid': instance})
        self.assertEqual([instance], [r.instance_uuid for r in rows])
        rows = db_api.get_all(self.admin_context, 'accelerator_request',
                              filters={'project_id': 'other',
                                       'state': list(states.ALL_STATES)})
        self.assertEqual(['other'], [r.project_id for r in rows])
