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
"""The local image service as Nova's shelve uses it: snapshot records."""

import os

import fixtures
from glanceclient import exc as glance_exc
from glanceclient.v2 import client as glance_client
import testtools

from cyborg.demo import glance


class TestSnapshotRecords(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.service = glance.ImageService(directory=self.directory).start()
        self.addCleanup(self.service.stop)
        self.client = glance_client.Client(self.service.url, token='admin')

    def test_create_keep_and_delete(self):
        # What Nova's shelve sends: integer and boolean properties that
        # python-glanceclient checks against the image schema first.
        image = self.client.images.create(
            name='snap', min_disk=0, min_ram=64, protected=False,
            container_format='bare', disk_format='raw',
            image_type='snapshot', instance_uuid='an-instance')
        self.assertEqual(('snap', 'queued', 64, 'snapshot'),
                         (image['name'], image['status'], image['min_ram'],
                          image['image_type']))
        self.assertEqual(image['id'], self.client.images.get(image['id'])[
            'id'])
        stored = os.path.join(self.directory, image['id'])
        self.assertTrue(os.path.exists(stored + '.json'))

        self.client.images.delete(image['id'])
        self.assertRaises(glance_exc.HTTPNotFound, self.client.images.get,
                          image['id'])
        self.assertFalse(os.path.exists(stored + '.json'))
        self.assertFalse(os.path.exists(stored + '.data'))
        self.assertRaises(glance_exc.HTTPNotFound, self.client.images.delete,
                          image['id'])
