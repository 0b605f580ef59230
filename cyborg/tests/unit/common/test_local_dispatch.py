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
"""RPC inside one process on fake://: what arrives is what RabbitMQ carries.

Clients and servers are made as the services make them
(:func:`cyborg.common.rpc.get_client` and ``get_server``); the behaviour
each test checks is oslo.messaging's across RabbitMQ.
"""

import threading

import oslo_messaging as messaging

from cyborg.common import local_dispatch
from cyborg.common import rpc
from cyborg import context
from cyborg import exception
from cyborg.objects import base as objects_base
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures

TOPIC = 'test-topic'


class PrivateError(Exception):
    """Of a module that is not among the allowed remote ones."""


class Endpoint:
    target = messaging.Target(version='1.2')

    def __init__(self, name='one'):
        self.name = name
        self.heard = []
        self.release = threading.Event()
        self.done = threading.Event()

    def echo(self, ctxt, value):
        self.heard.append((ctxt, value))
        return value

    def whoami(self, ctxt):
        return self.name

    def wait(self, ctxt):
        self.release.wait(30)
        self.done.set()
        return 'released'

    def raise_it(self, ctxt, kind):
        raise {'not_found': exception.DeviceProfileNotFound(name='dp'),
               'value': ValueError('bad value'),
               'private': PrivateError('hidden')}[kind]

    @rpc.expected_exceptions(exception.DeviceProfileNotFound)
    def expected(self, ctxt):
        raise exception.DeviceProfileNotFound(name='dp')

    def _secret(self, ctxt):
        return 'secret'


class LocalDispatchTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(cyborg_fixtures.RPC())
        self.endpoint = Endpoint()
        self.server = self._serve(self.endpoint, 'host-a')
        self.client = self._client().prepare(server='host-a')
        self.ctxt = context.RequestContext(
            user_id='u', project_id='p', auth_token='secret-token')

    def _serve(self, endpoint, host):
        server = rpc.get_server(
            messaging.Target(topic=TOPIC, server=host), [endpoint],
            objects_base.CyborgObjectSerializer())
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        return server

    def _client(self, **kwargs):
        return rpc.get_client(
            messaging.Target(topic=TOPIC, version='1.0'),
            objects_base.CyborgObjectSerializer(), **kwargs)

    def test_fake_transport_gets_local_clients_and_servers(self):
        self.assertIsInstance(self.client, local_dispatch.Client)
        self.assertIsInstance(self.server, local_dispatch.Server)

    def test_call_carries_serialized_copies(self):
        value = {'list': (1, 2), 'nested': {'a': None}}
        answer = self.client.call(self.ctxt, 'echo', value=value)
        ctxt, heard = self.endpoint.heard[0]
        # JSON, as on the wire: a tuple arrives as a list; and copies.
        self.assertEqual({'list': [1, 2], 'nested': {'a': None}}, heard)
        self.assertEqual(heard, answer)
        self.assertIsNot(heard, answer)
        # The context, without the caller's credentials.
        self.assertIsNot(self.ctxt, ctxt)
        self.assertIsInstance(ctxt, context.RequestContext)
        self.assertEqual(('u', 'p'), (ctxt.user_id, ctxt.project_id))
        self.assertIsNone(ctxt.auth_token)

    def test_call_carries_versioned_objects(self):
        report = objects_base.CyborgObject.obj_class_from_name(
            'DeviceProfile', '1.0')(name='dp', groups=[{'a': 'b'}])
        answer = self.client.call(self.ctxt, 'echo', value=report)
        heard = self.endpoint.heard[0][1]
        self.assertIsNot(report, heard)
        self.assertIsNot(heard, answer)
        self.assertEqual(('dp', [{'a': 'b'}]), (answer.name, answer.groups))

    def test_call_runs_in_a_thread_of_the_server(self):
        threads = []
        self.endpoint.echo = lambda ctxt, value: threads.append(
            threading.current_thread())
        self.client.call(self.ctxt, 'echo', value=1)
        self.assertIsNot(threading.current_thread(), threads[0])

    def test_cast_does_not_wait(self):
        self.assertIsNone(self.client.cast(self.ctxt, 'wait'))
        self.assertFalse(self.endpoint.done.is_set())
        self.endpoint.release.set()
        self.assertTrue(self.endpoint.done.wait(30))

    def test_fanout_cast_reaches_every_server(self):
        other = Endpoint('two')
        self._serve(other, 'host-b')
        self._client().prepare(fanout=True).cast(self.ctxt, 'wait')
        self.endpoint.release.set()
        other.release.set()
        self.assertTrue(self.endpoint.done.wait(30))
        self.assertTrue(other.done.wait(30))

    def test_topic_call_goes_to_each_server_in_turn(self):
        self._serve(Endpoint('two'), 'host-b')
        client = self._client()
        self.assertEqual({'one', 'two'}, {
            client.call(self.ctxt, 'whoami') for _ in range(4)})

    def test_call_of_a_version_the_server_lacks(self):
        self.assertEqual(1, self.client.prepare(version='1.2').call(
            self.ctxt, 'echo', value=1))
        for version in ('1.3', '2.0'):
            error = self.assertRaises(
                messaging.RemoteError, self.client.prepare(
                    version=version).call, self.ctxt, 'echo', value=1)
            self.assertEqual('UnsupportedVersion', error.exc_type)

    def test_version_cap(self):
        client = self._client(version_cap='1.1')
        self.assertTrue(client.can_send_version('1.1'))
        self.assertFalse(client.can_send_version('1.2'))
        self.assertRaises(messaging.RPCVersionCapError,
                          client.prepare(version='1.2').call, self.ctxt,
                          'echo', value=1)
        self.assertEqual([], self.endpoint.heard)
        self.assertTrue(self._client().can_send_version('9.9'))

    def test_no_such_method(self):
        for method in ('missing', '_secret'):
            error = self.assertRaises(messaging.RemoteError,
                                      self.client.call, self.ctxt, method)
            # As across RabbitMQ: oslo.messaging's own errors are not
            # among the allowed remote exceptions.
            self.assertEqual('NoSuchMethod', error.exc_type)

    def test_exceptions_arrive_as_a_remote_caller_gets_them(self):
        # A Cyborg error (an allowed module), and a builtin: themselves.
        self.assertRaises(exception.DeviceProfileNotFound, self.client.call,
                          self.ctxt, 'raise_it', kind='not_found')
        self.assertRaises(exception.DeviceProfileNotFound, self.client.call,
                          self.ctxt, 'expected')
        self.assertRaises(ValueError, self.client.call, self.ctxt,
                          'raise_it', kind='value')
        # Any other: a RemoteError, with the server's traceback.
        error = self.assertRaises(messaging.RemoteError, self.client.call,
                                  self.ctxt, 'raise_it', kind='private')
        self.assertEqual(('PrivateError', 'hidden'),
                         (error.exc_type, error.value))
        self.assertIn('raise_it', ''.join(error.traceback))
        self.assertNotIn('future', ''.join(error.traceback))

    def test_unserved_server_of_a_mandatory_client(self):
        client = self._client(mandatory=True)
        for prepared in (client.prepare(server='host-b'),
                         client.prepare(topic='other')):
            self.assertRaises(messaging.MessageUndeliverable, prepared.call,
                              self.ctxt, 'echo', value=1)
            self.assertRaises(messaging.MessageUndeliverable, prepared.cast,
                              self.ctxt, 'echo', value=1)
        self.assertEqual(1, client.prepare(server='host-a').call(
            self.ctxt, 'echo', value=1))

    def test_stopped_server_is_unserved(self):
        self.server.stop()
        self.assertRaises(
            messaging.MessageUndeliverable, self._client(
                mandatory=True).prepare(server='host-a').call,
            self.ctxt, 'echo', value=1)

    def test_unserved_server_times_out(self):
        self.assertRaises(
            messaging.MessagingTimeout, self.client.prepare(
                server='host-b', timeout=0.05).call, self.ctxt, 'echo',
            value=1)
        # A cast nobody takes is dropped.
        self.client.prepare(server='host-b').cast(self.ctxt, 'echo', value=1)

    def test_call_waits_for_its_server_to_start(self):
        answers = []
        caller = threading.Thread(target=lambda: answers.append(
            self.client.prepare(server='host-b', timeout=30).call(
                self.ctxt, 'whoami')))
        caller.start()
        self._serve(Endpoint('two'), 'host-b')
        caller.join(30)
        self.assertEqual(['two'], answers)

    def test_slow_answer_times_out(self):
        self.addCleanup(self.endpoint.release.set)
        self.assertRaises(messaging.MessagingTimeout, self.client.prepare(
            timeout=0.05).call, self.ctxt, 'wait')

    def test_call_cannot_fan_out(self):
        self.assertRaises(messaging.InvalidTarget,
                          self.client.prepare(fanout=True).call, self.ctxt,
                          'echo', value=1)

    def test_rpc_call_helper_hears_no_answer_as_unavailable(self):
        self.assertRaises(
            exception.ServiceUnavailable, rpc.call,
            self.client.prepare(server='host-b', timeout=0.05), self.ctxt,
            'echo', 'nobody', value=1)


class CompatibleTest(base.TestCase):

    def test_oslo_messaging_rule(self):
        for served, asked, expected in (
                ('1.4', '1.0', True), ('1.4', '1.4', True),
                ('1.4', '1.5', False), ('1.4', '2.0', False),
                ('2.0', '1.9', False), ('1.4.1', '1.4', True),
                ('1.4', '1.4.1', False), (None, '3.0', True),
                ('1.0', None, False)):
            self.assertEqual(expected, local_dispatch.compatible(
                served, asked), (served, asked))
