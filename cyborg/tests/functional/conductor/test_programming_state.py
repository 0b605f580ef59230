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
"""An FPGA region being programmed: no bind, no second programming.

The host's inventory comes in as its agent reports it (a region and one
function below it, both advertising the function the region holds) and
reaches the real Placement. The stand-in agent's ``program`` runs a hook
while the conductor waits for it, where a test looks at the database and
Placement mid-programming and tries what another tenant or operator
would; before it answers, it reports the host as the real agent does.
"""

import datetime
import logging
import time

import fixtures
import futurist
from oslo_utils import timeutils
from oslo_utils import uuidutils

from cyborg.agent import rpcapi as agent_rpcapi
from cyborg.common import attributes
from cyborg.common import placement_names
from cyborg.conductor import binding
import cyborg.conf
from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg.drivers import report
from cyborg import exception
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import driver_report
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import openstack_fixtures
from cyborg.tests import stand_ins

CONF = cyborg.conf.CONF

BITSTREAM = 'd5ca2f11-3108-4426-a11c-a959987565df'
OLD = 'a53b9a4e-5b1e-4c31-9f6b-4a3b5a4d6c10'
NEW = '0f3e2d1c-5b4a-4978-8695-a4b3c2d1e0f9'
REGION_TYPE = '9926ab6d6c925a68aabca7d84c545738'


def _trait(function_id):
    return placement_names.function_trait(
        placement_names.normalize_id(function_id))


OLD_TRAIT, NEW_TRAIT = _trait(OLD), _trait(NEW)
REGION_TRAIT = placement_names.region_trait(REGION_TYPE)


