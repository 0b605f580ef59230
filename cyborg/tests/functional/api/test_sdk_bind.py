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
"""What an openstacksdk script reads right after a bind PATCH.

The API of :class:`~cyborg.tests.functional.api.test_clients.LiveTestCase`
with its conductor's background binds held until the test runs them.
"""

import functools

import futurist

from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.api import test_clients

INSTANCE = test_clients.INSTANCE
IMAGE = test_clients.IMAGE


class _HeldBinds:
    """A conductor's background for binds: nothing runs until :meth:`run`."""

    def __init__(self):
        self.held = []

    def submit(self, fn, *args, **kwargs):
        future = futurist.Future()
        self.held.append((future, functools.partial(fn, *args, **kwargs)))
        return future

    def run(self):
        held, self.held = self.held, []
        for future, call in held:
            future.set_result(call())


class TestSDKSeesTheBind(test_clients.LiveTestCase):
    """What a user's openstacksdk script reads right after a bind PATCH.

    The conductor's background binds wait until the test runs them, so
    what the script reads is what the PATCH itself did.
    """

    def conductor_fixture(self):
        self.background = _HeldBinds()
        return cyborg_fixtures.Conductor(executor=self.background)

    def _patched(self, group):
        acc = self.connect()
        acc.create_device_profile(name='sdk-dp', groups=[group])
        arq = acc.create_accelerator_request(device_profile_name='sdk-dp')
        acc.patch_accelerator_request(arq.uuid, self.bind_patch())
        return acc, acc.get_accelerator_request(arq.uuid)

    def test_bound_when_the_patch_returns(self):
        # Nothing to program, a PCI function to hand out: done in the
        # PATCH, as openstack-cyborg 17.0.0 did.
        _acc, arq = self._patched({'resources:FPGA': '1'})
        self.assertEqual(('Bound', 'PCI', INSTANCE),
                         (arq.state, arq.attach_handle_type,
                          arq.instance_uuid))
        self.assertEqual([], self.background.held)

    def test_a_bind_that_programs_goes_on_in_the_background(self):
        acc, arq = self._patched({'resources:FPGA': '1',
                                  'accel:bitstream_id': IMAGE})
        self.assertEqual(('BindStarted', ''),
                         (arq.state, arq.attach_handle_type))
        self.background.run()
        self.assertEqual('Bound', acc.get_accelerator_request(
            arq.uuid).state)
