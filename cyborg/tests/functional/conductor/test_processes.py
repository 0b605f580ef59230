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
"""Two conductors and three agents as processes, over RabbitMQ.

Real parts all through: the conductors share a PostgreSQL database and
the real Placement (served by this test process), the agents read
simulated sysfs trees, and Nova is an event receiver in this process.
The test plays Nova: it asks Placement for allocation candidates, claims
them, creates and binds ARQs through the conductors and waits for the
``accelerator-request-bound`` events.
"""

import signal

import pytest

from cyborg.objects import device_profile
from cyborg.tests import functional
from cyborg.tests.functional import services

HOSTS = 3


@pytest.mark.long
class TestConductorsAndAgents(services.ServicesTestCase):

    def setUp(self):
        super().setUp()
        self.use_vhost()
        self.conductors = [self.start_conductor(i) for i in range(2)]
        for host in self.host_names(HOSTS):
            self.start_agent(host)

    def test_devices_reach_placement_and_instances_boot(self):
        self.wait_for_placement()
        self.rpc.device_profile_create(self.ctx, device_profile.DeviceProfile(
            self.ctx, name='fpga', groups=[services.PROFILE]))
        host = sorted(self.compute_rps)[0]
        self.assert_handle_of(*self.boot(host))

        # The broker drops every connection, as when it restarts: the
        # services reconnect and carry on.
        self.assertEqual(0, functional.rabbitmqctl(
            'close_all_connections', '-p', self.vhost, 'test restart'))
        self.boot(host)

        # A card added to a host reaches Placement through the next report.
        self.trees[host].intel_fpga('0000:af:00.0', vfs=services.VFS)
        functional.wait('the new card', lambda: '%s_0000:af:00.0' % host in
                        self.children(host))

        # One conductor dies; the other serves alone.
        self.conductors[0].stop(signal.SIGKILL)
        self.boot(sorted(self.compute_rps)[1])
