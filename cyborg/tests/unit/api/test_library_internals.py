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
"""The library internals the API relies on are still there, and used.

``cyborg.api.app`` remembers signatures that pecan and oslo.middleware
read on every request, through names that are not their public API. Each
test fails the day the library renames the name or stops looking it up
where the API puts the remembering function, so the speed-up can never
silently stop working nor break a request.
"""

from oslo_middleware import base as middleware_base
from pecan import util as pecan_util
import testtools

from cyborg.api import app  # noqa: F401 (the replacements happen here)


class TestLibraryInternals(testtools.TestCase):

    def test_pecan_reads_signatures_through_its_helper(self):
        self.assertTrue(hasattr(pecan_util._getargspec, 'cache_info'))
        # pecan.util.getargspec, which its routing calls, looks the helper
        # up in its module when it runs.
        self.assertIn('_getargspec', pecan_util.getargspec.__code__.co_names)

        class Controller:
            def get_one(self, ident):
                pass

        before = pecan_util._getargspec.cache_info().hits
        for _ in range(2):
            self.assertEqual(['self', 'ident'],
                             pecan_util.getargspec(Controller.get_one).args)
        self.assertGreater(pecan_util._getargspec.cache_info().hits, before)

    def test_oslo_middleware_reads_signatures_through_its_import(self):
        self.assertTrue(hasattr(middleware_base.getfullargspec, 'cache_info'))
        # ConfigurableMiddleware.__call__ (wrapped by webob's wsgify) looks
        # the name up in its module for every response.
        call = middleware_base.ConfigurableMiddleware.__call__.func
        self.assertIn('getfullargspec', call.__code__.co_names)