class ProgrammingTestCase(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.placement = self.useFixture(openstack_fixtures.Placement())
        self.host = self.placement.hostname
        self.agent = self.useFixture(
            stand_ins.StandInAgent(host=self.host)).endpoint
        self.useFixture(openstack_fixtures.NovaEvents())
        self.ctx = self.admin_context
        self.compute_rp = uuidutils.generate_uuid()
        response = self.placement.adapter().post(
            '/resource_providers', json={'name': self.host,
                                         'uuid': self.compute_rp})
        self.assertEqual(200, response.status_code, response.text)
        # What the host's agent asks at start, then its first report.
        self.api.compute_node_rp(self.ctx, hostname=self.host,
                                 rp_name=self.host)
        self.report(OLD_TRAIT, REGION_TRAIT)
        self.region, self.vf = self._deployable('region'), self._deployable(
            'region-vf1')
        self.assertEqual(self.region.id, self.vf.parent_id)

    def report(self, *loaded):
        """The agent's report: the region and its function hold ``loaded``.

        As the Intel driver reports an image's topology: both deployables
        carry the traits of what the region holds.
        """
        traits = ['CUSTOM_FPGA_INTEL', *loaded]
        deployables = [
            report.deployable('region', 'intel', 'FPGA', traits,
                              [report.pci_handle('0000:5e:00.0')]),
            report.deployable('region-vf1', 'intel', 'FPGA', traits,
                              [report.pci_handle('0000:5e:00.1')],
                              parent_name='region')]
        self.api.report_host(self.ctx, driver_report.HostReport(
            hostname=self.host, devices=[report.device(
                'FPGA', '8086', 'PAC Arria10', '0000:5e:00.0',
                deployables)]))

    def _deployable(self, name):
        found, = [d for d in deployable_obj.Deployable.list(self.ctx)
                  if d.name == name and d.rp_uuid]
        return found

    def db_traits(self, deployable):
        return attributes.decode(
            (a.key, a.value) for a in db_api.get_all(
                self.ctx, 'attribute',
                filters={'deployable_id': deployable.id}))[1]

    def placement_traits(self, deployable):
        response = self.placement.adapter().get(
            '/resource_providers/%s/traits' % deployable.rp_uuid)
        self.assertEqual(200, response.status_code, response.text)
        return set(response.json()['traits'])

    def candidates(self, trait):
        """The providers of the host that Placement offers for ``trait``."""
        response = self.placement.adapter().get(
            '/allocation_candidates', params={
                'resources': 'FPGA:1', 'required': trait,
                'in_tree': self.compute_rp})
        self.assertEqual(200, response.status_code, response.text)
        return {rp for request in response.json()['allocation_requests']
                for rp in request['allocations']}

    def marked(self):
        return deployable_obj.Deployable.being_programmed(
            self.ctx, [self.region.id, self.vf.id])

    def arq(self, trait=None, **accel):
        group = {'resources:FPGA': '1'}
        if trait is not None:
            group['trait:' + trait] = 'required'
        group.update({'accel:' + key: value for key, value in accel.items()})
        profile = db_utils.create_profile(
            self.ctx, name='dp-' + uuidutils.generate_uuid(), groups=[group])
        return db_utils.create_arqs(self.ctx, profile)[0]

    def patch(self, arq, deployable):
        self.api.arq_apply_patch(self.ctx, {arq.uuid: {
            'hostname': self.host, 'device_rp_uuid': deployable.rp_uuid,
            'instance_uuid': uuidutils.generate_uuid()}})

    def state(self, arq):
        return arq_obj.AcceleratorRequest.get_by_uuid(self.ctx,
                                                      arq.uuid).state

    def in_use(self):
        return {h.deployable_id for h in db_api.get_all(
            self.ctx, 'attach_handle', filters={'in_use': True})}

    def while_programming(self, look):
        """Run ``look()`` in the first ``program`` call, then report NEW."""
        seen = {}

        def hook(**kwargs):
            if not seen:
                seen.update(look())
                self.report(NEW_TRAIT, REGION_TRAIT)
        self.agent.hooks['program'] = hook
        return seen


class TestNoBindWhileProgramming(ProgrammingTestCase):

    def test_old_function_offered_and_bound_by_nobody(self):
        both = {self.region.rp_uuid, self.vf.rp_uuid}
        self.assertEqual(both, self.candidates(OLD_TRAIT))
        loading = self.arq(bitstream_id=BITSTREAM)
        # Another tenant's binds of the function the region holds: one
        # patched mid-programming, one checked before it started (it asks
        # by trait: nothing to program, so it is not checked again).
        patched, racing = self.arq(function_id=OLD), self.arq(
            trait=OLD_TRAIT)
        checked = binding.check(self.ctx, racing, self.host, self.vf.rp_uuid)

        def look():
            refused = self.assertRaises(exception.BindRefused, self.patch,
                                        patched, self.vf)
            started = arq_obj.AcceleratorRequest._from_db_object(
                self.ctx, arq_db.update_state(
                    self.ctx, racing.uuid, states.BIND_STARTED, values={
                        'hostname': self.host,
                        'device_rp_uuid': self.vf.rp_uuid,
                        'instance_uuid': uuidutils.generate_uuid()}))
            raced = binding.bind(self.ctx, started, agent_rpcapi.AgentAPI(),
                                 time.monotonic() + 60, checked=checked)
            return {'db': self.db_traits(self.region) |
                    self.db_traits(self.vf),
                    'placement': self.placement_traits(self.region) |
                    self.placement_traits(self.vf),
                    'candidates': self.candidates(OLD_TRAIT),
                    'refused': str(refused), 'raced': raced.state,
                    'in_use': self.in_use(), 'marked': set(self.marked())}

        seen = self.while_programming(look)
        self.patch(loading, self.region)
        self.assertEqual(states.BOUND, self.state(loading))
        # Mid-programming: nothing says the region holds the old function.
        self.assertNotIn(OLD_TRAIT, seen['db'])
        self.assertNotIn(REGION_TRAIT, seen['db'])
        self.assertIn('CUSTOM_FPGA_INTEL', seen['db'])
        self.assertNotIn(OLD_TRAIT, seen['placement'])
        self.assertNotIn(REGION_TRAIT, seen['placement'])
        self.assertEqual(set(), seen['candidates'])
        self.assertEqual({self.region.id, self.vf.id}, seen['marked'])
        # Neither of the other tenant's binds took the region's function.
        self.assertIn('being programmed', seen['refused'])
        self.assertEqual(states.INITIAL, self.state(patched))
        self.assertEqual(states.BIND_FAILED, seen['raced'])
        self.assertEqual({self.region.id}, seen['in_use'])
        self.assertEqual({self.region.id}, self.in_use())
        # Done: the report's traits reach Placement, the marks are gone.
        self.assertEqual({}, self.marked())
        self.assertIn(NEW_TRAIT, self.db_traits(self.vf))
        self.assertNotIn(OLD_TRAIT, self.db_traits(self.vf))
        self.assertIn(NEW_TRAIT, self.placement_traits(self.vf))
        self.assertIn(REGION_TRAIT, self.placement_traits(self.region))
        self.assertEqual(both, self.candidates(NEW_TRAIT))
        self.assertEqual(set(), self.candidates(OLD_TRAIT))
        self.assertEqual(BITSTREAM, db_api.get(
            self.ctx, 'deployable', self.region.uuid).bitstream_id)

    def test_report_mid_programming_is_withheld_from_placement(self):
        # The agent's periodic report while the tool runs still shows the
        # old function: the database takes it, Placement does not.
        def look():
            self.report(OLD_TRAIT, REGION_TRAIT)
            return {'db': self.db_traits(self.vf),
                    'placement': self.placement_traits(self.vf)}

        seen = self.while_programming(look)
        self.api.deployable_program(self.ctx, self.region.uuid, BITSTREAM)
        self.assertIn(OLD_TRAIT, seen['db'])
        self.assertNotIn(OLD_TRAIT, seen['placement'])
        self.assertEqual({self.region.rp_uuid, self.vf.rp_uuid},
                         self.candidates(NEW_TRAIT))

    def test_failure_leaves_placement_as_the_database(self):
        self.agent.failures['program'] = exception.ProgrammingFailed(
            deployable='region', reason='fpgaconf exited with 1')
        loading = self.arq(bitstream_id=BITSTREAM)
        self.patch(loading, self.region)
        self.assertEqual(states.BIND_FAILED, self.state(loading))
        self.assertEqual({}, self.marked())
        self.assertEqual(set(), self.in_use())
        # What the region holds is unknown until its host says.
        for deployable in (self.region, self.vf):
            self.assertNotIn(OLD_TRAIT, self.db_traits(deployable))
            self.assertNotIn(OLD_TRAIT, self.placement_traits(deployable))
        self.report(OLD_TRAIT, REGION_TRAIT)
        self.assertEqual({self.region.rp_uuid, self.vf.rp_uuid},
                         self.candidates(OLD_TRAIT))


class TestProgrammingRefused(ProgrammingTestCase):

    def test_function_in_use_refuses_programming_of_its_region(self):
        running = self.arq()
        self.patch(running, self.vf)
        self.assertEqual(states.BOUND, self.state(running))
        error = self.assertRaises(
            exception.ObjectInUse, self.api.deployable_program, self.ctx,
            self.region.uuid, BITSTREAM)
        self.assertIn('1 accelerator(s)', str(error))
        # Nor does a bind program it under the running instance.
        loading = self.arq(bitstream_id=BITSTREAM)
        self.patch(loading, self.region)
        self.assertEqual(states.BIND_FAILED, self.state(loading))
        self.assertEqual([], self.agent.called('program'))
        self.assertEqual({}, self.marked())
        self.assertIn(OLD_TRAIT, self.placement_traits(self.vf))

    def test_second_programming_refused(self):
        def look():
            errors = {}
            for name, deployable in (('region', self.region),
                                     ('vf', self.vf)):
                try:
                    self.api.deployable_program(self.ctx, deployable.uuid,
                                                uuidutils.generate_uuid())
                except exception.DeployableProgramming as e:
                    errors[name] = e
            return errors

        seen = self.while_programming(look)
        self.api.deployable_program(self.ctx, self.region.uuid, BITSTREAM)
        self.assertEqual({'region', 'vf'}, set(seen))
        self.assertIn('is being programmed since', str(seen['region']))
        self.assertEqual(1, len(self.agent.called('program')))
        self.assertEqual({}, self.marked())
        # Done, the region is programmed again at once.
        self.api.deployable_program(self.ctx, self.region.uuid, BITSTREAM)
        self.assertEqual(2, len(self.agent.called('program')))


class TestLeftBehind(ProgrammingTestCase):
    """Marks of a conductor that died while the agent programmed."""

    def _mark_as_long_ago(self, seconds):
        since = timeutils.utcnow() - datetime.timedelta(seconds=seconds)
        for deployable in (self.region, self.vf):
            db_api.update(self.ctx, 'deployable', deployable.uuid,
                          {'programming_since': since})

    def test_expired_with_the_binds(self):
        self._mark_as_long_ago(CONF.bind_timeout)
        binding.expire_binds(self.ctx)
        self.assertEqual({self.region.id, self.vf.id}, set(self.marked()))
        self._mark_as_long_ago(2 * CONF.bind_timeout + 1)
        binding.expire_binds(self.ctx)
        self.assertEqual({}, self.marked())
        running = self.arq()
        self.patch(running, self.vf)
        self.assertEqual(states.BOUND, self.state(running))

    def test_resumed_bind_takes_its_programming_over(self):
        loading = self.arq(bitstream_id=BITSTREAM)
        arq_db.update_state(self.ctx, loading.uuid, states.BIND_STARTED,
                            values={'hostname': self.host,
                                    'device_rp_uuid': self.region.rp_uuid,
                                    'instance_uuid':
                                        uuidutils.generate_uuid()})
        arq_db.claim_handle(self.ctx, loading.uuid, self.region.id)
        handle = arq_obj.AcceleratorRequest.get_by_uuid(
            self.ctx, loading.uuid).attach_handle_id
        deployable_obj.Deployable.start_programming(self.ctx, self.region.id,
                                                    keep=handle)
        for future in binding.resume_binds(self.ctx,
                                           futurist.SynchronousExecutor()):
            future.result()
        self.assertEqual(states.BOUND, self.state(loading))
        self.assertEqual(1, len(self.agent.called('program')))
        self.assertEqual({}, self.marked())
