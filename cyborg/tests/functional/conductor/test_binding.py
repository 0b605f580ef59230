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
event included, when the RPC call returns.
"""

import datetime
import logging
import socket
import time

import fixtures
import futurist
from oslo_db.sqlalchemy import test_fixtures
import oslo_messaging as messaging
from oslo_utils import timeutils
from oslo_utils import uuidutils
import testtools

from cyborg.conductor import accelerator_request
from cyborg.conductor import binding
from cyborg.conductor import nova_events
import cyborg.conf
from cyborg import context
from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg.db import models
from cyborg.demo import server as demo_server
from cyborg import exception
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import host as host_obj
from cyborg.objects import metric as metric_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.db import test_concurrency

CONF = cyborg.conf.CONF

BITSTREAM = 'd5ca2f11-3108-4426-a11c-a959987565df'
FUNCTION = 'a53b9a4e-5b1e-4c31-9f6b-4a3b5a4d6c10'


class BindTestCase(base.ConductorTestCase):
    TRAITS = ('CUSTOM_FPGA_INTEL',)

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.agent = self.useFixture(cyborg_fixtures.StandInAgent()).endpoint
        self.nova = self.useFixture(cyborg_fixtures.NovaEvents()).receiver
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


class TestProgramming(BindTestCase):

    def test_programmed_once_per_bitstream(self):
        first, second = self._arqs({'resources:FPGA': '1',
                                    'accel:bitstream_id': BITSTREAM},
                                   count=2)
        self._bind([first, second])
        self.assertEqual({states.BOUND},
                         {self._get(a).state for a in (first, second)})
        calls = self.agent.called('program')
        self.assertEqual(1, len(calls))
        # A bind never lets the agent flash a shell.
        self.assertEqual({'deployable_name': self.deployable.name,
                          'bitstream_id': BITSTREAM, 'function_id': None,
                          'function_name': None, 'allow_shell': False},
                         calls[0])
        self.assertEqual(BITSTREAM, db_api.get(
            self.ctx, 'deployable', self.deployable.uuid).bitstream_id)

    def test_function_already_there(self):
        deployable, _ = self._tree(
            'host1', '0000:af:00.0',
            traits=('CUSTOM_FPGA_FUNCTION_ID_A53B9A4E5B1E4C319F6B4A3B5A4D6C10',
                    'CUSTOM_FPGA_INTEL'))
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:function_id': FUNCTION})[0]
        self._bind([arq], rp_uuid=deployable.rp_uuid)
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual([], self.agent.called('program'))

    def test_function_programmed(self):
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:function_id': FUNCTION})[0]
        self._bind([arq])
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual([FUNCTION], [c['function_id'] for c in
                                      self.agent.called('program')])
        self.assertEqual(self.agent.loaded, db_api.get(
            self.ctx, 'deployable', self.deployable.uuid).bitstream_id)

    def test_programmed_once_per_function_name(self):
        # Glance says which function the loaded bitstream carries.
        missing = cyborg_fixtures.Glance.missing()
        if missing:
            self.skipTest(missing)
        glance = self.useFixture(cyborg_fixtures.Glance(self.conf))
        self.agent.loaded = glance.add_image(function_name='aes')['id']
        arqs = self._arqs({'resources:FPGA': '1',
                           'accel:function_name': 'aes'}, count=2)
        self._bind(arqs[:1])
        self._bind(arqs[1:])
        self.assertEqual([states.BOUND] * 2,
                         [self._get(arq).state for arq in arqs])
        self.assertEqual(['aes'], [c['function_name'] for c in
                                   self.agent.called('program')])

    def test_programming_fails(self):
        self.agent.failures['program'] = exception.ProgrammingFailed(
            deployable='region', reason='fpgaconf exited with 1')
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:bitstream_id': BITSTREAM})[0]
        instance = self._bind([arq])
        self.assertEqual(states.BIND_FAILED, self._get(arq).state)
        self.assertEqual(set(), self._in_use())
        self.assertEqual([(arq.uuid, 'failed')], self._statuses(instance))
        self.assertIn('fpgaconf exited with 1', self.log.output)

    def test_no_reprogramming_under_a_running_instance(self):
        running = self._arqs({'resources:FPGA': '1'})[0]
        self._bind([running])
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:bitstream_id': BITSTREAM})[0]
        self._bind([arq])
        self.assertEqual(states.BIND_FAILED, self._get(arq).state)
        self.assertEqual([], self.agent.called('program'))
        self.assertEqual(states.BOUND, self._get(running).state)

    def test_agent_not_answering(self):
        self.agent.failures['program'] = messaging.MessagingTimeout('gone')
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:bitstream_id': BITSTREAM})[0]
        self._bind([arq])
        self.assertEqual(states.BIND_FAILED, self._get(arq).state)
        self.assertEqual(set(), self._in_use())

    def test_region_holds_no_known_bitstream_while_programming(self):
        # The region held another bitstream; the agent dies programming.
        db_api.update(self.ctx, 'deployable', self.deployable.uuid,
                      {'bitstream_id': uuidutils.generate_uuid()})
        held = []
        self.agent.hooks['program'] = lambda **kw: held.append(db_api.get(
            self.ctx, 'deployable', self.deployable.uuid).bitstream_id)
        self.agent.failures['program'] = messaging.MessagingTimeout('gone')
        arq = self._arqs({'resources:FPGA': '1',
                          'accel:bitstream_id': BITSTREAM})[0]
        self._bind([arq])
        self.assertEqual([None], held)
        self.assertEqual(states.BIND_FAILED, self._get(arq).state)
        # No later bind takes the region for what it held before.
        self.assertIsNone(db_api.get(self.ctx, 'deployable',
                                     self.deployable.uuid).bitstream_id)


class TestComputeNodeName(BindTestCase):
    """Nova names the host by its compute node, here an FQDN."""

    TRAITS = ('CUSTOM_NVIDIA_T4',)

    def setUp(self):
        super().setUp()
        self.deployable, self.handles = self._tree(
            'host1', '0000:3b:00.0', handles=1, resource_class='VGPU',
            attach_type='MDEV', asked_type='nvidia-222')
        self.placement = self.useFixture(cyborg_fixtures.Placement())
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
        cyborg_fixtures.use_admin_token(
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


class TestMdev(BindTestCase):
    TRAITS = ('CUSTOM_NVIDIA_T4',)

    def setUp(self):
        super().setUp()
        self.deployable, self.handles = self._tree(
            'host1', '0000:3b:00.0', handles=2, resource_class='VGPU',
            attach_type='MDEV', asked_type='nvidia-222')
        self.arq = self._arqs({'resources:VGPU': '1'})[0]

    def test_created_on_bind_removed_on_unbind(self):
        self._bind([self.arq])
        bound = self._get(self.arq)
        self.assertEqual(states.BOUND, bound.state)
        self.assertEqual('MDEV', bound.attach_handle_type)
        self.assertEqual('nvidia-222',
                         bound.attach_handle_info['asked_type'])
        self.assertEqual([{'mdev_uuid': bound.attach_handle_uuid,
                           'mdev_type': 'nvidia-222',
                           'parent_address': '0000:3b:00.0'}],
                         self.agent.called('create_mdev'))
        self.api.arq_apply_patch(self.ctx, {self.arq.uuid: None})
        self.assertEqual([{'mdev_uuid': bound.attach_handle_uuid}],
                         self.agent.called('remove_mdev'))
        self.assertEqual(set(), self._in_use())

    def test_unbind_retried_after_agent_failure(self):
        self._bind([self.arq])
        handle = self._get(self.arq).attach_handle_uuid
        self.agent.failures['remove_mdev'] = [
            exception.MdevFailed(action='remove', uuid=handle,
                                 reason='busy')]
        self.assertRaises(exception.UnbindFailed, self.api.arq_apply_patch,
                          self.ctx, {self.arq.uuid: None})
        self.assertEqual(states.UNBIND_FAILED, self._get(self.arq).state)
        self.assertEqual({handle}, self._in_use())
        self.api.arq_apply_patch(self.ctx, {self.arq.uuid: None})
        self.assertEqual(states.UNBOUND, self._get(self.arq).state)
        self.assertEqual(set(), self._in_use())

    def test_delete_removes_the_mdev_even_with_the_agent_down(self):
        instance = self._bind([self.arq])
        handle = self._get(self.arq).attach_handle_uuid
        self.agent.failures['remove_mdev'] = messaging.MessagingTimeout('x')
        self.api.arq_delete(self.ctx, instance_uuid=instance)
        self.assertEqual([{'mdev_uuid': handle}],
                         self.agent.called('remove_mdev'))
        self.assertEqual(set(), self._in_use())
        # Nova repeats it.
        self.api.arq_delete(self.ctx, instance_uuid=instance)

    def test_create_fails(self):
        self.agent.failures['create_mdev'] = exception.MdevTypeNotEnabled(
            mdev_type='nvidia-222')
        instance = self._bind([self.arq])
        self.assertEqual(states.BIND_FAILED, self._get(self.arq).state)
        self.assertEqual(set(), self._in_use())
        # What may have been made is cleaned up.
        self.assertEqual(1, len(self.agent.called('remove_mdev')))
        self.assertEqual([(self.arq.uuid, 'failed')],
                         self._statuses(instance))


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


class _FlakyNova(demo_server.LoopbackServer):
    """Answers 503 ``failures`` times, then hands calls to the receiver."""

    def __init__(self, receiver, failures):
        super().__init__(self, threads=2, name='flaky-nova')
        self.receiver = receiver
        self.failures = failures
        self.posts = 0
        self.start()

    def __call__(self, environ, start_response):
        self.posts += 1
        if self.posts <= self.failures:
            start_response('503 Service Unavailable',
                           [('Content-Length', '0')])
            return [b'']
        return self.receiver(environ, start_response)


class TestNovaEvents(BindTestCase):

    def _front(self, failures):
        front = _FlakyNova(self.nova, failures)
        self.addCleanup(front.stop)
        cyborg_fixtures.use_admin_token(self, 'nova', front.url, 'admin')
        return front

    def test_one_call_per_instance(self):
        front = self._front(0)
        arqs = self._arqs({'resources:FPGA': '2'}, count=2)
        instance = self._bind(arqs)
        self.assertEqual(1, front.posts)
        self.assertEqual(2, len(self.nova.for_instance(instance)))

    def test_instance_not_on_a_host_is_no_error(self):
        instance = uuidutils.generate_uuid()
        self.nova.not_on_host(instance)
        arq = self._arqs({'resources:FPGA': '1'})[0]
        self._bind([arq], instance=instance)
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual([], self.nova.for_instance(instance))
        self.assertNotIn('ERROR', self.log.output)
        self.assertIn('code 422', self.log.output)

    def test_instance_gone_ends_its_event(self):
        # Nova answers 404 for a deleted instance: nothing waits for the
        # event, which is not sent again.
        front = self._front(0)
        instance = uuidutils.generate_uuid()
        self.nova.gone(instance)
        arq = self._arqs({'resources:FPGA': '1'})[0]
        self._bind([arq], instance=instance)
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual((1, []), (front.posts, self._pending()))
        self.assertEqual([], self.nova.for_instance(instance))
        self.assertIn('code 404', self.log.output)

    def _pending(self):
        """(ARQ uuid, attempts) of the events not delivered yet."""
        with db_api.main_context_manager.reader.using(self.ctx):
            return sorted((e.arq_uuid, e.attempts) for e in
                          self.ctx.session.query(models.NovaEvent))

    def _later(self, seconds):
        """Let ``seconds`` pass for the database's times, then wake."""
        if getattr(self, '_now', None) is None:
            self._now = timeutils.utcnow()
            self.useFixture(fixtures.MockPatch(
                'oslo_utils.timeutils.utcnow',
                side_effect=lambda *args, **kwargs: self._now))
        self._now += datetime.timedelta(seconds=seconds)
        nova_events.due()

    def test_nova_down_is_retried_with_back_off(self):
        front = self._front(2)
        arq = self._arqs({'resources:FPGA': '1'})[0]
        instance = self._bind([arq])
        # The bind is done; Nova did not take the event, which is kept.
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual(1, front.posts)
        self.assertEqual([(arq.uuid, 1)], self._pending())
        self._later(0.5)  # not due before the first back-off, 1 s
        self.assertEqual(1, front.posts)
        self._later(0.5)
        self.assertEqual((2, [(arq.uuid, 2)]), (front.posts, self._pending()))
        self._later(2)
        self.assertEqual(3, front.posts)
        self.assertEqual([(arq.uuid, 'completed')], self._statuses(instance))
        self.assertEqual([], self._pending())

    def test_nova_unreachable_until_the_timeout(self):
        self.conf.config(nova_event_timeout=60, group='conductor')
        front = self._front(0)
        front.stop()
        arq = self._arqs({'resources:FPGA': '1'})[0]
        self._bind([arq])
        for _ in range(5):
            self._later(30)
        self.assertEqual([], self._pending())
        self.assertIn('Gave up telling Nova about accelerator requests '
                      "['%s']" % arq.uuid, self.log.output)

    def test_events_outlive_the_conductor(self):
        # Recorded while Nova is down, delivered by a sender started later,
        # as a restarted or another conductor would.
        front = self._front(1)
        arq = self._arqs({'resources:FPGA': '1'})[0]
        instance = self._bind([arq])
        self.assertEqual([(arq.uuid, 1)], self._pending())
        sender = nova_events.Sender()
        sender.start()
        self.addCleanup(sender.stop)
        self.assertEqual([(arq.uuid, 'completed')], [
            (e['tag'], e['status'])
            for e in self.nova.wait_for(instance, 1, timeout=30)])
        self.assertEqual(2, front.posts)

    def test_a_failed_transaction_records_no_event(self):
        arq = self._arqs({'resources:FPGA': '1'})[0]
        self.assertRaises(exception.AcceleratorRequestInvalidState,
                          arq_db.update_state, self.ctx, arq.uuid,
                          states.BOUND)
        self.assertEqual([], self._pending())


