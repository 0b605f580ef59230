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
"""Tests of cyborg.db.api on SQLite: CRUD, filters, paging, ARQ states."""

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


class TestDeviceProfiles(base.TestCase):
    USES_DB = True

    def test_get_by_name(self):
        profile = db_utils.create_profile(self.admin_context)
        got = db_api.device_profile_get_by_name(self.admin_context,
                                                'fpga-dp1')
        self.assertEqual(profile.uuid, got.uuid)
        self.assertEqual(profile.groups, got.groups)
        self.assertRaises(exception.DeviceProfileNotFound,
                          db_api.device_profile_get_by_name,
                          self.admin_context, 'nope')

    def test_delete_many_is_all_or_nothing(self):
        db_utils.create_profile(self.admin_context, name='a')
        b = db_utils.create_profile(self.admin_context, name='b')
        exc = self.assertRaises(exception.DeviceProfileNotFound,
                                db_api.device_profiles_delete,
                                self.admin_context, names=['a', 'zzz'])
        self.assertIn('zzz', str(exc))
        self.assertEqual(2, len(db_api.get_all(self.admin_context,
                                               'device_profile')))
        db_api.device_profiles_delete(self.admin_context, names=['a'],
                                      uuids=[b.uuid])
        self.assertEqual([], db_api.get_all(self.admin_context,
                                            'device_profile'))

    def test_profile_in_use_is_not_deleted(self):
        profile = db_utils.create_profile(self.admin_context)
        db_utils.create_arqs(self.admin_context, profile)
        self.assertRaises(exception.DeviceProfileInUse,
                          db_api.device_profiles_delete,
                          self.admin_context, names=[profile.name])
        db_api.get(self.admin_context, 'device_profile', profile.uuid)


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
        return db_api.arq_update_state(
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

    def test_allowed_transition(self):
        arq = self._bind_started()
        self.assertEqual(states.BIND_STARTED, arq.state)
        self.assertEqual('host1', arq.hostname)

    def test_forbidden_transition_raises_and_changes_nothing(self):
        arq = self._arq()
        exc = self.assertRaises(
            exception.AcceleratorRequestInvalidState,
            db_api.arq_update_state, self.admin_context, arq.uuid,
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
            db_api.arq_update_state, self.admin_context, arq.uuid,
            states.BIND_STARTED, expected=[states.UNBOUND])

    def test_unknown_arq_state_change(self):
        self.assertRaises(exception.AcceleratorRequestNotFound,
                          db_api.arq_update_state, self.admin_context,
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
                          db_api.arq_claim_handle, self.admin_context,
                          third.uuid,
                          self.deployable.id)
        got = db_api.get(self.admin_context, 'accelerator_request',
                         third.uuid)
        self.assertEqual(states.BIND_STARTED, got.state)

    def test_bind_of_arq_in_wrong_state_releases_the_handle(self):
        arq = self._arq()
        self.assertRaises(exception.AcceleratorRequestInvalidState,
                          db_api.arq_claim_handle, self.admin_context,
                          arq.uuid,
                          self.deployable.id)
        in_use = db_api.get_all(self.admin_context, 'attach_handle',
                                filters={'in_use': True})
        self.assertEqual([], in_use)

    def test_unbind_releases_handle(self):
        arq = self._bind_started()
        arq = db_utils.bind_arq(self.admin_context, arq.uuid,
                                self.deployable.id)
        arq = db_api.arq_unbind(self.admin_context, arq.uuid)
        self.assertEqual(states.UNBOUND, arq.state)
        self.assertIsNone(arq.attach_handle_id)
        self.assertIsNone(arq.instance_uuid)
        self.assertEqual([], db_api.get_all(self.admin_context,
                                            'attach_handle',
                                            filters={'in_use': True}))
        # An unbound ARQ may be bound again (unshelve).
        db_api.arq_update_state(self.admin_context, arq.uuid,
                                states.BIND_STARTED)

    def test_delete_by_uuids_is_all_or_nothing(self):
        a, b = (self._arq(), self._arq())
        self.assertRaises(exception.AcceleratorRequestNotFound,
                          db_api.arqs_delete, self.admin_context,
                          uuids=[a.uuid, uuidutils.generate_uuid()])
        self.assertEqual(2, len(db_api.get_all(self.admin_context,
                                               'accelerator_request')))
        db_api.arqs_delete(self.admin_context, uuids=[a.uuid, b.uuid])
        self.assertEqual([], db_api.get_all(self.admin_context,
                                            'accelerator_request'))

    def test_delete_by_instance_releases_handles_and_is_idempotent(self):
        arq = self._bind_started()
        db_utils.bind_arq(self.admin_context, arq.uuid, self.deployable.id)
        deleted = db_api.arqs_delete(self.admin_context,
                                     instance_uuid=arq.instance_uuid)
        self.assertEqual([arq.uuid], [r.uuid for r in deleted])
        self.assertEqual([], db_api.get_all(self.admin_context,
                                            'attach_handle',
                                            filters={'in_use': True}))
        self.assertEqual([], db_api.arqs_delete(
            self.admin_context, instance_uuid=arq.instance_uuid))

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
