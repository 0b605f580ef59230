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

Objects load rows through oslo.versionedobjects' ``_get_attrname``; the entry
points mark eventlet missing so that no library imports it. Each test
fails the day the library renames the name or stops looking it up where
Cyborg relies on it, so no speed-up or setting can silently stop working
nor break a request. ``doc/source/contributor/performance.rst`` lists
them (Library internals).
"""

import subprocess  # nosec B404
import sys

from oslo_versionedobjects import base as ovo_base
import testtools

from cyborg.objects import device_profile


class TestLibraryInternals(testtools.TestCase):

    def test_objects_store_fields_under_get_attrname(self):
        profile = device_profile.DeviceProfile(name='x')
        self.assertEqual('_obj_name', ovo_base._get_attrname('name'))
        self.assertEqual('x', getattr(profile,
                                      ovo_base._get_attrname('name')))

    def test_no_library_imports_eventlet_after_cyborg(self):
        # The libraries that import eventlet when it is installed, as
        # they are imported by a service whose entry point chose first.
        code = ('import sys, cyborg.cmd, oslo_messaging, futurist, '
                'oslo_utils.eventletutils, oslo_privsep.daemon, '
                'oslo_service.service; '
                'print(sys.modules["eventlet"], "dns" in sys.modules)')
        done = subprocess.run([sys.executable, '-c', code],  # nosec B603
                              capture_output=True, text=True, check=True)
        self.assertEqual('None False', done.stdout.strip(), done.stderr)
