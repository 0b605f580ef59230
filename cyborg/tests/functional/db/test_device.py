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
"""A device's health and quarantine stored on SQLite, MariaDB, PostgreSQL.

The conductor saves them through the Device object with time-zone aware
times; each server must keep the instant (naive UTC columns) and find the
quarantined devices.
"""

import datetime

from oslo_db.sqlalchemy import test_fixtures
import testtools

from cyborg import context
from cyborg.objects import device as device_obj
from cyborg.tests import db_utils
from cyborg.tests.functional.db import test_concurrency

UTC = datetime.timezone.utc


class _DeviceHealth:

    def test_health_round_trip_and_quarantined(self):
        ctx = context.get_admin_context()
        first, _, _ = db_utils.create_device_tree(ctx, hostname='h1')
        second, _, _ = db_utils.create_device_tree(
            ctx, hostname='h2', pci_address='0000:5f:00.0')
        when = datetime.datetime(2026, 11, 28, 15, 0, 1, tzinfo=UTC)
        # An instant given in another zone is stored as the same instant.
        later = datetime.datetime(2026, 11, 28, 17, 0, 2,
                                  tzinfo=datetime.timezone(
                                      datetime.timedelta(hours=2)))
        for row, quarantined in ((second, when), (first, later)):
            device = device_obj.Device.get_by_uuid(ctx, row.uuid)
            device.health = 'unhealthy'
            device.health_reasons = ['link down', 'driver unbound']
            device.health_changed_at = quarantined
            device.quarantined_at = quarantined
            device.save(ctx)

        found = device_obj.Device.list_quarantined(ctx)
        self.assertEqual([second.uuid, first.uuid], [d.uuid for d in found])
        self.assertEqual(
            ('unhealthy', ['link down', 'driver unbound'], when,
             datetime.datetime(2026, 11, 28, 15, 0, 2, tzinfo=UTC)),
            (found[0].health, found[0].health_reasons,
             found[0].quarantined_at, found[1].quarantined_at))

        found[0].quarantined_at = None
        found[0].save(ctx)
        self.assertEqual([first.uuid], [
            d.uuid for d in device_obj.Device.list_quarantined(ctx)])


class TestDeviceHealthSQLiteFile(_DeviceHealth,
                                 test_concurrency.SQLiteFileTestCase):
    pass


class TestDeviceHealthMySQL(_DeviceHealth,
                            test_fixtures.OpportunisticDBTestMixin,
                            testtools.TestCase):
    FIXTURE = test_concurrency.MySQLFixture


class TestDeviceHealthPostgreSQL(_DeviceHealth,
                                 test_fixtures.OpportunisticDBTestMixin,
                                 testtools.TestCase):
    FIXTURE = test_concurrency.PostgreSQLFixture
