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
"""fake:// servers take a message when it is sent, not at their next look."""

from importlib import metadata
import threading

import oslo_messaging as messaging

from cyborg.common import local_rpc
from cyborg.common import rpc
from cyborg.tests import base


class _Endpoint:

    target = messaging.Target(version='1.0')

    def __init__(self):
        self.cast = threading.Event()

    def echo(self, context, value):
        return value

    def note(self, context):
        self.cast.set()


class LocalRPCTest(base.TestCase):

    def setUp(self):
        super().setUp()
        # A server that only looked at its queues now and then would not
        # answer within the tests' timeouts.
        self.patch(local_rpc, '_NAP', 3600)
        rpc.init(self.conf.conf, url='fake://')
        self.addCleanup(rpc.cleanup)
        self.endpoint = _Endpoint()
        target = messaging.Target(topic='local-rpc-test', server='host1')
        server = rpc.get_server(target, [self.endpoint],
                                messaging.NoOpSerializer())
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        self.client = rpc.get_client(
            messaging.Target(topic='local-rpc-test', version='1.0'),
            messaging.NoOpSerializer())

    def test_call_is_answered_at_once(self):
        for value in range(5):
            self.assertEqual(value, self.client.prepare(timeout=10).call(
                self.context, 'echo', value=value))

    def test_cast_is_taken_at_once(self):
        self.client.cast(self.context, 'note')
        self.assertTrue(self.endpoint.cast.wait(10))

    def test_fake_urls_load_the_waking_driver_by_its_entry_point(self):
        url = local_rpc.transport_url(self.conf.conf, 'fake://')
        self.assertEqual('cyborg-local:///', str(url))
        points = metadata.entry_points(group='oslo.messaging.drivers',
                                       name=local_rpc.SCHEME)
        self.assertEqual([local_rpc.Driver], [p.load() for p in points])

    def test_servers_stop(self):
        # The cleanups stop and wait for the server: a listener asleep
        # for _NAP would keep them waiting.
        self.assertEqual('x', self.client.prepare(timeout=10).call(
            self.context, 'echo', value='x'))


class LibraryInternalsTest(base.TestCase):
    """What local_rpc takes from oslo.messaging's private fake driver.

    oslo_messaging._drivers is not the library's API: this fails the day
    the fake driver renames what local_rpc builds on, before the
    all-in-one process would. An oslo.messaging whose fake driver wakes
    its listeners on delivery (or a public driver entry point for a
    transport of our own) lets local_rpc go.
    """

    def test_the_fake_driver_has_what_local_rpc_uses(self):
        for name in ('FakeDriver', 'FakeExchange', 'FakeExchangeManager',
                     'FakeListener', 'FakeIncomingMessage'):
            self.assertTrue(hasattr(local_rpc.impl_fake, name), name)
        for name in ('batch_poll_helper', 'PollStyleListenerAdapter'):
            self.assertTrue(hasattr(local_rpc.base, name), name)
        self.assertTrue(callable(
            local_rpc.impl_fake.FakeExchange.deliver_message))
        # The attributes _Listener.poll reads of the fake listener.
        manager = local_rpc._ExchangeManager('internals-test')
        listener = local_rpc.impl_fake.FakeListener(
            manager, [messaging.Target(topic='internals-test')])
        for name in ('_exchange_manager', '_targets', '_pool', '_stopped'):
            self.assertTrue(hasattr(listener, name), name)
        # What a poll of an exchange returns: (ctxt, message, reply_q,
        # requeue), nothing queued here.
        exchange = manager.get_exchange(None)
        self.assertEqual(4, len(exchange.poll(
            messaging.Target(topic='internals-test'), None)))
