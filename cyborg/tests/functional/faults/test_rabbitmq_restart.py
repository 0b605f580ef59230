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
"""The RabbitMQ broker restarted while agents report and Nova binds.

The broker is a node of the test's own (its own name, ports, database and
logs under the test's directory), stopped and started again for real; the
machine's shared broker is left alone.
"""

import os
import shutil
import signal
import subprocess
import threading
import time
import uuid

import fixtures
import kombu
from oslo_log import log
import pytest
import testtools

from cyborg.tests import functional
from cyborg.tests.functional import faults
from cyborg.tests.functional import services

LOG = log.getLogger(__name__)

#: The server script itself: the packaged wrapper would switch to the
#: rabbitmq user, who cannot write the test's directory.
SERVER = next((path for path in ('/usr/lib/rabbitmq/bin/rabbitmq-server',
                                 shutil.which('rabbitmq-server'))
               if path and os.path.exists(path)), None)


class RabbitNode(fixtures.Fixture):
    """A RabbitMQ node of its own under ``directory``, on free ports.

    :meth:`stop` stops it as an operator does (``SIGTERM``); :meth:`start`
    starts it again on the same port and database. ``url`` reaches it.
    """

    def __init__(self, directory):
        super().__init__()
        self.directory = directory
        self.proc = None

    def _setUp(self):
        port, dist_port = functional.free_ports(2)
        self.url = 'rabbit://guest:guest@127.0.0.1:%d/' % port
        home = os.path.join(self.directory, 'home')
        os.makedirs(home)
        config = os.path.join(self.directory, 'rabbitmq.conf')
        with open(config, 'w') as f:
            f.write('listeners.tcp.default = 127.0.0.1:%d\n' % port)
        plugins = os.path.join(self.directory, 'enabled_plugins')
        with open(plugins, 'w') as f:
            f.write('[].\n')
        env_file = os.path.join(self.directory, 'rabbitmq-env.conf')
        open(env_file, 'w').close()
        self.env = dict(
            os.environ, HOME=home,
            RABBITMQ_NODENAME='cyborg-test-%s@localhost' % (
                uuid.uuid4().hex[:8]),
            RABBITMQ_NODE_PORT=str(port), RABBITMQ_DIST_PORT=str(dist_port),
            RABBITMQ_MNESIA_BASE=os.path.join(self.directory, 'mnesia'),
            RABBITMQ_LOG_BASE=os.path.join(self.directory, 'log'),
            RABBITMQ_CONFIG_FILE=config,
            RABBITMQ_ENABLED_PLUGINS_FILE=plugins,
            # Not the machine's rabbitmq-env.conf, which names its node.
            RABBITMQ_CONF_ENV_FILE=env_file)
        self.addCleanup(self.stop)
        self.start()

    def start(self):
        with open(os.path.join(self.directory, 'node.log'), 'a') as log_file:
            self.proc = subprocess.Popen(
                [SERVER], env=self.env, stdout=log_file,
                stderr=subprocess.STDOUT, start_new_session=True)
        functional.wait('the RabbitMQ node', self._up, timeout=120)

    def _up(self):
        if self.proc.poll() is not None:
            raise AssertionError('the RabbitMQ node exited with status %s'
                                 % self.proc.returncode)
        try:
            with kombu.Connection(self.url.replace('rabbit:', 'amqp:'),
                                  connect_timeout=1) as conn:
                conn.connect()
        except (OSError, kombu.exceptions.KombuError):
            return False
        return True

    def stop(self):
        if self.proc is None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None


@testtools.skipIf(SERVER is None, 'needs rabbitmq-server for a node of its '
                                  'own')
@pytest.mark.long
class TestRabbitMQRestarted(faults.FaultTestCase):

    def setUp(self):
        super().setUp()
        self.node = self.useFixture(RabbitNode(
            os.path.join(self.tmp, 'rabbitmq')))
        self.use_rabbit(self.node.url)
        # As failure-behaviour.rst advises: queues that outlive a restart
        # keep what is sent to a service before it is back.
        self.conf.config(amqp_durable_queues=True,
                         group='oslo_messaging_rabbit')
        durable = {'oslo_messaging_rabbit': {'amqp_durable_queues': 'true'}}
        self.conductor = self.start_conductor(0, **durable)
        self.hosts = self.host_names(2)
        self.agents = [self.start_agent(host, **durable)
                       for host in self.hosts]

    def test_reports_and_binds_resume(self):
        self.wait_for_placement()
        self.create_profiles()
        first, second = self.hosts
        booted = self.boot(first)

        # A bind Nova asks for while the broker is down, and a card that
        # appears meanwhile: both must get through once it is back.
        rp = self.candidate(second)
        instance = self.allocate(rp)
        (arq,) = self.rpc.arq_create(self.ctx, 'fpga', 'p')
        self.node.stop()
        stopped = time.monotonic()
        self.trees[second].intel_fpga('0000:af:00.0', vfs=services.VFS)
        patched = []
        patch = threading.Thread(target=lambda: patched.append(
            self.rpc.arq_apply_patch(self.ctx, {arq.uuid: {
                'hostname': second, 'device_rp_uuid': rp,
                'instance_uuid': instance}})))
        patch.start()
        functional.wait('the services to notice', lambda: all(
            'is unreachable' in p.log()
            for p in [self.conductor] + self.agents))
        started = time.monotonic()
        self.node.start()
        LOG.info('The broker was away %.1f s, %.1f s of them starting',
                 time.monotonic() - stopped, time.monotonic() - started)

        self.event(instance, arq.uuid)
        patch.join(60)
        self.assertEqual([None], patched)
        LOG.info('The bind asked for during the outage was bound %.1f s '
                 'after the broker was started again',
                 time.monotonic() - started)
        functional.wait('the new card', lambda: '%s_0000:af:00.0' % second
                        in self.children(second))
        LOG.info('The card added during the outage reached Placement '
                 '%.1f s after the broker was started again',
                 time.monotonic() - started)
        self.assert_consistent([booted[0], arq, self.boot(first)[0]])
