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
"""Adapters are reused while their options stay the same."""

from cyborg.clients import keystone
from cyborg.tests import base
from cyborg.tests import openstack_fixtures


class TestGetAdapter(base.TestCase):

    def setUp(self):
        super().setUp()
        openstack_fixtures.use_admin_token(self, 'nova',
                                           'http://127.0.0.1:1', 'x')

    def test_same_options_same_adapter(self):
        first = keystone.get_adapter(self.conf.conf, 'nova')
        self.assertIs(first, keystone.get_adapter(self.conf.conf, 'nova'))
        self.assertIsNot(first, keystone.get_adapter(
            self.conf.conf, 'nova', default_microversion='2.82'))

    def test_changed_options_new_adapter(self):
        first = keystone.get_adapter(self.conf.conf, 'nova')
        self.conf.config(endpoint='http://127.0.0.1:2', group='nova')
        second = keystone.get_adapter(self.conf.conf, 'nova')
        self.assertIsNot(first, second)
        self.assertEqual('http://127.0.0.1:2', second.get_endpoint())
