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
"""``cyborg-agent``: discovers, reports and programs this host's devices."""

from oslo_log import log
import oslo_messaging as messaging

from cyborg.agent import service as agent_service
from cyborg.common import rpc
from cyborg.common import service
from cyborg.conductor import rpcapi as conductor_rpcapi
import cyborg.conf
from cyborg.drivers import base as drivers_base
from cyborg import exception
from cyborg import startup

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


def main(argv=None):
    startup.parse_config(startup.process_argv('cyborg-agent', argv))
    # Fail here, with a clear message and a non-zero status, rather than
    # from the service's threads.
    try:
        drivers = drivers_base.load(CONF.agent.enabled_drivers)
        rpc.init(CONF)
        try:
            host = agent_service.wait_for_compute_node(
                conductor_rpcapi.AgentConductorAPI())
        finally:
            # The service opens the transport again once its signals are
            # set (service.run): threads started before would take them.
            rpc.cleanup()
    except (exception.CyborgException, messaging.MessagingException) as e:
        # A conductor's error carries its traceback in its text.
        LOG.error('cyborg-agent cannot start: %s',
                  (str(e).splitlines() or [''])[0])
        return 1
    return service.run(agent_service.AgentService(drivers, host=host),
                       CONF)
