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
"""cyborg-tempest-plugin's API and SRBAC tests against the live API.

Tempest 47.0.0 and cyborg-tempest-plugin 2.8.0 run from the virtualenv
``tools/setup-client-venvs.sh`` makes, against the API behind
keystonemiddleware and the real Keystone of
:class:`cyborg.tests.fixtures.Keystone`, where the API is in the catalog
as ``accelerator``, with one host's hardware in the database. Tempest
makes a project and users for each persona a test class asks for
(dynamic credentials, as the Keystone admin). The plugin's scenario tests
need Nova and are not run.
"""

import os
import re
import subprocess

import fixtures
from testtools import content

from cyborg.demo import keystone as keystone_server
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.api import test_keystone

#: Tests of the plugin left out, each with why: Cyborg answers bad input
#: with a 4xx where the existing service failed with a 500.
EXCLUDED = {
    r'test_device_profile_negative\.DeviceProfileNegativeTest\.'
    r'test_create_device_profile_server_fault':
        'expects 500 for a profile with an existing uuid; we answer 409',
    r'test_device_profile_negative\.DeviceProfileNegativeTest\.'
    r'test_create_device_profile_name_is_null':
        'expects 500 for an empty name; we answer 400',
    r'test_device_profile_negative\.DeviceProfileNegativeTest\.'
    r'test_create_device_profile_name_to_long':
        'expects 500 for a 256-character name; we answer 400',
}
#: cyborg-tempest-plugin 2.8.0 has 42 API tests, SRBAC ones included.
EXPECTED_PASSED = 42 - len(EXCLUDED)

TEMPEST_CONF = """[DEFAULT]
log_file = {workspace}/tempest.log

[auth]
use_dynamic_credentials = True
admin_username = {admin[username]}
admin_password = {admin[password]}
admin_project_name = {admin[project_name]}
admin_domain_name = {admin[user_domain_name]}
tempest_roles = member

[identity]
uri_v3 = {auth_url}
auth_version = v3
region = {region}

[identity-feature-enabled]
api_v2 = False

[service_available]
cyborg = True
nova = False
glance = False
neutron = False
cinder = False
swift = False

[cyborg_policy]
enforce_new_defaults = True

[oslo_concurrency]
lock_path = {workspace}/locks
"""


class TestTempest(test_keystone.KeystoneTestCase):

    def test_api(self):
        tempest = cyborg_fixtures.VENVS / 'tempest' / 'bin' / 'tempest'
        if not tempest.exists():
            self.skipTest('%s is missing: run tools/setup-client-venvs.sh '
                          '(tools/run-tests.sh does)' % tempest)
        self.keystone.register_endpoint('accelerator', self.endpoint)
        workspace = self.useFixture(fixtures.TempDir()).path
        subprocess.run([str(tempest), 'init', workspace], check=True,
                       capture_output=True, cwd=workspace)
        with open(os.path.join(workspace, 'etc', 'tempest.conf'), 'w') as f:
            f.write(TEMPEST_CONF.format(
                workspace=workspace, auth_url=self.keystone.auth_url,
                region=keystone_server.REGION,
                admin=self.keystone.credentials('admin')))
        excluded = os.path.join(workspace, 'excluded')
        with open(excluded, 'w') as f:
            for pattern, reason in sorted(EXCLUDED.items()):
                f.write('%s  # %s\n' % (pattern, reason))
        result = subprocess.run(
            [str(tempest), 'run', '--concurrency', '1',
             '--regex', r'^cyborg_tempest_plugin\.tests\.api\.',
             '--exclude-list', excluded],
            capture_output=True, text=True, cwd=workspace, timeout=600)
        self.addDetail('tempest', content.text_content(result.stdout))
        self.assertEqual(0, result.returncode, result.stderr[-4000:])
        totals = dict(re.findall(r'^ - (Passed|Skipped|Failed): (\d+)$',
                                 result.stdout, re.M))
        self.assertEqual({'Passed': str(EXPECTED_PASSED), 'Skipped': '0',
                          'Failed': '0'}, totals)
