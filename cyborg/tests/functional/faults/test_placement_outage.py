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
"""Placement stopped for a minute while agents report and Nova binds."""

import collections
import time

from oslo_log import log
import pytest

from cyborg import exception
from cyborg import states
from cyborg.tests import functional
from cyborg.tests.functional import faults
from cyborg.tests.functional import services

LOG = log.getLogger(__name__)

#: How long Placement is away: several of the agents' one-second reports
#: and of the conductor's reconcile passes (the guide's figures: 60 s).
OUTAGE = functional.tunable('PLACEMENT_OUTAGE', 10)
NEW_CARD = '0000:af:00.0'


@pytest.mark.long
class TestPlacementOutage(faults.FaultTestCase):

    def setUp(self):
        super().setUp()
        self.use_vhost()
        self.start_conductor(0)
        # The agent of "short" has that [DEFAULT] host; its compute node
        # is named by the FQDN, which the agent finds in Placement and
        # reports under, and which Nova names.
        self.plain = self.placement.hostname
        self.short = self.placement.hostname + '-b'
        self.add_host(self.short, node=self.short + '.example.org')
        for host in (self.plain, self.short):
            self.start_agent(host)

    def _providers(self):
        """Cyborg's providers in Placement: name -> [uuid, ...]."""
        providers = collections.defaultdict(list)
        for host in self.compute_rps:
            response = self.rp.get('/resource_providers', params={
                'in_tree': self.compute_rps[host]})
            for p in response.json()['resource_providers']:
                providers[p['name']].append(p['uuid'])
        return providers

    def test_inventory_converges_and_binds_end_cleanly(self):
        self.wait_for_placement()
        self.create_profiles()
        plain_rp = self.candidate(self.plain)
        short_rp = self.candidate(self.short)
        # Nova claimed both before Placement went away.
        plain_instance = self.allocate(plain_rp)
        short_instance = self.allocate(short_rp)
        (plain_arq,) = self.rpc.arq_create(self.ctx, 'fpga', 'p')
        (short_arq,) = self.rpc.arq_create(self.ctx, 'fpga', 'p')
        before = self._providers()

        self.placement.stop()
        stopped = time.monotonic()
        # A card appears; its report reaches the database only.
        self.trees[self.plain].intel_fpga(NEW_CARD, vfs=services.VFS)
        # A bind naming the host's compute node needs no Placement.
        self.rpc.arq_apply_patch(self.ctx, {plain_arq.uuid: {
            'hostname': self.plain, 'device_rp_uuid': plain_rp,
            'instance_uuid': plain_instance}})
        self.event(plain_instance, plain_arq.uuid)
        # One that names the host otherwise needs Placement (the compute
        # node may have been renamed): refused at once, the ARQ left as
        # it was.
        asked = time.monotonic()
        self.assertRaises(
            exception.PlacementUnavailable, self.rpc.arq_apply_patch,
            self.ctx, {short_arq.uuid: {
                'hostname': self.short,
                'device_rp_uuid': short_rp,
                'instance_uuid': short_instance}})
        LOG.info('A bind that needs Placement was refused after %.1f s',
                 time.monotonic() - asked)
        self.assertEqual(states.INITIAL, self.reload_arq(short_arq).state)
        # The outage lasts its length whatever happens in it.
        time.sleep(max(0, OUTAGE - (time.monotonic() - stopped)))

        self.placement.start()
        started = time.monotonic()
        new_rp = '%s_%s' % (self.plain, NEW_CARD)
        functional.wait('the new card', lambda: new_rp in self.children(
            self.plain))
        LOG.info('The card added during a %.0f s Placement outage reached '
                 'it %.1f s after Placement was back', started - stopped,
                 time.monotonic() - started)
        after = self._providers()
        self.assertEqual([], [n for n, uuids in after.items()
                              if len(uuids) > 1])
        self.assertEqual(dict(before, **{new_rp: after[new_rp]}),
                         dict(after))
        inventory = self.rp.get('/resource_providers/%s/inventories' %
                                after[new_rp][0]).json()['inventories']
        self.assertEqual(services.VFS, inventory['FPGA']['total'])

        # Nova tries the bind again, naming the compute node.
        self.rpc.arq_apply_patch(self.ctx, {short_arq.uuid: {
            'hostname': self.nodes[self.short], 'device_rp_uuid': short_rp,
            'instance_uuid': short_instance}})
        self.event(short_instance, short_arq.uuid)
        self.assert_consistent([plain_arq, short_arq])
