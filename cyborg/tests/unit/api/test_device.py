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
"""How the API shows a device's health (2.9)."""

from oslo_utils import timeutils

from cyborg.api.controllers.v2 import device as device_api
from cyborg.objects import device as device_obj
from cyborg.tests import base


def _device(**fields):
    values = dict(health=None, health_reasons=[], vanished_at=None,
                  quarantined_at=None)
    values.update(fields)
    return device_obj.Device(**values)


class TestHealthView(base.TestCase):

    def test_no_agent_said(self):
        self.assertEqual({'health': 'unknown', 'health_reasons': [],
                          'quarantined': False},
                         device_api.health_view(_device()))

    def test_quarantined(self):
        self.assertEqual(
            {'health': 'unhealthy', 'health_reasons': ['link down'],
             'quarantined': True},
            device_api.health_view(_device(
                health='unhealthy', health_reasons=['link down'],
                quarantined_at=timeutils.utcnow())))

    def test_vanished_is_unhealthy(self):
        self.assertEqual(
            {'health': 'unhealthy',
             'health_reasons': ['the host no longer reports the device'],
             'quarantined': False},
            device_api.health_view(_device(health='healthy',
                                           vanished_at=timeutils.utcnow())))
