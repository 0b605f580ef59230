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
"""The ``cyborg-conductor`` service: the RPC server and its periodic work.

At start it resumes the binds a stopped conductor left behind; then every
``[DEFAULT] periodic_interval`` seconds it fails binds that outlived
``[DEFAULT] bind_timeout``, releases the quarantined devices healthy for
``[conductor] quarantine_quiet_period`` and reconciles Placement for their
hosts and the hosts whose ``[conductor] reconcile_interval`` has passed,
and serves the agents' topics of the hosts known by then
(:mod:`cyborg.conductor.agent_topics`). A thread of its own sends Nova
the events of bound and failed accelerator requests, those left by a
stopped conductor included.
"""

import random

from oslo_log import log

from cyborg.common import service
from cyborg.conductor import agent_topics
from cyborg.conductor import binding
from cyborg.conductor import manager
from cyborg.conductor import nova_events
from cyborg.conductor import rpcapi
import cyborg.conf
from cyborg import context as cyborg_context
from cyborg.objects import base as objects_base

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


class ConductorService(service.RPCService):
    """Serves the conductor RPC API and runs the periodic tasks."""

    def __init__(self, host=None):
        host = host or CONF.host
        super().__init__(manager.ConductorManager(host),
                         rpcapi.TOPIC, objects_base.CyborgObjectSerializer(),
                         host=host)
        self.events = nova_events.Sender()
        self.agent_topics = agent_topics.AgentTopics(self.manager)
        self.manager.agent_topics = self.agent_topics

    def start(self):
        # The sender first: a bind done in an RPC call hands its events
        # to it (cyborg.conductor.nova_events.hold).
        self.events.start()
        super().start()
        context = cyborg_context.get_admin_context()
        try:
            self.agent_topics.refresh(context)
        except Exception:
            LOG.exception('Serving the agents\' topics failed; the periodic '
                          'tasks try again')
        binding.resume_binds(context, self.manager.executor)
        self.tg.add_timer_args(
            CONF.periodic_interval, self.periodic_tasks, args=[context],
            # Spreads the conductors' first runs; no secret depends on it.
            initial_delay=random.uniform(  # nosec B311
                0, CONF.periodic_fuzzy_delay),
            stop_on_exception=False)

    def periodic_tasks(self, context):
        """One pass of the periodic work; a failing task spoils no other."""
        for task in (self.agent_topics.refresh,
                     binding.expire_binds,
                     self.manager.reconciler.release_recovered,
                     self.manager.reconciler.run):
            try:
                task(context)
            except Exception:
                LOG.exception('Periodic task %s failed; it runs again in '
                              '%d s', task.__qualname__,
                              CONF.periodic_interval)

    def stop(self, graceful=True):
        # The conductors' topic first: the other conductors take its calls
        # from now on, while the hosts' topics stop.
        super().stop(graceful=graceful)
        self.agent_topics.stop()
        self.events.stop()
