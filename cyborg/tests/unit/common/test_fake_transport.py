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
"""RPC on fake:// with servers that wait for deliveries instead of polling."""

import time
import types

import fixtures
import oslo_messaging as messaging

from cyborg.common import rpc
from cyborg import context
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures


class _Echo:
    target = messaging.Target(version='1.0')

    def echo(self, context, value):
        return value


class TestPromptServers(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(cyborg_fixtures.RPC())
        target = messaging.Target(topic='echo-' + self.id(), server='s')
        server = rpc.get_server(target, [_Echo()],
                                messaging.NoOpSerializer())
        self.client = rpc.get_client(target, messaging.NoOpSerializer())
        self.ctx = context.get_admin_context()
        # The driver's servers slept between looks at their queues: here
        # a server that sleeps fails.
        self.useFixture(fixtures.MonkeyPatch(
            'oslo_messaging._drivers.impl_fake.time',
            types.SimpleNamespace(time=time.time, sleep=self._no_sleep)))
        self.slept = []
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)

    def _no_sleep(self, seconds):
        self.slept.append(seconds)
        raise AssertionError('the fake:// server slept')

    def test_calls_answered_without_sleeping(self):
        for value in range(3):
            self.assertEqual(value, self.client.prepare(timeout=10).call(
                self.ctx, 'echo', value=value))
        self.assertEqual([], self.slept)
