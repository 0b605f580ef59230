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
"""Fault tests: a part of the deployment goes away while Cyborg works.

Each test runs the services as processes
(:mod:`cyborg.tests.functional.services`), takes a conductor, an agent,
the broker, Placement, the database or Nova away in the middle of their
work (or restarts every service in turn), brings it back, and checks that
every accelerator request ends in a final state, that Nova heard of each,
and that nothing leaked. The figures they log are those of
``doc/source/admin/failure-behaviour.rst``.
"""

import os

from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import device_profile
from cyborg.objects import nova_event as event_obj
from cyborg import states
from cyborg.tests import functional
from cyborg.tests.functional import services
from cyborg.tests import openstack_fixtures
from cyborg.tests import stand_ins

#: A profile whose binds load a bitstream into the region first.
BITSTREAM_PROFILE = 'fpga-bitstream'


class FaultTestCase(services.ServicesTestCase):
    """Services as processes, and FPGA programming that waits for a gate.

    The agents' ``fpgaconf`` stands in for OPAE's: it records its call,
    then waits until the test opens the gate (:meth:`open_gate`), so that
    a test can act while binds are programming.
    """

    def setUp(self):
        super().setUp()
        missing = openstack_fixtures.Glance.missing()
        if missing:
            self.skipTest(missing)
        self.glance = self.useFixture(openstack_fixtures.Glance())
        self.image = self.glance.add_image(b'green bitstream')
        self.gate = os.path.join(self.tmp, 'gate')
        # A tool left waiting by a killed agent ends with the test.
        self.addCleanup(self.open_gate)
        self.fpgaconf = self.useFixture(stand_ins.StandInTool(
            'fpgaconf', 'import os, time\n'
                        'while not os.path.exists(%r):\n'
                        '    time.sleep(0.05)' % self.gate))

    def open_gate(self):
        with open(self.gate, 'w'):
            pass

    def start_programming_agent(self, host):
        """Start the agent of ``host``; it programs with the stand-in tool."""
        return self.start_agent(
            host, fpga={'fpgaconf_path': self.fpgaconf.path,
                        'trusted_image_owners': self.glance.owner},
            glance={'endpoint_override': self.glance.url,
                    'download_dir': self.tmp})

    def create_profiles(self):
        """``fpga``, any Intel FPGA; :data:`BITSTREAM_PROFILE`, programmed."""
        for name, group in (('fpga', services.PROFILE),
                            (BITSTREAM_PROFILE, dict(
                                services.PROFILE,
                                **{'accel:bitstream_id': self.image['id']}))):
            self.rpc.device_profile_create(
                self.ctx, device_profile.DeviceProfile(
                    self.ctx, name=name, groups=[group]))

    def assert_consistent(self, bound):
        """Every ARQ of ``bound`` is Bound, to a handle of its own.

        No other handle is in use, and every event reached Nova.
        """
        arqs = [self.reload_arq(a) for a in bound]
        self.assertEqual([states.BOUND] * len(arqs), [a.state for a in arqs])
        handles = [a.attach_handle_id for a in arqs]
        self.assertEqual(len(handles), len(set(handles)))
        in_use = handle_obj.AttachHandle.list(self.ctx,
                                              filters={'in_use': True})
        self.assertEqual(sorted(handles), sorted(h.id for h in in_use))
        # Nova may hear of the last event just before it is crossed off.
        functional.wait('every event delivered', lambda: (
            event_obj.NovaEvent.next_due(self.ctx) is None))
