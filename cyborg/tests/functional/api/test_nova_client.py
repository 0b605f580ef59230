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
"""Nova's own Cyborg client against a live API, the real Placement and a host.

``nova.accelerator.cyborg`` of the ``nova`` package runs in a child
process with the virtualenv ``tools/setup-client-venvs.sh`` makes
(``tools/run-tests.sh`` runs it), through ``nova_client_driver.py``. The
test plays the rest of Nova: it sends Nova's allocation candidates query
to Placement, claims the candidate and waits for Cyborg's events. A
recorder in front of the API keeps what Nova sent, so the request
sequence and headers Nova depends on are checked too.
"""

import json
import os
import pathlib
import select
import subprocess

import fixtures
from oslo_utils import uuidutils
from testtools import content

from cyborg import exception
from cyborg.tests.functional.demo import test_nova_sim
from cyborg.tests import openstack_fixtures
from cyborg.tests import stand_ins

DRIVER = pathlib.Path(__file__).with_name('nova_client_driver.py')
PROFILE = 'fpga-vf'
# The headers of Nova's requests that the test checks.
HEADERS = ('OpenStack-API-Version', 'X-Auth-Token', 'X-Service-Token')
# Nova's configuration: Cyborg's endpoint in [cyborg] and, as the bind
# needs, a service token (any token does under noauth).
NOVA_CONF = """
[cyborg]
endpoint_override = %s

[service_user]
send_service_user_token = true
auth_type = admin_token
endpoint = %s
token = nova-service-token
"""


class Recorder:
    """WSGI middleware keeping each request's line, headers and status."""

    def __init__(self, app):
        self.app = app
        self.requests = []

    def __call__(self, environ, start_response):
        record = {
            'method': environ['REQUEST_METHOD'],
            'path': environ['PATH_INFO'],
            'query': environ.get('QUERY_STRING', ''),
            'headers': {h: environ.get('HTTP_' + h.upper().replace('-', '_'),
                                       environ.get(h.upper().replace(
                                           '-', '_')))
                        for h in HEADERS}}
        self.requests.append(record)

        def recording_start_response(status, headers, exc_info=None):
            record['status'] = int(status.split()[0])
            return start_response(status, headers, exc_info)

        return self.app(environ, recording_start_response)

    def lines(self):
        """``METHOD path?query status`` of each request, oldest first."""
        return ['%s %s%s %s' % (r['method'], r['path'],
                                '?' + r['query'] if r['query'] else '',
                                r.get('status'))
                for r in self.requests]


class NovaClientError(Exception):
    """A Nova exception the client raised, by class name."""

    def __init__(self, answer):
        super().__init__('%(error)s: %(message)s' % answer)
        self.name = answer['error']
        self.arqs = answer['arqs']


class NovaClient(fixtures.Fixture):
    """``nova_client_driver.py`` running with the Nova virtualenv's Python.

    Calling it calls a method of Nova's ``_CyborgClient`` (or
    ``request_groups``) and returns what it returned, or raises
    :class:`NovaClientError`.
    """

    def __init__(self, python, endpoint, timeout=60):
        super().__init__()
        self.python = python
        self.endpoint = endpoint
        self.timeout = timeout

    def _setUp(self):
        tmp = self.useFixture(fixtures.TempDir())
        self.stderr = tmp.join('stderr')
        with open(tmp.join('nova.conf'), 'w') as f:
            f.write(NOVA_CONF % (self.endpoint, self.endpoint))
        self.argv = [str(self.python), str(DRIVER), tmp.join('nova.conf')]
        with open(self.stderr, 'w') as stderr:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=stderr, text=True, env={'PATH': os.environ['PATH']})
        self.addCleanup(self._stop)
        self.addDetail('nova-client-stderr', content.content_from_file(
            self.stderr, buffer_now=False))

    def _stop(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()

    def __call__(self, method, *args, **kwargs):
        self.proc.stdin.write(json.dumps({'method': method, 'args': args,
                                          'kwargs': kwargs}) + '\n')
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [],
                                    self.timeout)
        line = self.proc.stdout.readline() if ready else ''
        if not line:
            raise AssertionError('Nova client gave no answer to %s' % method)
        answer = json.loads(line)
        if 'error' in answer:
            raise NovaClientError(answer)
        return answer['result']


