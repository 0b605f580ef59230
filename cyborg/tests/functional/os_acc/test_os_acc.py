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
"""os-acc's plug and unplug against a live API and conductor."""

import socket

from keystoneauth1 import adapter
from keystoneauth1 import noauth
from keystoneauth1 import session
from oslo_utils import uuidutils

from cyborg import os_acc
from cyborg.tests.functional.api import test_clients

PROFILE = {'accel:device_profile': 'fpga-vf'}


def _adapter(endpoint):
    return adapter.Adapter(session.Session(auth=noauth.NoAuth()),
                           service_type='accelerator',
                           endpoint_override=endpoint)


class TestOsAcc(test_clients.LiveTestCase):

    def setUp(self):
        super().setUp()
        self.api = _adapter(self.endpoint)
        self.api.post('/device_profiles', json=[{
            'name': 'fpga-vf', 'groups': [{'resources:FPGA': '2'}]}])
        self.addCleanup(setattr, os_acc, '_client', None)
        os_acc.initialize(self.api, timeout=5)
        self.instance = {'uuid': uuidutils.generate_uuid(), 'name': 'vm1'}

    def _arqs(self):
        return self.api.get('/accelerator_requests?instance=%s'
                            % self.instance['uuid']).json()['arqs']

    def test_plug_then_unplug(self):
        handles = os_acc.plug(self.instance, {
            'hostname': 'host1', 'uuid': test_clients.RP_UUID}, PROFILE)
        self.assertEqual(['0000:5e:00.1', '0000:5e:00.2'],
                         sorted(h['pci_id'] for h in handles))
        self.assertEqual({'PCI'}, {h['attach_handle_type'] for h in handles})
        self.assertEqual({'Bound'}, {a['state'] for a in self._arqs()})
        self.assertEqual(2, os_acc.unplug(self.instance))
        self.assertEqual([], self._arqs())
        self.assertEqual(0, os_acc.unplug(self.instance))

    def test_rp_groups_by_index(self):
        handles = os_acc.plug(self.instance, {
            'hostname': 'host1', 'groups': {0: test_clients.RP_UUID}},
            PROFILE)
        self.assertEqual(2, len(handles))

    def test_flavor_without_profile_plugs_nothing(self):
        self.assertEqual([], os_acc.plug(self.instance, {}, {'hw:x': 'y'}))

    def test_unknown_profile(self):
        self.assertRaises(os_acc.DeviceProfileNotFound, os_acc.plug,
                          self.instance, {'hostname': 'host1'},
                          {'accel:device_profile': 'nope'})

    def test_failed_bind_cleans_up(self):
        exc = self.assertRaises(
            os_acc.AcceleratorBindFailed, os_acc.plug, self.instance,
            {'hostname': 'another-host', 'uuid': test_clients.RP_UUID},
            PROFILE)
        self.assertIn(self.instance['uuid'], str(exc))
        # Refused in the PATCH itself: the ARQs never had the instance.
        self.assertIn('not on another-host', str(exc))
        self.assertEqual(
            [], self.api.get('/accelerator_requests').json()['arqs'])


class TestUnavailable(test_clients.base.TestCase):

    def test_nobody_listening(self):
        with socket.socket() as sock:
            sock.bind(('127.0.0.1', 0))
            port = sock.getsockname()[1]
        api = _adapter('http://127.0.0.1:%d/v2' % port)
        self.assertRaises(os_acc.CyborgAgentUnavailable,
                          os_acc.initialize, api, timeout=0.2)

    def test_plug_before_initialize(self):
        self.assertRaises(os_acc.OsAccError, os_acc.plug, {'uuid': 'x'},
                          {}, PROFILE)
