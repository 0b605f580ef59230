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
"""No token travels on the bus: to listeners, conductors or agents.

RPC and notifications run on a RabbitMQ virtual host of the test's own.
A queue of the test, bound to the ``cyborg`` exchange beside the real
consumers, gets a copy of every notification, of every call to the
conductors and of every call to an agent, as they are on the wire; their
raw bodies must hold no token of the user nor of the administrator who
made the requests.
"""

import json

import kombu
from oslo_utils import uuidutils

from cyborg.common import rpc
from cyborg.conductor import rpcapi
from cyborg import context
from cyborg.db import api as db_api
from cyborg import exception
from cyborg.objects import device_profile
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional

#: What the copies are taken of: every notification, every RPC call.
WATCHED = ('notifications.#', 'cyborg-agent.#', 'cyborg-agent',
           'cyborg-conductor.#', 'cyborg-conductor')


def _message(body):
    """The message in oslo.messaging's envelope."""
    return json.loads(json.loads(body)['oslo.message'])


class Capture:
    """A queue of the test's own bound to the ``cyborg`` exchange."""

    def __init__(self, url, routing_keys):
        # kombu names oslo.messaging's rabbit:// amqp://.
        self.connection = kombu.Connection(
            'amqp://' + url.split('://', 1)[1])
        # As oslo.messaging declares it (not durable, not auto-deleted).
        exchange = kombu.Exchange('cyborg', type='topic', durable=False)
        self.queue = kombu.Queue(
            'capture-' + uuidutils.generate_uuid(), exclusive=True,
            bindings=[kombu.binding(exchange, routing_key=key)
                      for key in routing_keys])(self.connection.channel())
        self.queue.declare()

    def messages(self):
        """(routing key, raw body) of each message copied so far."""
        taken = []
        while True:
            message = self.queue.get(no_ack=True)
            if message is None:
                return taken
            body = message.body
            if isinstance(body, bytes):
                body = body.decode()
            taken.append((message.delivery_info['routing_key'], body))

    def close(self):
        self.connection.release()


class TestNoTokenOnTheBus(base.TestCase):

    USES_DB = True

    def setUp(self):
        super().setUp()
        vhost = 'cyborg-bus-%s' % uuidutils.generate_uuid()[:12]
        url = functional.vhost(vhost)
        if url is None:
            self.skipTest('needs rabbitmqctl to give the test a virtual '
                          'host')
        self.addCleanup(functional.rabbitmqctl, 'delete_vhost', vhost)
        self.capture = Capture(url, WATCHED)
        self.addCleanup(self.capture.close)
        self.useFixture(cyborg_fixtures.RPC(url))
        self.conf.config(driver=['messagingv2'], transport_url=url,
                         group='oslo_messaging_notifications')
        rpc.init_notifier(self.conf.conf, url=url)
        self.addCleanup(rpc.cleanup_notifier)
        self.useFixture(cyborg_fixtures.Conductor())
        self.api = rpcapi.ConductorAPI()
        # An agent that does not answer fails the call this soon.
        self.conf.config(rpc_response_timeout=2, bind_timeout=10)
        self.tokens = {name: '%s-token-%s' % (name, uuidutils.generate_uuid())
                       for name in ('user', 'admin', 'service')}
        self.user = context.RequestContext(
            user_id='u1', project_id='p1', roles=['member', 'reader'],
            auth_token=self.tokens['user'],
            service_token=self.tokens['service'], service_roles=['service'])
        self.admin = context.RequestContext(
            user_id='a1', project_id='admins', is_admin=True,
            roles=['admin', 'member', 'reader'],
            auth_token=self.tokens['admin'])
        ctx = context.get_admin_context()
        _, self.deployable, _ = db_utils.create_device_tree(
            ctx, hostname='host1', resource_class='FPGA')
        self.rp_uuid = uuidutils.generate_uuid()
        db_api.update(ctx, 'deployable', self.deployable.uuid,
                      {'rp_uuid': self.rp_uuid})

    def assert_no_credentials(self, messages):
        for routing_key, body in messages:
            self.assertNotIn('auth_token', body, routing_key)
            self.assertNotIn('service_token', body, routing_key)
            for name, token in self.tokens.items():
                self.assertNotIn(token, body, (routing_key, name))

    def test_notifications_of_a_bind(self):
        self.api.device_profile_create(
            self.admin, device_profile.DeviceProfile(
                self.admin, name='dp', groups=[{'resources:FPGA': '1'}]))
        [arq] = self.api.arq_create(self.user, 'dp', 'p1')
        self.api.arq_apply_patch(self.user, {arq.uuid: {
            'hostname': 'host1', 'device_rp_uuid': self.rp_uuid,
            'instance_uuid': uuidutils.generate_uuid()}})
        self.api.arq_apply_patch(self.user, {arq.uuid: None})
        messages = functional.wait('the notifications', lambda: (
            lambda taken: taken if len(self._notifications(taken)) >= 3
            else None)(self._taken()))
        self.assertEqual(
            ['accelerator_request.bind.end',
             'accelerator_request.unbind.end', 'device_profile.create'],
            sorted(_message(body)['event_type']
                   for _key, body in self._notifications(messages)))
        # The API's four calls to the conductor went on the wire too.
        self.assertEqual(
            ['arq_apply_patch', 'arq_apply_patch', 'arq_create',
             'device_profile_create'],
            sorted(_message(body)['method'] for key, body in messages
                   if key == rpcapi.TOPIC))
        self.assert_no_credentials(messages)

    def _taken(self):
        self._copies = getattr(self, '_copies', []) + self.capture.messages()
        return list(self._copies)

    @staticmethod
    def _notifications(messages):
        return [(key, body) for key, body in messages
                if key.startswith('notifications.')]

    def test_the_agent_call_of_an_admin_program(self):
        # No agent listens: the call is on the wire all the same, and
        # fails once the agent is overdue.
        self.assertRaises(exception.ServiceUnavailable,
                          self.api.deployable_program, self.admin,
                          self.deployable.uuid, uuidutils.generate_uuid())
        messages = self.capture.messages()
        self.assertEqual([(rpcapi.TOPIC, 'deployable_program'),
                          ('cyborg-agent.host1', 'program')],
                         [(key, _message(body)['method'])
                          for key, body in messages])
        self.assert_no_credentials(messages)
