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
"""A conductor killed (``SIGKILL``) in the middle of a batch of binds."""

import signal
import time

from oslo_log import log
import pytest

from cyborg.conductor import rpcapi
from cyborg.tests import functional
from cyborg.tests.functional import faults

LOG = log.getLogger(__name__)

HOSTS = 2


@pytest.mark.long
class TestConductorKilled(faults.FaultTestCase):

    def setUp(self):
        super().setUp()
        self.use_vhost()
        self.conductors = [self.start_conductor(i) for i in range(2)]
        self.hosts = self.host_names(HOSTS)
        for host in self.hosts:
            self.start_programming_agent(host)

    def _rpc_of(self, index):
        """A conductor client that calls ``conductor-<index>`` only."""
        client = rpcapi.ConductorAPI()
        client.client = client.client.prepare(server='conductor-%d' % index)
        return client

    def test_survivor_serves_and_restarted_conductor_resumes(self):
        self.wait_for_placement()
        self.create_profiles()
        regions = [(host, rp) for host in self.hosts
                   for rp in sorted(self.children(host).values())]
        # The last region stays free for a boot while the others program.
        (spare_host, spare_rp) = regions.pop()
        batch = [self.start_bind(host, rp, faults.BITSTREAM_PROFILE,
                                 rpc=self._rpc_of(i % 2))
                 for i, (host, rp) in enumerate(regions)]
        functional.wait('every bind programming',
                        lambda: len(self.fpgaconf.calls) == len(batch))

        # conductor-0 dies with its binds half done (they wait in the
        # agents' fpgaconf); conductor-1 serves a new boot meanwhile.
        self.conductors[0].stop(signal.SIGKILL)
        killed = time.monotonic()
        spare = self.boot(spare_host, spare_rp)
        LOG.info('The surviving conductor bound an ARQ %.1f s after the '
                 'other was killed', time.monotonic() - killed)

        # Restarted, conductor-0 takes up the binds left in BindStarted;
        # then the programming ends.
        restarted = self.start_conductor(0)
        functional.wait('the binds resumed', lambda: 'Resuming binds of '
                        'accelerator requests' in restarted.log())
        self.open_gate()
        for instance, arq in batch:
            self.event(instance, arq.uuid)
        LOG.info('%d binds resumed and bound %.1f s after the kill',
                 len(batch), time.monotonic() - killed)

        self.assert_consistent([arq for _, arq in batch] + [spare[0]])
        for (instance, arq), (host, rp) in zip(batch, regions):
            self.assert_handle_of(self.reload_arq(arq), rp)
