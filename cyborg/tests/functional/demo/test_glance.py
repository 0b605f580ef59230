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
"""The real Glance as the demos and tests run it (cyborg_quickstart.glance)."""

import os

from glanceclient import exc as glance_exc
import testtools

from cyborg.tests import openstack_fixtures
from cyborg_quickstart import glance

SEED_002 = {'bs-name': 'aes-128', 'vendor': 'Intel', 'board': 'PAC_ARRIA10',
            'shell_id': '9926ab6d-6c92-5a68-aabc-a7d84c545738',
            'function_name': 'aes'}


class GlanceTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        missing = openstack_fixtures.Glance.missing()
        if missing:
            self.skipTest(missing)


class TestUnauthenticated(GlanceTestCase):

    def setUp(self):
        super().setUp()
        self.glance = self.useFixture(openstack_fixtures.Glance())
        self.client = self.glance.client

    def test_bitstream_with_its_metadata(self):
        image = self.glance.add_image(b'green bitstream', **SEED_002)
        self.assertEqual(('active', ['FPGA'], 'raw', 'bare', 'sha512'), (
            image['status'], image['tags'], image['disk_format'],
            image['container_format'], image['os_hash_algo']))
        self.assertEqual(SEED_002, {k: image[k] for k in SEED_002})
        # In the file store under the state directory.
        self.assertTrue(os.path.exists(os.path.join(
            self.glance.glance.state, 'images', image['id'])))
        found = list(self.client.images.list(filters={
            'tag': ['FPGA'], 'function_name': 'aes', 'status': 'active'}))
        self.assertIn(image['id'], [i['id'] for i in found])
        self.assertEqual(b'green bitstream',
                         b''.join(self.client.images.data(image['id'])))

    def test_snapshot_records(self):
        # What Nova's shelve sends: integer and boolean properties that
        # python-glanceclient checks against Glance's image schema first.
        image = self.client.images.create(
            name='snap', min_disk=0, min_ram=64, protected=False,
            container_format='bare', disk_format='raw',
            image_type='snapshot', instance_uuid='an-instance')
        self.assertEqual(('snap', 'queued', 64, 'snapshot'),
                         (image['name'], image['status'], image['min_ram'],
                          image['image_type']))
        self.client.images.delete(image['id'])
        self.assertRaises(glance_exc.HTTPNotFound, self.client.images.get,
                          image['id'])

    def test_pages(self):
        images = {self.glance.add_image(name='paged')['id']
                  for _ in range(openstack_fixtures.Glance.PAGE_LIMIT + 1)}
        sent = self.useFixture(openstack_fixtures.SentRequests())
        self.assertEqual(images, {i['id'] for i in self.client.images.list(
            filters={'name': 'paged'})})
        self.assertEqual(2, len(sent.to(self.glance.url)))


class TestKeystone(GlanceTestCase):

    def setUp(self):
        super().setUp()
        missing = openstack_fixtures.Keystone.missing()
        if missing:
            self.skipTest(missing)
        self.keystone = self.useFixture(openstack_fixtures.Keystone()).keystone
        self.glance = self.useFixture(openstack_fixtures.Glance(
            keystone=self.keystone))

    def test_tokens_are_checked(self):
        image = self.glance.add_image(b'bitstream', **SEED_002)
        self.assertEqual('public', image['visibility'])
        self.assertRaises(glance_exc.HTTPUnauthorized,
                          self.glance.glance.client().images.get,
                          image['id'])
        member = self.glance.glance.client(self.keystone.session('member'))
        self.assertEqual(b'bitstream',
                         b''.join(member.images.data(image['id'])))
        # Only an administrator publishes images.
        self.assertRaises(glance_exc.HTTPForbidden, glance.upload, member,
                          b'mine', 'mine', visibility='public')
        self.assertEqual(
            self.glance.url,
            self.keystone.session('member').get_endpoint(
                service_type='image', interface='public'))
