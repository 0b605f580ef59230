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
"""The ARQ bind lifecycle through the conductor's RPC API on fake://.

A stand-in agent serves the host's RPC topic and records what the
conductor asks of it; the real Nova event receiver gets the
``accelerator-request-bound`` events over HTTP. Binds run synchronously
(the Conductor fixture's executor), so each PATCH has finished, Nova
event included, when the RPC call returns. :class:`BindTestCase` serves
the other bind tests too: programming and mediated devices
(``test_bind_devices``), Nova's events (``test_nova_events``) and those
of one function or card (``test_one_function``, ``test_shell_update``).
"""

import datetime
import logging
import socket
import time

import fixtures
import futurist
from oslo_utils import timeutils
from oslo_utils import uuidutils

from cyborg.conductor import binding
import cyborg.conf
from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg.db import models
from cyborg import exception
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import host as host_obj
from cyborg.objects import metric as metric_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import openstack_fixtures
from cyborg.tests import stand_ins

CONF = cyborg.conf.CONF

BITSTREAM = 'd5ca2f11-3108-4426-a11c-a959987565df'


class BindTestCase(base.ConductorTestCase):
    TRAITS = ('CUSTOM_FPGA_INTEL',)

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.agent = self.useFixture(stand_ins.StandInAgent()).endpoint
        self.nova = self.useFixture(openstack_fixtures.NovaEvents()).receiver
        self.ctx = self.admin_context
        self.deployable, self.handles = self._tree('host1', '0000:5e:00.0')

    def _tree(self, host, address, **kwargs):
        kwargs.setdefault('resource_class', 'FPGA')
        kwargs.setdefault('traits', self.TRAITS)
        _, deployable, handles = db_utils.create_device_tree(
            self.ctx, hostname=host, pci_address=address, **kwargs)
        deployable = db_api.update(self.ctx, 'deployable', deployable.uuid,
                                   {'rp_uuid': uuidutils.generate_uuid()})
        return deployable, handles

    def _arqs(self, group, count=1):
        profile = db_utils.create_profile(
            self.ctx, name='dp-' + uuidutils.generate_uuid(), groups=[group])
        return db_utils.create_arqs(self.ctx, profile, count=count)

    def _bind(self, arqs, rp_uuid=None, host='host1', instance=None):
        instance = instance or uuidutils.generate_uuid()
        self.api.arq_apply_patch(self.ctx, {a.uuid: {
            'hostname': host,
            'device_rp_uuid': rp_uuid or self.deployable.rp_uuid,
            'instance_uuid': instance} for a in arqs})
        return instance

    def _get(self, arq):
        return arq_obj.AcceleratorRequest.get_by_uuid(self.ctx, arq.uuid)

    def _in_use(self):
        return {h.uuid for h in db_api.get_all(
            self.ctx, 'attach_handle', filters={'in_use': True})}

    def _statuses(self, instance):
        return sorted((e['tag'], e['status'])
                      for e in self.nova.for_instance(instance))

    def _pending(self):
        """(ARQ uuid, attempts) of the events not delivered yet."""
        with db_api.main_context_manager.reader.using(self.ctx):
            return sorted((e.arq_uuid, e.attempts) for e in
                          self.ctx.session.query(models.NovaEvent))


