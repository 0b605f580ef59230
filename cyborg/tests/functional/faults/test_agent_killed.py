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
"""An agent killed (``SIGKILL``) while it programs an FPGA for a bind."""

import signal
import time

from oslo_log import log
import pytest

from cyborg.common import placement_names
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import deployable as deployable_obj
from cyborg import states
from cyborg.tests import functional
from cyborg.tests.functional import faults

LOG = log.getLogger(__name__)

#: [DEFAULT] rpc_response_timeout of the conductor: how soon it notices.
NOTICE = 4


@pytest.mark.long
class TestAgentKilled(faults.FaultTestCase):

    def setUp(self):
        super().setUp()
        self.use_vhost()
        self.start_conductor(0, DEFAULT={'rpc_response_timeout': NOTICE})
        self.host = self.placement.hostname
        self.agent = self.start_programming_agent(self.host)

    def _placement_view(self):
        """Cyborg's providers of the host: inventories, traits, usages."""
        view = {}
        for name, uuid in self.children(self.host).items():
            view[name] = [self.rp.get('/resource_providers/%s/%s' % (
                uuid, what)).json()[what] for what in (
                    'inventories', 'traits', 'usages')]
            view[name][1].sort()
        return view

    def _unloaded(self, view, rp):
        """``view`` without the traits of what region ``rp`` holds."""
        names = {name for name, uuid in self.children(self.host).items()
                 if uuid == rp}
        return {name: [inventories, [
            t for t in traits if name not in names or
            not placement_names.names_loaded(t)], usages]
            for name, (inventories, traits, usages) in view.items()}

    def test_bind_fails_cleanly_and_binds_again_once_agent_is_back(self):
        self.wait_for_placement()
        self.create_profiles()
        rp = self.candidate(self.host)
        before = self._placement_view()
        instance, arq = self.start_bind(self.host, rp,
                                        faults.BITSTREAM_PROFILE)
        functional.wait('programming', lambda: self.fpgaconf.calls)

        self.agent.stop(signal.SIGKILL)
        killed = time.monotonic()
        # The conductor hears no heartbeat: the bind fails, Nova is told.
        self.event(instance, arq.uuid, status='failed', timeout=NOTICE * 5)
        LOG.info('The bind failed %.1f s after its agent was killed',
                 time.monotonic() - killed)
        arq = self.reload_arq(arq)
        self.assertEqual(states.BIND_FAILED, arq.state)
        self.assertIsNone(arq.attach_handle_id)
        self.assertEqual([], handle_obj.AttachHandle.list(
            self.ctx, filters={'in_use': True}))
        # Nobody knows what the region holds now: no bind takes it for
        # loaded, the next one programs it.
        (region,) = deployable_obj.Deployable.list(self.ctx,
                                                   filters={'rp_uuid': rp})
        self.assertIsNone(region.bitstream_id)
        # Nova gives its claim back when the boot fails. Until the host
        # reports again, no trait says what the region holds.
        self.assertEqual(204, self.rp.delete(
            '/allocations/%s' % instance).status_code)
        self.assertEqual(self._unloaded(before, rp), self._placement_view())

        # The agent comes back; Nova's next try programs the region again.
        self.open_gate()
        self.agent = self.start_programming_agent(self.host)
        functional.wait('the agent back', lambda: 'cyborg-agent serving on'
                        in self.agent.log())
        # Its first report says what the region holds again.
        functional.wait('the traits back',
                        lambda: self._placement_view() == before)
        again = self.boot(self.host, rp, faults.BITSTREAM_PROFILE)
        LOG.info('The region was bound again %.1f s after the kill',
                 time.monotonic() - killed)
        self.assertEqual(2, len(self.fpgaconf.calls))
        self.assertEqual(self.image['id'], deployable_obj.Deployable.list(
            self.ctx, filters={'rp_uuid': rp})[0].bitstream_id)
        self.assert_consistent([again[0]])
