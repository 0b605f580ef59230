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
"""Agents' topics: each compute host reports on a topic of its own.

An agent sends ``compute_node_rp`` and ``report_host`` to topic
``cyborg-conductor-agent`` with its host as the server, which the rabbit
driver of oslo.messaging routes with the key
``cyborg-conductor-agent.<host>`` to the queue of that name. The conductor
runs one RPC server per known host on that target, whose endpoint
(:class:`HostEndpoint`) is bound to the host: it serves these two calls
only, refuses one that names another host, and runs them in the
conductor's own context, whatever identity the message claims. Every
conductor process (workers and services alike) declares the same queue
for a host, so RabbitMQ hands each report to one of them.

Why this mechanism: oslo.messaging shows an endpoint neither the routing
key nor the broker user of a message, so the topic (or the virtual host)
a message came in on is the only sender identity a conductor can rely on,
and only where the broker enforces it. Topic permissions on the control
exchange can keep a host's broker user to ``cyborg-conductor-agent.<host>``
there, but not off RabbitMQ's default exchange, through which every agent
must send its RPC replies and which delivers to any queue of the virtual
host by name (``cyborg-conductor`` included). So the conductor may meet
the agents on another transport, :func:`cyborg.common.rpc.agent_transport`
(``[conductor] agent_transport_url``): with ``{host}`` in it each host's
agent is in a virtual host of its own, where its server here is the only
conductor-side consumer; doc/source/admin/security.rst gives the broker
commands. The cost: each served host is one broker connection and three
queues per conductor process (oslo.messaging's server also consumes the
topic's shared queue and a fanout queue, which no agent may publish to).

Known hosts are those with a row in the hosts table and the compute nodes
(root resource providers) that Placement knows, found again on every
periodic pass: a new host's agent is served within ``[DEFAULT]
periodic_interval``, and it waits for that (its call of
``compute_node_rp`` fails at once while no queue takes it).
"""

from concurrent import futures
import re
import threading

from oslo_log import log
import oslo_messaging as messaging

from cyborg.clients import placement
from cyborg.common import rpc
from cyborg.conductor import manager
from cyborg.conductor import rpcapi
from cyborg import exception
from cyborg.objects import base as objects_base
from cyborg.objects import host as host_obj

LOG = log.getLogger(__name__)


class HostEndpoint:
    """The report calls of one host's agent, served for that host only."""

    RPC_API_VERSION = '1.6'

    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, conductor, host):
        self.manager = conductor
        self.host = host

    def _check(self, action, *names):
        """:raises ReportForOtherHost: a name is not the topic's host."""
        for name in names:
            if name != self.host:
                LOG.warning('Refused %(action)s for host %(name)s sent on '
                            'the topic of host %(host)s',
                            {'action': action, 'name': name,
                             'host': self.host})
                raise exception.ReportForOtherHost(
                    sender=self.host, action=action, host=name)

    @rpc.expected_exceptions(exception.CyborgException)
    def compute_node_rp(self, context, hostname, rp_name):
        context = manager.own_context()
        self._check('compute_node_rp', hostname, rp_name)
        return self.manager._serve_compute_node_rp(context, hostname,
                                                   rp_name)

    @rpc.expected_exceptions(exception.CyborgException)
    def report_host(self, context, host_report):
        context = manager.own_context()
        self._check('report_host', host_report.hostname)
        self.manager._serve_report(context, host_report)


def known_hosts(context):
    """The names of the hosts in Cyborg and of Placement's compute nodes.

    Placement's are left out, with a warning, while it cannot be reached.
    """
    names = {host.hostname for host in host_obj.Host.list(context)}
    try:
        names |= placement.PlacementClient().root_provider_names()
    except (exception.PlacementUnavailable,
            exception.PlacementRequestFailed) as e:
        LOG.warning('Agents of hosts unknown to Cyborg wait for the next '
                    'pass: Placement did not list its providers: %s', e)
    return names


class AgentTopics:
    """One RPC server per known host on the agents' topic."""

    def __init__(self, conductor):
        """:param conductor: the process's ConductorManager."""
        self.manager = conductor
        self._servers = {}
        self._lock = threading.Lock()

    @property
    def hosts(self):
        """The hosts served now."""
        return set(self._servers)

    def refresh(self, context):
        """Serve the known hosts: new ones now, gone ones no more."""
        wanted = known_hosts(context)
        with self._lock:
            for host in sorted(wanted - set(self._servers)):
                # One host's broker trouble (its virtual host is not made
                # yet) keeps no other host waiting.
                try:
                    self._servers[host] = self._serve(host)
                except Exception as e:
                    LOG.warning('Cannot serve the reports of host %(host)s '
                                'yet; trying again at the next pass: '
                                '%(error)s', {'host': host, 'error': e})
            for host in sorted(set(self._servers) - wanted):
                self._stop(self._servers.pop(host))

    def serve(self, host):
        """Serve ``host`` now, known or not (until a refresh drops it)."""
        with self._lock:
            if host not in self._servers:
                self._servers[host] = self._serve(host)

    def _serve(self, host):
        server = rpc.get_server(
            messaging.Target(topic=rpcapi.AGENT_TOPIC, server=host),
            [HostEndpoint(self.manager, host)],
            objects_base.CyborgObjectSerializer(),
            transport=rpc.agent_transport(host))
        server.start()
        LOG.info('Serving the reports of host %s', host)
        return server

    @staticmethod
    def _stop(server):
        server.stop()
        server.wait()

    def stop(self):
        """Stop serving every host, all at once.

        A server's stop waits for its consumer's current poll (up to a
        second): one after another, the stops of many hosts would add up.
        """
        with self._lock:
            servers = list(self._servers.values())
            self._servers.clear()
        if servers:
            with futures.ThreadPoolExecutor(min(len(servers), 32)) as pool:
                list(pool.map(self._stop, servers))


def broker_permissions(host, exchange='cyborg'):
    """RabbitMQ permissions of a broker user for ``host``'s agent alone.

    :returns: ``(configure, write, read)`` regular expressions for
        ``rabbitmqctl set_permissions`` and ``(write, read)`` ones for
        ``rabbitmqctl set_topic_permissions`` on the control exchange
        ``exchange``: the agent may declare and consume its own queues
        (``cyborg-agent``, ``cyborg-agent.<host>``, its fanout queue) and
        its reply queues, and publish on the control exchange only its
        host's reports, on no fanout exchange. Replies go through the
        default exchange (``amq.default``), which reaches any queue of the
        virtual host by name: see the security guide for why agents should
        also have virtual hosts of their own (``[conductor]
        agent_transport_url``).
    """
    host = re.escape(host)
    queues = 'cyborg-agent|cyborg-agent\\.%s|reply_.*' % host
    # Binding a queue takes write on the queue, read on the exchange: the
    # agent may not publish to the agents' fanout exchange.
    own = '%s|%s|cyborg-agent_fanout(_.*)?' % (re.escape(exchange), queues)
    write = 'amq\\.default|%s|%s|cyborg-agent_fanout_.*' % (
        re.escape(exchange), queues)
    return (('^(%s)$' % own, '^(%s)$' % write, '^(%s)$' % own),
            ('^%s\\.%s$' % (re.escape(rpcapi.AGENT_TOPIC), host),
             '^cyborg-agent(\\.%s)?$' % host))