class TestBind(BindTestCase):

    def test_bound_with_one_event_per_arq(self):
        arqs = self._arqs({'resources:FPGA': '2'}, count=2)
        instance = self._bind(arqs)
        bound = [self._get(a) for a in arqs]
        self.assertEqual({states.BOUND}, {a.state for a in bound})
        self.assertEqual({h.uuid for h in self.handles},
                         {a.attach_handle_uuid for a in bound})
        self.assertEqual({'PCI'}, {a.attach_handle_type for a in bound})
        self.assertEqual(sorted((a.uuid, 'completed') for a in arqs),
                         self._statuses(instance))
        self.assertEqual({'accelerator-request-bound'},
                         {e['name'] for e in self.nova.events})
        self.assertEqual([], self.agent.calls)

    def test_bound_in_the_call_when_a_handle_is_all(self):
        background = RecordingExecutor()
        self.useFixture(fixtures.MockPatchObject(
            self.conductor.manager, 'executor', background))
        arq = self._arqs({'resources:FPGA': '1'})[0]
        instance = self._bind([arq])
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual([(arq.uuid, 'completed')], self._statuses(instance))
        # One that loads a bitstream is bound in the background.
        loading = self._arqs({'resources:FPGA': '1',
                              'accel:bitstream_id': BITSTREAM})[0]
        self._bind([loading])
        self.assertEqual(states.BIND_STARTED, self._get(loading).state)
        self.assertEqual([loading.uuid], background.arqs)

    def _assert_fails(self, arq, instance, reason):
        failed = self._get(arq)
        self.assertEqual(states.BIND_FAILED, failed.state)
        self.assertIsNone(failed.attach_handle_id)
        self.assertEqual('', failed.attach_handle_type)
        # Nova still finds it by instance.
        self.assertEqual(instance, failed.instance_uuid)
        self.assertEqual([(arq.uuid, 'failed')], self._statuses(instance))
        self.assertEqual(set(), self._in_use())
        self.assertIn('Binding accelerator request %s failed: %s'
                      % (arq.uuid, reason), self.log.output)

    def _assert_refused(self, arqs, reason, **bind):
        """The PATCH fails at once; no ARQ moved, Nova heard nothing."""
        error = self.assertRaises(exception.BindRefused, self._bind, arqs,
                                  **bind)
        self.assertIn(reason, error.message)
        for arq in arqs:
            refused = self._get(arq)
            self.assertEqual((states.INITIAL, None, None),
                             (refused.state, refused.hostname,
                              refused.instance_uuid))
        self.assertEqual([], self.nova.events)
        self.assertEqual(set(), self._in_use())
        # Nova says only that the bind failed: the log says why.
        self.assertIn('Bind refused: %s' % error.message, self.log.output)
        return error

    def test_unknown_rp(self):
        arq = self._arqs({'resources:FPGA': '1'})[0]
        rp = uuidutils.generate_uuid()
        error = self._assert_refused([arq], 'no deployable has it',
                                     rp_uuid=rp)
        self.assertIn('resource provider %s' % rp, error.message)
        self.assertIn(arq.uuid, error.message)

    def test_rp_of_another_host(self):
        arq = self._arqs({'resources:FPGA': '1'})[0]
        self._assert_refused([arq], 'it is on host host1, not on host2',
                             host='host2')

    def test_device_gone_from_its_host(self):
        device = db_api.get_by_id(self.ctx, 'device',
                                  self.deployable.device_id)
        db_api.update(self.ctx, 'device', device.uuid,
                      {'vanished_at': timeutils.utcnow()})
        arq = self._arqs({'resources:FPGA': '1'})[0]
        self._assert_refused([arq], 'is no longer reported by its host')

    def test_resource_class_mismatch(self):
        arq = self._arqs({'resources:PGPU': '1'})[0]
        self._assert_refused([arq], 'it offers FPGA, the group asks for '
                                    'PGPU')

    def test_required_trait_missing(self):
        arq = self._arqs({'resources:FPGA': '1',
                          'trait:CUSTOM_OTHER': 'required'})[0]
        self._assert_refused([arq],
                             'it lacks required trait CUSTOM_OTHER')

    def test_forbidden_trait_present(self):
        arq = self._arqs({'resources:FPGA': '1',
                          'trait:CUSTOM_FPGA_INTEL': 'forbidden'})[0]
        self._assert_refused([arq],
                             'it has forbidden trait CUSTOM_FPGA_INTEL')

    def test_one_refused_bind_refuses_the_whole_patch(self):
        good = self._arqs({'resources:FPGA': '1'})[0]
        bad = self._arqs({'resources:PGPU': '1'})[0]
        self._assert_refused([good, bad], bad.uuid)

    def test_inventory_changed_after_the_bind_started(self):
        # Checked again in the background: here the device vanished
        # between the PATCH and the bind (or a conductor restart).
        arq = self._arqs({'resources:FPGA': '1'})[0]
        instance = uuidutils.generate_uuid()
        started = arq_db.update_state(
            self.ctx, arq.uuid, states.BIND_STARTED, values={
                'hostname': 'host1', 'device_rp_uuid': self.deployable.rp_uuid,
                'instance_uuid': instance})
        device = db_api.get_by_id(self.ctx, 'device',
                                  self.deployable.device_id)
        db_api.update(self.ctx, 'device', device.uuid,
                      {'vanished_at': timeutils.utcnow()})
        binding.submit(self.ctx, [self._get(started)],
                       futurist.SynchronousExecutor())
        self._assert_fails(arq, instance, 'its device %s is no longer '
                                          'reported' % device.uuid)

    def test_traits_that_match(self):
        arq = self._arqs({'resources:FPGA': '1',
                          'trait:CUSTOM_FPGA_INTEL': 'required',
                          'trait:CUSTOM_OTHER': 'forbidden'})[0]
        self._bind([arq])
        self.assertEqual(states.BOUND, self._get(arq).state)

    def test_no_handle_left(self):
        arqs = self._arqs({'resources:FPGA': '1'}, count=3)
        instances = [self._bind([a]) for a in arqs]
        resolved = [self._get(a) for a in arqs]
        self.assertEqual([states.BOUND, states.BOUND, states.BIND_FAILED],
                         [a.state for a in resolved])
        # Each handle went to exactly one ARQ.
        self.assertEqual({h.uuid for h in self.handles}, self._in_use())
        self.assertEqual(2, len({a.attach_handle_uuid for a in resolved[:2]}))
        self.assertEqual([(arqs[2].uuid, 'failed')],
                         self._statuses(instances[2]))

    def test_failed_arq_of_an_instance_fails_in_the_same_batch(self):
        good, bad = self._arqs({'resources:FPGA': '1'}, count=2)
        # The second finds no handle left: the first bind took the
        # other one.
        self._bind([self._arqs({'resources:FPGA': '1'})[0]])
        instance = self._bind([good, bad])
        self.assertEqual(sorted([(good.uuid, 'completed'),
                                 (bad.uuid, 'failed')]),
                         self._statuses(instance))

    def test_deleted_during_bind(self):
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:bitstream_id': BITSTREAM})[0]
        self.agent.hooks['program'] = lambda **kw: self.api.arq_delete(
            self.ctx, uuids=[arq.uuid])
        instance = self._bind([arq])
        self.assertRaises(exception.AcceleratorRequestNotFound,
                          self._get, arq)
        self.assertEqual(set(), self._in_use())
        # Nova deleted it and waits for nothing.
        self.assertEqual([], self.nova.for_instance(instance))

    def test_unbound_and_rebound(self):
        arq = self._arqs({'resources:FPGA': '1'})[0]
        self._bind([arq])
        self.api.arq_apply_patch(self.ctx, {arq.uuid: None})
        self.assertEqual(set(), self._in_use())
        self.assertEqual(states.UNBOUND, self._get(arq).state)
        instance = self._bind([arq])
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual([(arq.uuid, 'completed')], self._statuses(instance))

    def test_deadline_passed(self):
        arq = self._arqs({'resources:FPGA': '1'})[0]
        started = arq_db.update_state(
            self.ctx, arq.uuid, states.BIND_STARTED, values={
                'hostname': 'host1', 'device_rp_uuid': self.deployable.rp_uuid,
                'instance_uuid': uuidutils.generate_uuid()})
        binding.submit(self.ctx, [self._get(started)],
                       futurist.SynchronousExecutor(),
                       deadline=time.monotonic() - 1)
        self.assertEqual(states.BIND_FAILED, self._get(arq).state)
        self.assertIn('bind_timeout', self.log.output)