class _BindRace:
    """Whole binds racing on a shared database share no handle."""

    THREADS = 8

    def test_handles_never_shared(self):
        ctx = context.get_admin_context()
        _, deployable, handles = db_utils.create_device_tree(
            ctx, handles=3, resource_class='FPGA',
            traits=['CUSTOM_FPGA_INTEL'])
        rp_uuid = uuidutils.generate_uuid()
        db_api.update(ctx, 'deployable', deployable.uuid,
                      {'rp_uuid': rp_uuid})
        profile = db_utils.create_profile(ctx)
        arqs = []
        for row in db_utils.create_arqs(ctx, profile, count=self.THREADS):
            started = arq_db.update_state(
                ctx, row.uuid, states.BIND_STARTED, values={
                    'hostname': 'host1', 'device_rp_uuid': rp_uuid,
                    'instance_uuid': uuidutils.generate_uuid()})
            arqs.append(arq_obj.AcceleratorRequest._from_db_object(
                ctx, started))
        deadline = time.monotonic() + 60
        # A PCI handle and no bitstream: the agent is not needed.
        results = db_utils.race(
            lambda ctx, arq: binding.bind(ctx, arq, None, deadline),
            [(arq,) for arq in arqs])
        bound = [r for r in results if r.state == states.BOUND]
        self.assertEqual(len(handles), len(bound))
        self.assertEqual({h.id for h in handles},
                         {r.attach_handle_id for r in bound})
        self.assertEqual(self.THREADS - len(handles), len(
            [r for r in results if r.state == states.BIND_FAILED]))
        self.assertEqual(len(handles), len(db_api.get_all(
            ctx, 'attach_handle', filters={'in_use': True})))

    def test_patch_all_or_nothing(self):
        """Of two patches racing for an ARQ, one wins; the other moves none.

        A second patch binds one of the first patch's ARQs while the first
        one starts moving its ARQs to BindStarted. Whichever is refused
        leaves all its ARQs as they were, so every BindStarted ARQ is one
        of the winner's, with its bind submitted.
        """
        ctx = context.get_admin_context()
        _, deployable, _ = db_utils.create_device_tree(
            ctx, resource_class='FPGA', traits=['CUSTOM_FPGA_INTEL'])
        rp_uuid = uuidutils.generate_uuid()
        db_api.update(ctx, 'deployable', deployable.uuid,
                      {'rp_uuid': rp_uuid})
        arqs = db_utils.create_arqs(ctx, db_utils.create_profile(ctx),
                                    count=3)
        submitted = _RecordingExecutor()

        def patch(arqs):
            instance = uuidutils.generate_uuid()
            return {a.uuid: {'hostname': 'host1',
                             'device_rp_uuid': rp_uuid,
                             'instance_uuid': instance} for a in arqs}

        def start(patch):
            try:
                accelerator_request.start_binds(ctx, patch, submitted)
            except exception.AcceleratorRequestInvalidState:
                return False
            return True

        first, second = patch(arqs), patch(arqs[1:2])
        with db_utils.meanwhile('UPDATE accelerator_requests',
                                start, second) as other:
            won = {'first': start(first)}
        won['second'] = other.result()
        self.assertEqual(1, sum(won.values()), won)
        winner = first if won['first'] else second
        rows = [db_api.get(ctx, 'accelerator_request', a.uuid)
                for a in arqs]
        self.assertEqual(sorted(winner), sorted(
            r.uuid for r in rows if r.state == states.BIND_STARTED))
        self.assertEqual(sorted(winner), sorted(submitted.arqs))
        self.assertEqual({v['instance_uuid'] for v in winner.values()},
                         {r.instance_uuid for r in rows if r.instance_uuid})


class _RecordingExecutor:
    """Takes the binds a workflow submits and runs none of them."""

    def __init__(self):
        self.arqs = []

    def submit(self, fn, context, arqs, deadline, checked):
        self.arqs.extend(arq.uuid for arq in arqs)
        future = futurist.Future()
        future.set_result(None)
        return future


class TestBindRaceSQLiteFile(_BindRace,
                             test_concurrency.SQLiteFileTestCase):
    pass


class TestBindRaceMySQL(_BindRace, test_fixtures.OpportunisticDBTestMixin,
                        testtools.TestCase):
    FIXTURE = test_concurrency.MySQLFixture


class TestBindRacePostgreSQL(_BindRace,
                             test_fixtures.OpportunisticDBTestMixin,
                             testtools.TestCase):
    FIXTURE = test_concurrency.PostgreSQLFixture