class TestNovaClient(test_nova_sim.SimulatedHostTestCase):
    """Nova's boot, read and delete calls, and the failures it handles."""

    def wrap_api(self, app):
        self.recorder = Recorder(app)
        return self.recorder

    def setUp(self):
        super().setUp()
        python = openstack_fixtures.VENVS / 'nova-34.0.0' / 'bin' / 'python'
        if not python.exists():
            self.skipTest('%s is missing: run tools/setup-client-venvs.sh '
                          '(tools/run-tests.sh does)' % python)
        self._nova_events_here()
        self.nova = self.useFixture(NovaClient(
            python, self.cyborg.endpoint_override))
        self.addOnException(lambda exc_info: self.addDetail(
            'api-requests', content.text_content(
                '\n'.join(self.recorder.lines()))))
        # Only what the test does from here on.
        del self.recorder.requests[:]

    def assertNovaRaises(self, name, method, *args, **kwargs):
        error = self.assertRaises(NovaClientError, self.nova, method,
                                  *args, **kwargs)
        self.assertEqual(name, error.name, str(error))
        return error

    def _claim(self, query):
        """Nova's scheduler: the first candidate on our host, claimed.

        :returns: the instance uuid and the candidate's group mappings.
        """
        placement = self.placement.adapter()
        candidates = placement.get('/allocation_candidates?%s&in_tree=%s' % (
            query, self.compute)).json()
        candidate = candidates['allocation_requests'][0]
        instance = uuidutils.generate_uuid()
        self.assertEqual(204, placement.put(
            '/allocations/%s' % instance, json={
                'allocations': candidate['allocations'],
                'mappings': candidate['mappings'],
                'project_id': uuidutils.generate_uuid(),
                'user_id': uuidutils.generate_uuid(),
                'consumer_generation': None,
                'consumer_type': 'INSTANCE'}).status_code)
        self.addCleanup(placement.delete, '/allocations/%s' % instance)
        return instance, candidate['mappings']

    def _bindings(self, arqs, instance, **changes):
        """What Nova's conductor binds each ARQ to."""
        return {arq['uuid']: dict({'hostname': self.host,
                                   'device_rp_uuid': arq['device_rp_uuid'],
                                   'instance_uuid': instance}, **changes)
                for arq in arqs}

    def test_boot_read_and_delete(self):
        # Nova's API: the flavor's device profile as request groups.
        groups = self.nova('request_groups', PROFILE)
        self.assertEqual([{'requester_id': 'device_profile_0',
                           'resources': {'FPGA': 1},
                           'required_traits': ['CUSTOM_FPGA_INTEL'],
                           'forbidden_traits': []}], groups['groups'])
        # Nova's scheduler: Placement maps the group to the FPGA's RP.
        instance, mappings = self._claim(groups['query'])
        self.assertEqual([self.rp], mappings['device_profile_0'])
        # Nova's conductor: create the ARQs, match them to RPs, bind.
        arqs = self.nova('create_arqs_and_match_resource_providers',
                         PROFILE, mappings)
        self.assertEqual([(PROFILE, 0, 'Initial', self.rp)], [
            (a['device_profile_name'], a['device_profile_group_id'],
             a['state'], a['device_rp_uuid']) for a in arqs])
        (uuid,) = [a['uuid'] for a in arqs]
        self.assertIsNone(self.nova('bind_arqs',
                                    self._bindings(arqs, instance)))
        # Nova's compute: the bound event, then the resolved ARQs.
        events = self.events.wait_for(instance, 1, timeout=30)
        self.assertEqual([('accelerator-request-bound', uuid, 'completed')],
                         [(e['name'], e['tag'], e['status'])
                          for e in events])
        self.assertEqual([uuid], self.nova('get_arq_uuids_for_instance',
                                           instance))
        (resolved,) = self.nova('get_arqs_for_instance', instance,
                                only_resolved=True)
        self.assertEqual(('Bound', self.host, instance, 'PCI'), (
            resolved['state'], resolved['hostname'],
            resolved['instance_uuid'], resolved['attach_handle_type']))
        self.assertEqual({'domain', 'bus', 'device', 'function'},
                         set(resolved['attach_handle_info']))
        self.assertEqual(resolved, self.nova('get_arq_by_uuid', uuid))
        # Deleting the instance, then a build that failed to bind.
        self.assertIsNone(self.nova('delete_arqs_for_instance', instance))
        self.assertEqual([], self._arqs())
        self.assertNovaRaises('AcceleratorRequestOpFailed',
                              'get_arqs_for_instance', instance)
        # Nova repeats deletes by instance freely.
        self.assertIsNone(self.nova('delete_arqs_for_instance', instance))
        arqs = self.nova('create_arqs', PROFILE)
        self.assertIsNone(self.nova('delete_arqs_by_uuid',
                                    [a['uuid'] for a in arqs]))
        self.assertEqual([], self._arqs())
        # Each client first reads the version document, with no token.
        discovery = 'GET /v2 200'
        self.assertEqual([
            discovery, 'GET /v2/device_profiles?name=fpga-vf 200',
            discovery, 'POST /v2/accelerator_requests 201',
            discovery, 'PATCH /v2/accelerator_requests 202',
            discovery, 'GET /v2/accelerator_requests?instance=%s 200' % (
                instance),
            discovery, 'GET /v2/accelerator_requests?instance=%s 200' % (
                instance),
            discovery, 'GET /v2/accelerator_requests/%s 200' % uuid,
            discovery, 'DELETE /v2/accelerator_requests?instance=%s 204' % (
                instance),
            'GET /v2/accelerator_requests 200',
            discovery, 'GET /v2/accelerator_requests?instance=%s 200' % (
                instance),
            discovery, 'DELETE /v2/accelerator_requests?instance=%s 204' % (
                instance),
            discovery, 'POST /v2/accelerator_requests 201',
            discovery, 'DELETE /v2/accelerator_requests?arqs=%s 204' % (
                arqs[0]['uuid']),
            'GET /v2/accelerator_requests 200',
        ], self.recorder.lines())
        # No microversion header (Nova speaks 2.0), the user's token and
        # Nova's service token, except on the version document.
        nova = {'OpenStack-API-Version': None,
                'X-Auth-Token': 'nova-test-user-token',
                'X-Service-Token': 'nova-service-token'}
        sent = [(line, r['headers']) for line, r in zip(
            self.recorder.lines(), self.recorder.requests)
            if line != 'GET /v2/accelerator_requests 200']  # the test's
        self.assertEqual(
            [(line, dict.fromkeys(HEADERS) if line == discovery else nova)
             for line, _ in sent], sent)

    def test_refused_bind_raises_binding_failed(self):
        for name, group in (('xilinx', {
                'resources:FPGA': '1',
                'trait:CUSTOM_FPGA_XILINX': 'required'}),
                ('gpu', {'resources:PGPU': '1'})):
            self.assertEqual(201, self.cyborg.post('/device_profiles', json=[
                {'name': name, 'groups': [group]}]).status_code)
        instance = uuidutils.generate_uuid()
        for profile, changes in (
                (PROFILE, {'device_rp_uuid': uuidutils.generate_uuid()}),
                (PROFILE, {'hostname': 'another-host'}),
                ('xilinx', {}),
                ('gpu', {})):
            arqs = self.nova('create_arqs_and_match_resource_providers',
                             profile, {'device_profile_0': [self.rp]})
            error = self.assertNovaRaises(
                'AcceleratorRequestBindingFailed', 'bind_arqs',
                self._bindings(arqs, instance, **changes))
            self.assertEqual([a['uuid'] for a in arqs], error.arqs)
            self.assertEqual(400, self.recorder.requests[-1]['status'])
            # Nova's conductor cleans up what it created.
            self.nova('delete_arqs_by_uuid', error.arqs)
            self.assertEqual([], self._arqs())
        self.assertEqual([], self.events.for_instance(instance))

    def test_failed_bind(self):
        # Programming fails on the host, after the PATCH was accepted.
        agent = self.useFixture(stand_ins.StandInAgent(
            self.host)).endpoint
        agent.failures['program'] = exception.ProgrammingFailed(
            deployable='region', reason='fpgaconf exited with 1')
        self.assertEqual(201, self.cyborg.post('/device_profiles', json=[{
            'name': 'fpga-aes', 'groups': [{
                'resources:FPGA': '1',
                'accel:bitstream_id': uuidutils.generate_uuid()}]}]
        ).status_code)
        instance = uuidutils.generate_uuid()
        arqs = self.nova('create_arqs_and_match_resource_providers',
                         'fpga-aes', {'device_profile_0': [self.rp]})
        self.assertIsNone(self.nova('bind_arqs',
                                    self._bindings(arqs, instance)))
        events = self.events.wait_for(instance, 1, timeout=30)
        self.assertEqual([(arqs[0]['uuid'], 'failed')],
                         [(e['tag'], e['status']) for e in events])
        # Nova's compute reads the resolved ARQs, aborts the build and
        # deletes them.
        (failed,) = self.nova('get_arqs_for_instance', instance,
                              only_resolved=True)
        self.assertEqual(('BindFailed', self.host, instance), (
            failed['state'], failed['hostname'], failed['instance_uuid']))
        self.assertIsNone(self.nova('delete_arqs_for_instance', instance))
        self.assertEqual([], self._arqs())

    def test_unknown_profile(self):
        error = self.assertNovaRaises('DeviceProfileError',
                                      'request_groups', 'no-such-profile')
        self.assertIn('Expected 1 device profile but got nothing', str(error))
        self.assertNovaRaises('AcceleratorRequestOpFailed', 'create_arqs',
                              'no-such-profile')
        self.assertEqual(404, self.recorder.requests[-1]['status'])

    def test_delete_unknown(self):
        arqs = self.nova('create_arqs', PROFILE)
        unknown = uuidutils.generate_uuid()
        # Nova logs a failed delete by uuids and goes on.
        self.assertIsNone(self.nova('delete_arqs_by_uuid',
                                    [arqs[0]['uuid'], unknown]))
        self.assertEqual(404, self.recorder.requests[-1]['status'])
        # As in Cyborg 17.0.0, one unknown uuid deletes nothing.
        self.assertEqual([arqs[0]['uuid']], [a['uuid'] for a in self._arqs()])
        self.assertIsNone(self.nova('delete_arqs_for_instance', unknown))
        self.assertEqual(204, self.recorder.requests[-1]['status'])
        self.assertNovaRaises('AcceleratorRequestOpFailed',
                              'get_arq_by_uuid', unknown)
