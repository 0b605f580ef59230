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
"""The Glance client takes the [glance] adapter options."""

from cyborg.clients import glance
from cyborg import context
from cyborg.tests import base
from cyborg.tests import openstack_fixtures

GLOBAL_ID = 'req-5f0c0a3e-2a4b-4c8e-9d1f-6b7a8c9d0e1f'


class TestGetClient(base.TestCase):

    def setUp(self):
        super().setUp()
        openstack_fixtures.use_admin_token(self, 'glance',
                                           'http://127.0.0.1:1', 'x')

    def test_connect_retries(self):
        self.assertIsNone(glance.get_client(self.conf.conf)
                          .http_client.connect_retries)
        # Also [glance] num_retries, as the replaced service spelled it.
        self.conf.config(connect_retries=3, group='glance')
        self.assertEqual(3, glance.get_client(self.conf.conf)
                         .http_client.connect_retries)

    def test_never_the_users_token(self):
        # Which bitstream images are seen must not depend on the user.
        user = context.RequestContext(auth_token='user-token',
                                      global_request_id=GLOBAL_ID)
        client = glance.get_client(self.conf.conf, user)
        self.assertEqual('x', client.http_client.get_token())
        self.assertEqual(GLOBAL_ID, client.http_client.global_request_id)
