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
"""Device profiles in the database, on SQLite."""


from cyborg.db import api as db_api
from cyborg.db import device_profile as profile_db
from cyborg import exception
from cyborg.tests import base
from cyborg.tests import db_utils


class TestDeviceProfiles(base.TestCase):
    USES_DB = True

    def test_get_by_name(self):
        profile = db_utils.create_profile(self.admin_context)
        got = profile_db.get_by_name(self.admin_context,
                                     'fpga-dp1')
        self.assertEqual(profile.uuid, got.uuid)
        self.assertEqual(profile.groups, got.groups)
        self.assertRaises(exception.DeviceProfileNotFound,
                          profile_db.get_by_name,
                          self.admin_context, 'nope')

    def test_delete_many_is_all_or_nothing(self):
        db_utils.create_profile(self.admin_context, name='a')
        b = db_utils.create_profile(self.admin_context, name='b')
        exc = self.assertRaises(exception.DeviceProfileNotFound,
                                profile_db.delete_many,
                                self.admin_context, names=['a', 'zzz'])
        self.assertIn('zzz', str(exc))
        self.assertEqual(2, len(db_api.get_all(self.admin_context,
                                               'device_profile')))
        deleted = profile_db.delete_many(self.admin_context, names=['a'],
                                         uuids=[b.uuid])
        self.assertEqual(['a', 'b'], sorted(row.name for row in deleted))
        self.assertEqual([], db_api.get_all(self.admin_context,
                                            'device_profile'))

    def test_profile_in_use_is_not_deleted(self):
        profile = db_utils.create_profile(self.admin_context)
        db_utils.create_arqs(self.admin_context, profile)
        self.assertRaises(exception.DeviceProfileInUse,
                          profile_db.delete_many,
                          self.admin_context, names=[profile.name])
        db_api.get(self.admin_context, 'device_profile', profile.uuid)
