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
"""The ``cyborg-agent`` service: RPC server, resource tracker, hot-plug.

Before it serves, :func:`wait_for_compute_node` makes sure Placement knows
this host's compute node, since the device providers hang below it, and
finds the host's name in Cyborg: the name of that provider.
"""

import socket
import threading

from oslo_log import log
import oslo_messaging as messaging

from cyborg.agent import bitstream
from cyborg.agent import hotplug
from cyborg.agent import manager
from cyborg.agent import older_conductor
from cyborg.agent import resource_tracker
from cyborg.agent import rpcapi
from cyborg.common import rpc
from cyborg.common import service
from cyborg.conductor import rpcapi as conductor_rpcapi
import cyborg.conf
from cyborg import context as cyborg_context
from cyborg.drivers import base as drivers_base
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import base as objects_base

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)

#: What the conductor answers while Placement does not know the host yet:
#: it is not up, Placement is not reached, or the provider is not there.
_NOT_YET = (exception.ResourceProviderNotFound,
            exception.ServiceUnavailable)


def compute_node_names():
    """The names the compute node provider may have, in the order tried.

    ``[agent] resource_provider_name``, or the host's FQDN when it is
    unset, then ``[DEFAULT] host``: the order openstack-cyborg 17.0.0
    tries them in, so that the agent finds the name under which that
    service recorded the host's devices.
    """
    names = [CONF.agent.resource_provider_name or socket.getfqdn()]
    if CONF.host not in names:
        names.append(CONF.host)
    return names


def _find(conductor, context, names, timeout):
    """The first of ``names`` that Placement knows, asked through a conductor.

    :raises ResourceProviderNotFound: Placement knows none of them.
    :raises ServiceUnavailable: no answer; the names after the one asked
        are not tried, so that one Placement cannot tell about is never
        passed over.
    """
    for name in names:
        try:
            rp_uuid = conductor.compute_node_rp(
                context, hostname=name, rp_name=name, timeout=timeout)
        except exception.ResourceProviderNotFound:
            continue
        if name != names[0]:
            LOG.warning('Placement knows no compute node resource provider '
                        '%(first)s; using %(name)s', {'first': names[0],
                                                      'name': name})
        return name, rp_uuid
    raise exception.ResourceProviderNotFound(name=' or '.join(names))


def wait_for_compute_node(conductor, stop=None):
    """Wait, within ``[agent] placement_wait_*``, for the compute node.

    Each check tries the names of :func:`compute_node_names` in turn. The
    name found is the host's name in Cyborg: its devices are recorded
    under it, its device providers are named after it and the agent
    serves RPC under it.

    A conductor older than this agent (openstack-cyborg 17.0.0's during a
    rolling upgrade) answers that it knows no such method: the agent says
    so once a minute (:mod:`cyborg.agent.older_conductor`) and waits, with
    no limit, until an upgraded conductor answers.

    :returns: the name of the compute node's resource provider.
    :raises ResourceProviderNotFound: Placement still knows none of them.
    :raises ServiceUnavailable: ``stop`` was set while older conductors
        answered.
    """
    names = compute_node_names()
    context = cyborg_context.get_admin_context()
    attempts = CONF.agent.placement_wait_retries + 1
    stop = stop or threading.Event()
    notice = older_conductor.Notice()
    attempt = 1
    while True:
        try:
            # A conductor that is not up yet never answers (a message sent
            # before the broker has its queue is dropped): ask again after
            # the interval rather than the whole RPC timeout.
            name, rp_uuid = _find(conductor, context, names,
                                  CONF.agent.placement_wait_interval)
        except messaging.MessagingException as e:
            if not older_conductor.is_older(e):
                raise
            notice.older('compute_node_rp', e)
            if stop.wait(CONF.agent.placement_wait_interval):
                raise exception.ServiceUnavailable(reason=_(
                    'stopped while waiting for an upgraded conductor'))
            continue
        except _NOT_YET as e:
            # One line: an error raised in the conductor carries its
            # traceback in its text.
            LOG.warning('Waiting for Placement to know compute node '
                        'resource provider %(rp)s (attempt %(n)d of '
                        '%(total)d): %(error)s',
                        {'rp': ' or '.join(names), 'n': attempt,
                         'total': attempts,
                         'error': str(e).splitlines()[0]})
            if attempt == attempts or stop.wait(
                    CONF.agent.placement_wait_interval):
                break
            attempt += 1
            continue
        LOG.info('Compute node resource provider %(rp)s is %(uuid)s',
                 {'rp': name, 'uuid': rp_uuid})
        return name
    LOG.error('Placement knows no compute node resource provider named '
              '%s. Start nova-compute on this host first, or set [agent] '
              'resource_provider_name to the name of its provider.',
              ' or '.join(names))
    raise exception.ResourceProviderNotFound(name=' or '.join(names))


class AgentService(service.RPCService):
    """Serves the agent RPC API for this host and reports its devices.

    ``host`` is the host's name in Cyborg, which
    :func:`wait_for_compute_node` returns: the conductors call the agent
    by the name its devices are recorded under.
    """

    def __init__(self, drivers, host=None):
        super().__init__(None, rpcapi.TOPIC,
                         objects_base.CyborgObjectSerializer(), host=host)
        self.drivers = drivers
        self.tracker = None
        self._monitor = None

    def start(self):
        # The RPC clients need this process's transport, so the tracker and
        # the manager are made here rather than before the worker started.
        if rpc.TRANSPORT is None:
            rpc.init(CONF)
        self.tracker = resource_tracker.ResourceTracker(
            self.host, self.drivers, conductor_rpcapi.AgentConductorAPI())
        self.manager = manager.AgentManager(self.tracker)
        self._prepare_downloads()
        super().start()
        self.tracker.start()
        if CONF.agent.enable_hotplug_monitor:
            self._monitor = hotplug.HotplugMonitor(self.tracker.trigger)
            self._monitor.start()

    def _prepare_downloads(self):
        """Make the bitstream download directory the agent's own now.

        A host whose drivers program nothing needs none. A directory that
        cannot be made is logged, and each programming then fails saying
        why, rather than the agent not serving its other devices.
        """
        programs = drivers_base.Driver.fpga_regions
        if all(type(d).fpga_regions is programs for d in self.drivers):
            return
        try:
            bitstream.download_dir()
        except exception.ProgrammingFailed as e:
            LOG.error('%s', e)

    def reset(self):
        """``SIGHUP``: discover the devices again at once.

        A report goes to the conductor if they changed.
        """
        if self.tracker is not None:
            self.tracker.trigger()

    def stop(self, graceful=True):
        if self._monitor is not None:
            self._monitor.stop()
            self._monitor = None
        super().stop(graceful=graceful)
        if self.tracker is not None:
            self.tracker.stop()