class TestComputeNodeName(BindTestCase):
    """Nova names the host by its compute node, here an FQDN."""

    TRAITS = ('CUSTOM_NVIDIA_T4',)

    def setUp(self):
        super().setUp()
        self.deployable, self.handles = self._tree(
            'host1', '0000:3b:00.0', handles=1, resource_class='VGPU',
            attach_type='MDEV', asked_type='nvidia-222')
        self.placement = self.useFixture(openstack_fixtures.Placement())
        self.fqdn = self.placement.hostname + '.example.org'
        rps = {}
        for name in (self.fqdn, self.placement.hostname + '-other'):
            rps[name] = uuidutils.generate_uuid()
            response = self.placement.adapter().post(
                '/resource_providers', json={'name': name,
                                             'uuid': rps[name]})
            self.assertEqual(200, response.status_code, response.text)
        # What the agent of host1 found at start.
        host_obj.Host.set_compute_rp(self.ctx, 'host1', rps[self.fqdn])
        self.arq = self._arqs({'resources:VGPU': '1'})[0]

    def test_bound_by_the_compute_node_name(self):
        self._bind([self.arq], host=self.fqdn)
        bound = self._get(self.arq)
        self.assertEqual((states.BOUND, self.fqdn),
                         (bound.state, bound.hostname))
        # The agent of the device's host made and removes the mdev.
        self.assertEqual([('create_mdev', 'host1')],
                         [c[:2] for c in self.agent.calls])
        self.api.arq_apply_patch(self.ctx, {self.arq.uuid: None})
        self.assertEqual([('create_mdev', 'host1'), ('remove_mdev', 'host1')],
                         [c[:2] for c in self.agent.calls])

    def test_recorded_compute_node_name_needs_no_placement(self):
        # The agent of host1 asks at start, as its service does.
        self.api.compute_node_rp(self.ctx, hostname='host1',
                                 rp_name=self.fqdn)
        # Placement stops answering: the recorded name is enough.
        with socket.socket() as closed:
            closed.bind(('127.0.0.1', 0))
            port = closed.getsockname()[1]
        openstack_fixtures.use_admin_token(
            self, 'placement', 'http://127.0.0.1:%d' % port, 'admin')
        instance = self._bind([self.arq], host=self.fqdn)
        self.assertEqual(states.BOUND, self._get(self.arq).state)
        self.assertEqual([(self.arq.uuid, 'completed')],
                         self._statuses(instance))

    def test_another_compute_node_name_is_refused(self):
        other = self.placement.hostname + '-other'
        error = self.assertRaises(exception.BindRefused, self._bind,
                                  [self.arq], host=other)
        self.assertIn('it is on host host1, not on %s' % other, str(error))
        self.assertEqual(states.INITIAL, self._get(self.arq).state)
        self.assertEqual([], self.agent.calls)


