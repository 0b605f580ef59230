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
"""The library internals Cyborg relies on are still there, and used.

``cyborg.api.app`` remembers signatures that pecan and oslo.middleware
read on every request, through names that are not their public API; the
health check sets oslo.middleware's private ``_show_details``; objects
load rows through oslo.versionedobjects' ``_get_attrname``; ``import
cyborg`` marks eventlet missing so that no library imports it. Each test
fails the day the library renames the name or stops looking it up where
Cyborg relies on it, so no speed-up or setting can silently stop working
nor break a request. ``doc/source/contributor/performance.rst`` lists
them (Library internals).
"""

import inspect
import subprocess  # nosec B404
import sys

from oslo_middleware import base as middleware_base
from oslo_middleware import healthcheck as middleware_healthcheck
from oslo_versionedobjects import base as ovo_base
from pecan import util as pecan_util
import testtools

from cyborg.api import app  # noqa: F401 (the replacements happen here)
from cyborg.api import healthcheck
from cyborg.objects import device_profile


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

    def test_health_check_details_follow_show_details(self):
        # oslo.middleware sets the attribute from [healthcheck] detailed
        # and reads it for every answer.
        source = inspect.getsource(middleware_healthcheck.Healthcheck)
        self.assertIn('self._show_details = ', source)
        self.assertIn('if self._show_details:', source)
        check = healthcheck._Healthcheck(None, {}, detailed=True)
        self.assertIs(True, check._show_details)

    def test_objects_store_fields_under_get_attrname(self):
        profile = device_profile.DeviceProfile(name='x')
        self.assertEqual('_obj_name', ovo_base._get_attrname('name'))
        self.assertEqual('x', getattr(profile,
                                      ovo_base._get_attrname('name')))

    def test_no_library_imports_eventlet_after_cyborg(self):
        # The libraries that import eventlet when it is installed, as
        # they are imported by a service that imported cyborg first.
        code = ('import sys, cyborg, oslo_messaging, futurist, '
                'oslo_utils.eventletutils, oslo_privsep.daemon, '
                'oslo_service.service; '
                'print(sys.modules["eventlet"], "dns" in sys.modules)')
        done = subprocess.run([sys.executable, '-c', code],  # nosec B603
                              capture_output=True, text=True, check=True)
        self.assertEqual('None False', done.stdout.strip(), done.stderr)
