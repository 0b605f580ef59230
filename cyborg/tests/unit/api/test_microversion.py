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
"""The microversion list and the header that picks one."""

from cyborg.api import microversion
from cyborg import exception
from cyborg.tests import base


class TestVersions(base.TestCase):

    def test_list_is_ordered_without_gaps(self):
        versions = [microversion.Version.parse(v)
                    for v, _note in microversion.VERSIONS]
        self.assertEqual((2, 0), versions[0])
        for older, newer in zip(versions, versions[1:]):
            self.assertEqual(older[0], newer[0])
            self.assertEqual(older[1] + 1, newer[1])

    def test_every_version_has_a_note(self):
        for version, note in microversion.VERSIONS:
            self.assertTrue(note.strip(), version)

    def test_pinned_history(self):
        # Released versions never change meaning; append, never edit.
        self.assertEqual(['2.0', '2.1', '2.2', '2.3', '2.4', '2.5', '2.6',
                          '2.7', '2.8', '2.9'],
                         [v for v, _n in microversion.VERSIONS])
        self.assertEqual((2, 9), microversion.MAX_VERSION)

    def test_named_versions_are_in_the_list(self):
        known = {microversion.Version.parse(v)
                 for v, _n in microversion.VERSIONS}
        for named in (microversion.PROJECT_ID_IN_BIND,
                      microversion.PROFILE_BY_NAME,
                      microversion.DEVICE_STATUS, microversion.PAGING,
                      microversion.PROFILE_LIFECYCLE,
                      microversion.OWN_FORMATS,
                      microversion.NAMED_OBJECTS,
                      microversion.PATCH_ONE,
                      microversion.DEVICE_HEALTH):
            self.assertIn(named, known)


class TestHeader(base.TestCase):

    def test_absent_is_the_minimum(self):
        self.assertEqual((2, 0), microversion.from_header(None))
        self.assertEqual((2, 0), microversion.from_header(''))

    def test_forms(self):
        for value, expected in (('accelerator 2.2', (2, 2)),
                                ('ACCELERATOR 2.3', (2, 3)),
                                ('2.1', (2, 1)),
                                ('accelerator latest', (2, 9)),
                                ('latest', (2, 9)),
                                ('compute 2.60, accelerator 2.1', (2, 1)),
                                ('compute 2.60', (2, 0))):
            self.assertEqual(expected, microversion.from_header(value),
                             value)

    def test_refused(self):
        for value in ('accelerator 2.10', 'accelerator 1.0', '3.0',
                      'accelerator 2', 'accelerator 2.x', 'nonsense'):
            self.assertRaises(exception.NotAcceptable,
                              microversion.from_header, value)

    def test_response_headers(self):
        headers = microversion.response_headers(microversion.Version(2, 3))
        self.assertEqual('accelerator 2.3', headers['OpenStack-API-Version'])
        self.assertEqual('2.0', headers['OpenStack-API-Minimum-Version'])
        self.assertEqual('2.9', headers['OpenStack-API-Maximum-Version'])
        self.assertEqual('OpenStack-API-Version', headers['Vary'])
        self.assertNotIn('OpenStack-API-Version',
                         microversion.response_headers())