class TestRestart(BindTestCase):

    def _left_binding(self, age, claimed=False):
        arq = self._arqs({'resources:FPGA': '1'})[0]
        instance = uuidutils.generate_uuid()
        arq_db.update_state(self.ctx, arq.uuid, states.BIND_STARTED,
                            values={'hostname': 'host1',
                                    'device_rp_uuid':
                                    self.deployable.rp_uuid,
                                        'instance_uuid': instance})
        if claimed:
            arq_db.claim_handle(self.ctx, arq.uuid, self.deployable.id)
        then = timeutils.utcnow() - datetime.timedelta(seconds=age)
        db_api.update(self.ctx, 'accelerator_request', arq.uuid,
                      {'updated_at': then})
        return arq, instance

    def test_expired_binds_fail(self):
        self.conf.config(bind_timeout=60)
        old, old_instance = self._left_binding(120, claimed=True)
        fresh, fresh_instance = self._left_binding(1)
        expired = binding.expire_binds(self.ctx)
        self.assertEqual([old.uuid], [a.uuid for a in expired])
        self.assertEqual(states.BIND_FAILED, self._get(old).state)
        self.assertEqual(states.BIND_STARTED, self._get(fresh).state)
        self.assertEqual(set(), self._in_use())
        self.assertEqual([(old.uuid, 'failed')],
                         self._statuses(old_instance))
        self.assertEqual([], self.nova.for_instance(fresh_instance))

    def test_resume_finishes_or_fails(self):
        self.conf.config(bind_timeout=60)
        old, old_instance = self._left_binding(120)
        claimed, claimed_instance = self._left_binding(5, claimed=True)
        handle = db_api.get(self.ctx, 'accelerator_request',
                            claimed.uuid).attach_handle_id
        futures = binding.resume_binds(self.ctx,
                                       futurist.SynchronousExecutor())
        self.assertEqual(1, len(futures))
        self.assertEqual(states.BIND_FAILED, self._get(old).state)
        resumed = self._get(claimed)
        self.assertEqual(states.BOUND, resumed.state)
        self.assertEqual(handle, resumed.attach_handle_id)
        self.assertEqual(1, len(self._in_use()))
        self.assertEqual([(claimed.uuid, 'completed')],
                         self._statuses(claimed_instance))
        self.assertEqual([(old.uuid, 'failed')],
                         self._statuses(old_instance))
        self.assertEqual([], arq_db.list_bind_started(self.ctx))

    def test_left_binds_measured_from_their_start(self):
        self.conf.config(bind_timeout=60)
        self.conf.config(enabled=True, group='metrics')
        self._left_binding(120)
        self._left_binding(5, claimed=True)
        binding.resume_binds(self.ctx, futurist.SynchronousExecutor())
        sums = {labels['result']: (buckets[-1][1], total) for
                _histogram, labels, buckets, total
                in metric_obj.histograms(self.ctx)}
        self.assertEqual({states.BOUND, states.BIND_FAILED}, set(sums))
        count, seconds = sums[states.BOUND]
        self.assertEqual(1, count)
        self.assertAlmostEqual(5, seconds, delta=2)
        count, seconds = sums[states.BIND_FAILED]
        self.assertEqual(1, count)
        self.assertAlmostEqual(120, seconds, delta=2)


class RecordingExecutor:
    """Takes the binds a workflow submits and runs none of them."""

    def __init__(self):
        self.arqs = []

    def submit(self, fn, context, arqs, deadline, checked):
        self.arqs.extend(arq.uuid for arq in arqs)
        future = futurist.Future()
        future.set_result(None)
        return future
