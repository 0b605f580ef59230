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
"""``cyborg-manage audit --heal`` asking the real Nova as a service user.

The quickstart's stack with the real Keystone and the real Nova 34, the
one :mod:`cyborg.tests.functional.api.test_tempest` starts: a project
member boots a server with an FPGA. Nova
answers a user with only the ``service`` role (the ``nova`` user devstack
and the install guide make) 404 for that server, as for a deleted one,
and 403 when it asks for every project's servers: the audit must take
nothing for gone, and ``--heal`` must change nothing. The ``cyborg`` user,
an admin, sees the server.
"""

import json
import sqlite3
import subprocess
import sys
import uuid

from cyborg.tests import functional
from cyborg_quickstart import keystone
from cyborg_quickstart import nova
from cyborg_quickstart import nova_sim
from cyborg_quickstart import placement

FPGA = {'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required'}
TIMEOUT = 180


class AuditAsServiceUser:
    """The audit's checks, on the stack of a quickstart with Keystone and Nova.

    Mixed into :class:`cyborg.tests.functional.api.test_tempest.
    TestQuickstartStack`, whose stack (``qs``) they share rather than start
    one of their own.
    """

    def _conf(self, persona):
        """The quickstart's config, Nova asked as ``persona``."""
        path = self.qs.path('audit-%s.conf' % persona)
        with open(self.qs.conf) as f:
            text = f.read()
        # oslo.config merges a section given twice, the later value winning.
        with open(path, 'w') as f:
            f.write(text + '\n'.join(
                ['', '[nova]', 'auth_type = password',
                 'region_name = %s' % keystone.REGION] +
                ['%s = %s' % item for item in sorted(
                    self.qs.keystone.credentials(persona).items())] + ['']))
        return path

    def _audit(self, persona, *args):
        result = subprocess.run(
            [sys.executable, '-c', 'import sys; from cyborg.cmd import '
             'manage; sys.exit(manage.main())', '--config-file',
             self._conf(persona), 'audit', '--format', 'json', *args],
            capture_output=True, text=True, timeout=300)
        try:
            report = json.loads(result.stdout)
        except ValueError:
            self.fail('not JSON: %s\n%s' % (result.stdout, result.stderr))
        self.assertEqual(result.returncode, report['exit_status'])
        return result, report

    def _handles_in_use(self):
        db = sqlite3.connect(self.qs.path('cyborg.sqlite'))
        try:
            return {row[0] for row in db.execute(
                'SELECT uuid FROM attach_handles WHERE in_use')}
        finally:
            db.close()

    def _boot(self):
        """A server of project-a's member with an FPGA; its ARQ."""
        # The first test of its stack may come before the agent's report.
        self.qs.demo.wait_for_devices()
        admin = self.qs.keystone.session('admin')
        cyborg = nova_sim.cyborg_adapter(self.qs.url('api') + '/v2', admin)
        profile = 'p-' + uuid.uuid4().hex[:8]
        response = cyborg.post('/device_profiles', json=[
            {'name': profile, 'groups': [FPGA]}])
        self.assertEqual(201, response.status_code, response.text)
        compute = self.qs.nova.adapter()
        response = compute.post('/flavors', json={'flavor': {
            'name': 'f-' + uuid.uuid4().hex[:8], 'ram': 64, 'vcpus': 1,
            'disk': 1}})
        self.assertEqual(200, response.status_code, response.text)
        flavor = response.json()['flavor']['id']
        response = compute.post('/flavors/%s/os-extra_specs' % flavor, json={
            'extra_specs': {nova_sim.PROFILE_SPEC: profile}})
        self.assertEqual(200, response.status_code, response.text)
        member = nova.compute_adapter(self.qs.nova.url,
                                      session=self.qs.keystone.session(
                                          'member'))
        image = self.qs.demo.image('disk', b'a disk')['id']
        response = member.post('/servers', json={'server': {
            'name': 's-' + uuid.uuid4().hex[:8], 'imageRef': image,
            'flavorRef': flavor, 'networks': 'none'}})
        self.assertEqual(202, response.status_code, response.text)
        server = response.json()['server']['id']

        def active():
            found = member.get('/servers/%s' % server).json()['server']
            if found['status'] == 'ERROR':
                raise AssertionError('server %s failed: %s' % (
                    server, found.get('fault')))
            return found['status'] == 'ACTIVE' and not found.get(
                'OS-EXT-STS:task_state')
        self.addCleanup(self._delete, member, server)
        functional.wait('server %s active' % server, active, TIMEOUT)
        (arq,) = cyborg.get('/accelerator_requests', params={
            'instance': server}).json()['arqs']
        self.assertEqual('Bound', arq['state'])
        return cyborg, server, arq

    def _delete(self, member, server):
        """Delete the server, and wait until Nova no longer knows it."""
        member.delete('/servers/%s' % server)
        functional.wait('server %s deleted' % server, lambda: member.get(
            '/servers/%s' % server).status_code == 404, TIMEOUT)

    def test_a_service_only_user_heals_nothing(self):
        cyborg, server, arq = self._boot()
        places = placement.adapter(self.qs.url('placement'), '1.39',
                                   self.qs.keystone.session('admin'))
        allocations = places.get('/allocations/%s' % server).json()[
            'allocations']
        self.assertIn(arq['device_rp_uuid'], allocations)
        handles = self._handles_in_use()
        self.assertIn(arq['attach_handle_uuid'], handles)

        # The real Nova hides project-a's server from the nova user.
        nova_user = nova.compute_adapter(
            self.qs.nova.url, session=self.qs.keystone.session('service'))
        self.assertEqual(404, nova_user.get('/servers/%s' % server)
                         .status_code)
        self.assertEqual(403, nova_user.get('/servers', params={
            'all_tenants': '1', 'limit': '1'}).status_code)

        # The audit with that user cannot tell a hidden server from a
        # gone one: it says so, and calls nothing an orphan.
        _result, report = self._audit('service')
        self.assertEqual(2, report['exit_status'], report)
        self.assertFalse(report['sources']['nova']['checked'])
        self.assertIn('all_tenants=1 answered 403',
                      report['sources']['nova']['reason'])
        self.assertEqual([], [f for f in report['findings']
                              if f['kind'] == 'orphaned_arq'])
        # --heal runs in a conductor, which asks Nova as its own [nova]
        # user (here one that sees every project): the live server's
        # request is no orphan, and nothing is repaired.
        _result, report = self._audit('service', '--heal')
        self.assertEqual([], [f for f in report['findings']
                              if f['repaired'] or
                              f['kind'] == 'orphaned_arq'])
        # Nothing changed.
        self.assertEqual('Bound', cyborg.get(
            '/accelerator_requests/%s' % arq['uuid']).json()['state'])
        self.assertEqual(allocations, places.get(
            '/allocations/%s' % server).json()['allocations'])
        self.assertEqual(handles, self._handles_in_use())

        # The cyborg user, an admin, sees it: nothing to say of it.
        _result, report = self._audit('cyborg')
        self.assertTrue(report['sources']['nova']['checked'], report)
        self.assertNotIn(arq['uuid'], json.dumps(report['findings']))
