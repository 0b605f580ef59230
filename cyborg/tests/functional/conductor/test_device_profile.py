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
"""Changing device profiles through the conductor's RPC API (1.1)."""

from cyborg.conductor import rpcapi
from cyborg import exception
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import device_profile
from cyborg.tests import base

OLD_GROUP = {'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required'}
NEW_GROUPS = [{'resources:FPGA': '1', 'accel:bitstream_name': 'aes.gbs'},
              {'resources:CUSTOM_ACCEL_X': '1'}]


class TestDeviceProfileUpdate(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.profile = self.api.device_profile_create(
            self.admin_context, device_profile.DeviceProfile(
                self.admin_context, name='dp', description='old',
                groups=[OLD_GROUP]))

    def _update(self, **values):
        return self.api.device_profile_update(self.admin_context,
                                              self.profile.uuid, values)

    def _stored(self):
        return device_profile.DeviceProfile.get_by_uuid(self.admin_context,
                                                        self.profile.uuid)

    def test_description_and_groups(self):
        updated = self._update(description=None, groups=NEW_GROUPS)
        self.assertIsNone(updated.description)
        self.assertEqual(NEW_GROUPS, updated.groups)
        self.assertIsNotNone(updated.updated_at)
        stored = self._stored()
        self.assertEqual(NEW_GROUPS, stored.groups)
        self.assertEqual('dp', stored.name)
        self.assertTrue(stored.enabled)

    def test_arqs_keep_the_group_they_copied(self):
        old_arq, = self.api.arq_create(self.admin_context, 'dp', 'p1')
        self._update(groups=NEW_GROUPS)
        new_arqs = self.api.arq_create(self.admin_context, 'dp', 'p1')
        self.assertEqual(NEW_GROUPS, [a.device_profile_group
                                      for a in new_arqs])
        old_arq = arq_obj.AcceleratorRequest.get_by_uuid(self.admin_context,
                                                         old_arq.uuid)
        self.assertEqual(OLD_GROUP, old_arq.device_profile_group)
        self.assertEqual(0, old_arq.device_profile_group_id)

    def test_disabled_profile_makes_no_arqs(self):
        self.assertFalse(self._update(enabled=False).enabled)
        self.assertRaises(exception.DeviceProfileDisabled,
                          self.api.arq_create, self.admin_context, 'dp',
                          'p1')
        self.assertTrue(self._update(enabled=True).enabled)
        self.assertEqual(1, len(self.api.arq_create(self.admin_context,
                                                    'dp', 'p1')))

    def test_no_change_writes_nothing(self):
        unchanged = self._update(description='old', enabled=True)
        self.assertIsNone(unchanged.updated_at)

    def test_only_description_groups_and_enabled(self):
        for values in ({'name': 'other'}, {'uuid': self.profile.uuid},
                       {'id': 7}, {'description': 'x', 'name': 'other'}):
            error = self.assertRaises(
                exception.InvalidParameterValue,
                self.api.device_profile_update, self.admin_context,
                self.profile.uuid, values)
            self.assertIn('changes only description, groups, enabled',
                          error.message)
        stored = self._stored()
        self.assertEqual(('dp', 'old'), (stored.name, stored.description))

    def test_unknown_profile(self):
        self.assertRaises(exception.DeviceProfileNotFound,
                          self.api.device_profile_update, self.admin_context,
                          '1b2c3d4e-0000-4000-8000-000000000000',
                          {'enabled': False})

    def test_refused_while_conductors_are_capped_below_1_1(self):
        self.conf.config(conductor='1.0', group='upgrade_levels')
        capped = rpcapi.ConductorAPI()
        self.assertRaises(exception.ServiceUnavailable,
                          capped.device_profile_update, self.admin_context,
                          self.profile.uuid, {'enabled': False})
        self.assertTrue(self._stored().enabled)
