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
"""What the quickstart says when Nova's compute node does not come up.

A Tempest stack of the suite once failed to start with only "timed out
waiting for the compute node": the message now says what was missing.
The compute API is answered by a stand-in (a node that never reports
cannot be made of the real Nova on demand).
"""

import fixtures
import testtools

from cyborg_quickstart import nova


class _Response:

    def __init__(self, body):
        self.body = body

    def json(self):
        return self.body


class _ComputeAPI:
    """``/os-services`` and ``/os-hypervisors`` as given."""

    def __init__(self, services, hypervisors):
        self.bodies = {'/os-services': {'services': services},
                       '/os-hypervisors': {'hypervisors': hypervisors}}

    def get(self, path, params=None):
        return _Response(self.bodies[path])


class TestWaitForCompute(testtools.TestCase):

    def _timeout(self, services, hypervisors):
        state = self.useFixture(fixtures.TempDir()).path
        nova_services = nova.NovaServices(
            state, state, {}, 'http://placement', 'http://cyborg',
            'http://glance', 'rabbit://', 'host1')
        api = _ComputeAPI(services, hypervisors)
        self.useFixture(fixtures.MockPatchObject(nova_services, 'adapter',
                                                 return_value=api))
        error = self.assertRaises(nova.NovaError,
                                  nova_services.wait_for_compute, timeout=0)
        return str(error).split('\n')[0]

    def test_no_compute_node(self):
        message = self._timeout([{'id': 1, 'updated_at': None}], [])
        self.assertIn('timed out waiting for the compute node host1 in '
                      'Nova, reporting', message)
        self.assertIn('(last seen: 0 compute nodes, nova-compute reports '
                      "{1: None}, first {1: None})", message)

    def test_node_without_a_newer_report(self):
        reported = [{'id': 1, 'updated_at': '2026-12-06T21:00:00'}]
        message = self._timeout(reported, [{'id': 1}])
        self.assertIn("last seen: 1 compute nodes, nova-compute reports "
                      "{1: '2026-12-06T21:00:00'}", message)
