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
"""Nova's ``accelerator-request-bound`` events, sent once a bind ends.

One call per instance, kept in the database while Nova does not take
them, retried with back-off until ``[conductor] nova_event_timeout``,
and sent by whichever conductor runs; the binds are those of
:class:`cyborg.tests.functional.conductor.test_binding.BindTestCase`.
"""

import datetime

import fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils

from cyborg.conductor import nova_events
from cyborg.db import accelerator_request as arq_db
from cyborg import exception
from cyborg import states
from cyborg.tests import db_utils
from cyborg.tests import functional
from cyborg.tests.functional.conductor import test_binding
from cyborg.tests.functional.db import test_concurrency
from cyborg.tests import openstack_fixtures
from cyborg_quickstart import server as demo_server


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


class _Dying:
    """A sender of this process that stops before it sends anything."""

    def wake(self, events=()):
        pass


class TestNovaEvents(test_binding.BindTestCase):

    def _front(self, failures):
        front = _FlakyNova(self.nova, failures)
        self.addCleanup(front.stop)
        openstack_fixtures.use_admin_token(self, 'nova', front.url, 'admin')
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

    def test_one_call_per_instance_when_one_bind_programs(self):
        # The patch waits for the bind that programs: one call for both.
        front = self._front(0)
        other, _ = self._tree('host1', '0000:af:00.0')
        plain = self._arqs({'resources:FPGA': '1'})[0]
        loading = self._arqs({'resources:FPGA': '1',
                              'accel:bitstream_id': test_binding.BITSTREAM})[0]
        arqs = [plain, loading]
        instance = uuidutils.generate_uuid()
        self.api.arq_apply_patch(self.ctx, {
            arq.uuid: {'hostname': 'host1', 'device_rp_uuid': rp,
                       'instance_uuid': instance}
            for arq, rp in ((plain, self.deployable.rp_uuid),
                            (loading, other.rp_uuid))})
        self.assertEqual(1, front.posts)
        self.assertEqual(sorted((a.uuid, 'completed') for a in arqs),
                         self._statuses(instance))

    def test_event_of_a_bind_in_the_call_outlives_its_conductor(self):
        # The conductor stops before it sends the event it held: another
        # one sends it once the hold is over, once.
        nova_events.unregister(self.conductor)
        dying = _Dying()
        nova_events.register(dying)
        self.addCleanup(nova_events.unregister, dying)
        arq = self._arqs({'resources:FPGA': '1'})[0]
        instance = self._bind([arq])
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual([(arq.uuid, 0)], self._pending())
        self._later(nova_events.HOLD - 5)
        self.conductor.wake()
        self.assertEqual([], self.nova.for_instance(instance))
        self._later(5)
        self.conductor.wake()
        self.assertEqual([(arq.uuid, 'completed')], self._statuses(instance))
        self.assertEqual([], self._pending())

    def test_event_of_a_bind_in_the_call_is_due_with_no_sender_here(self):
        # No sender runs in this process to be handed the event: it is
        # due at once, for any conductor's sender to take.
        nova_events.unregister(self.conductor)
        arq = self._arqs({'resources:FPGA': '1'})[0]
        instance = self._bind([arq])
        self.assertEqual(states.BOUND, self._get(arq).state)
        self.assertEqual([], self.nova.for_instance(instance))
        self.conductor.wake()
        self.assertEqual([(arq.uuid, 'completed')], self._statuses(instance))
        self.assertEqual([], self._pending())

    def test_a_failed_transaction_records_no_event(self):
        arq = self._arqs({'resources:FPGA': '1'})[0]
        self.assertRaises(exception.AcceleratorRequestInvalidState,
                          arq_db.update_state, self.ctx, arq.uuid,
                          states.BOUND)
        self.assertEqual([], self._pending())


class TestSenderThread(test_binding.BindTestCase):
    """A conductor's own event sender, on an SQLite file as it runs.

    Its thread and the conductor's use the database at once, which the
    in-memory database of the other tests lets one thread do at a time.
    """

    USES_DB = False

    def setUp(self):
        self.useFixture(test_concurrency.SQLiteFileFixture())
        super().setUp()
        nova_events.unregister(self.conductor)
        sender = nova_events.Sender()
        sender.start()
        self.addCleanup(sender.stop)

    def test_events_handed_over_are_not_taken(self):
        # The event of a bind done in the call reaches Nova without being
        # taken from the database first.
        arq = self._arqs({'resources:FPGA': '1'})[0]
        with db_utils.recorded_statements() as statements:
            instance = self._bind([arq])
            self.assertEqual([(arq.uuid, 'completed')], [
                (e['tag'], e['status'])
                for e in self.nova.wait_for(instance, 1, timeout=30)])
            functional.wait('the event removed',
                            lambda: not self._pending(), timeout=30)
        self.assertEqual([], [s for s in statements
                              if s.startswith('UPDATE nova_events')])
