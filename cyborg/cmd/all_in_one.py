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
"""``cyborg-all-in-one``: API, conductor and agent in one process.

For development and the quickstart, so no console script of a production
install: run it as ``python -m cyborg.cmd.all_in_one``. With ``[DEFAULT]
transport_url = fake://`` (oslo.messaging's in-process transport) the
three services call each other directly, without a broker
(:mod:`cyborg.common.local_dispatch`; what they send is serialised as on
RabbitMQ), so one process on one SQLite database is a whole Cyborg for
one simulated or real host. The API answers at once; the agent first
waits, in the background, for Placement to know this host's compute node
(``[agent] placement_wait_*``), then reports its devices. ``SIGTERM`` or
``SIGINT`` stops all three.
"""

import signal
import sys
import threading

from oslo_log import log

from cyborg.agent import service as agent_service
from cyborg.api import app
from cyborg.cmd import api as api_cmd
from cyborg.common import rpc
from cyborg.conductor import rpcapi as conductor_rpcapi
from cyborg.conductor import service as conductor_service
import cyborg.conf
from cyborg.drivers import base as drivers_base
from cyborg import exception
from cyborg import startup

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


class _Agent(threading.Thread):
    """Waits for the compute node, then runs the agent service."""

    def __init__(self, drivers):
        super().__init__(name='cyborg-agent', daemon=True)
        self.drivers = drivers
        self.stopping = threading.Event()
        self.service = None

    def run(self):
        try:
            host = agent_service.wait_for_compute_node(
                conductor_rpcapi.AgentConductorAPI(), stop=self.stopping)
        except exception.CyborgException as e:
            LOG.error('The agent does not start: %s', e)
            return
        if not self.stopping.is_set():
            self.service = agent_service.AgentService(self.drivers,
                                                      host=host)
            self.service.start()

    def stop(self):
        self.stopping.set()
        self.join(30)
        if self.service is not None:
            self.service.stop()


def main(argv=None):
    startup.prepare_server('cyborg-all-in-one', argv)
    if not rpc.in_process(CONF):
        LOG.error('cyborg-all-in-one needs [DEFAULT] transport_url = '
                  'fake://; run cyborg-api, cyborg-conductor and '
                  'cyborg-agent for another transport')
        return 2
    try:
        drivers = drivers_base.load(CONF.agent.enabled_drivers)
        api_cmd.tls_adapter(CONF)  # [api] enable_ssl_api's files
    except exception.CyborgException as e:
        LOG.error('cyborg-all-in-one cannot start: %s', e)
        return 1
    rpc.init(CONF)
    conductor = conductor_service.ConductorService(CONF.host)
    conductor.start()
    agent = _Agent(drivers)
    agent.start()
    server = api_cmd.make_server(CONF, app.setup_app(CONF))

    def stop(signum, frame):
        LOG.info('Signal %d: stopping', signum)
        # cheroot's stop waits for the serving loop: not from its thread.
        threading.Thread(target=server.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    LOG.info('cyborg-all-in-one serving the API on %(host)s:%(port)s',
             {'host': CONF.api.host_ip, 'port': CONF.api.port})
    try:
        server.start()
    finally:
        agent.stop()
        conductor.stop()
        rpc.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
