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
"""The lists an API application keeps, by generation."""

import testtools

from cyborg.api.controllers import base


class TestListCache(testtools.TestCase):

    def test_a_body_is_kept_for_its_generation_only(self):
        lists = base.ListCache()
        lists.put('k', 3, b'three')
        self.assertEqual(b'three', lists.get('k', 3))
        self.assertIsNone(lists.get('k', 4))
        self.assertIsNone(lists.get('other', 3))

    def test_nothing_is_kept_without_a_generation(self):
        lists = base.ListCache()
        lists.put('k', None, b'body')
        self.assertIsNone(lists.get('k', None))

    def test_an_older_generation_does_not_replace_a_newer_one(self):
        # A request that read the generation before a write may finish
        # after one that read it after the write.
        lists = base.ListCache()
        lists.put('k', 5, b'five')
        lists.put('k', 4, b'four')
        self.assertEqual(b'five', lists.get('k', 5))
        lists.put('k', 6, b'six')
        self.assertEqual(b'six', lists.get('k', 6))

    def test_least_recently_used_go_beyond_the_size(self):
        lists = base.ListCache(max_bytes=10)
        lists.put('a', 1, b'aaaa')
        lists.put('b', 1, b'bbbb')
        lists.get('a', 1)
        lists.put('c', 1, b'cccc')
        self.assertEqual((b'aaaa', None, b'cccc'),
                         tuple(lists.get(k, 1) for k in 'abc'))
        lists.put('big', 1, b'x' * 11)
        self.assertIsNone(lists.get('big', 1))
        self.assertEqual(b'aaaa', lists.get('a', 1))
