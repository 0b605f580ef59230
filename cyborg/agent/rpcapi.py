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
"""Client side of the agent RPC API: topic ``cyborg-agent``, one per host.

Each host's agent is called on :func:`cyborg.common.rpc.agent_transport`:
the conductor's own transport, or the virtual host that ``[conductor]
agent_transport_url`` names for the host.

Versioned like a public API. Each method names the version it needs; a
rolling upgrade caps the version sent with ``[upgrade_levels] agent``.

History:

* 1.0 - Initial version: program, create_mdev, remove_mdev.
* 1.1 - program takes allow_shell: whether an operator's shell update may
  flash a shell image. An agent of 1.0 is never asked to flash one.
"""

import oslo_messaging as messaging

from cyborg.common import rpc
import cyborg.conf
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import base as objects_base

CONF = cyborg.conf.CONF

TOPIC = 'cyborg-agent'


class AgentAPI:
    """What the conductor asks the agent of one host to do."""

    RPC_API_VERSION = '1.1'

    def __init__(self, topic=TOPIC):
        self._target = messaging.Target(topic=topic, version='1.0')
        self.client = self._client(rpc.TRANSPORT)
        # By transport: see rpc.agent_transport.
        self._clients = {}

    def _client(self, transport):
        return rpc.get_client(
            self._target, objects_base.CyborgObjectSerializer(),
            version_cap=CONF.upgrade_levels.agent or self.RPC_API_VERSION,
            transport=transport)

    def _client_of(self, host):
        transport = rpc.agent_transport(host)
        if transport is rpc.TRANSPORT:
            return self.client
        if transport not in self._clients:
            self._clients[transport] = self._client(transport)
        return self._clients[transport]

    def _call(self, context, host, version, method, timeout=None,
              call_monitor_timeout=None, **kwargs):
        cctxt = self._client_of(host).prepare(
            server=host, version=version, timeout=timeout,
            call_monitor_timeout=call_monitor_timeout)
        return rpc.call(cctxt, context, method,
                        _('the agent of host %s has not') % host, **kwargs)

    def program(self, context, host, deployable_name, bitstream_id=None,
                function_id=None, function_name=None, timeout=None,
                allow_shell=False):
        """Program an FPGA region of ``host`` with a Glance bitstream.

        The bitstream is named by ``bitstream_id`` (a Glance image), or
        found by function id or name for the region's type. When the call
        returns, the agent has already sent the conductor a fresh report of
        its host with the new functions.

        The agent sends a heartbeat while it works: an agent that stops
        (killed, host down) or never takes the call fails it within
        ``[DEFAULT] rpc_response_timeout``, not at the end of ``timeout``.

        ``allow_shell`` lets the agent flash a shell image (one with the
        ``shell_image`` property) into the card's persistent shell: only
        an operator's shell update of a card with no allocated function
        asks it, never a bind. Without it the agent loads user regions
        only.

        :returns: the Glance id of the bitstream that was loaded.
        :raises ServiceUnavailable: no answer or heartbeat came in time.
        :raises BitstreamRejected: a shell update, while ``[upgrade_levels]
            agent`` caps the version below 1.1 (an agent of 1.0 cannot
            be told).
        """
        kwargs = dict(deployable_name=deployable_name,
                      bitstream_id=bitstream_id, function_id=function_id,
                      function_name=function_name)
        version = '1.0'
        if self.client.can_send_version('1.1'):
            version = '1.1'
            kwargs['allow_shell'] = bool(allow_shell)
        elif allow_shell:
            raise exception.BitstreamRejected(
                image=bitstream_id, deployable=deployable_name,
                reason=_('a shell update needs agents of RPC version 1.1; '
                         '[upgrade_levels] agent caps it at %s')
                % CONF.upgrade_levels.agent)
        return self._call(context, host, version, 'program', timeout=timeout,
                          call_monitor_timeout=CONF.rpc_response_timeout,
                          **kwargs)

    def create_mdev(self, context, host, mdev_uuid, mdev_type,
                    parent_address):
        """Create a mediated device of ``mdev_type`` on a parent GPU."""
        return self._call(context, host, '1.0', 'create_mdev',
                          mdev_uuid=mdev_uuid, mdev_type=mdev_type,
                          parent_address=parent_address)

    def remove_mdev(self, context, host, mdev_uuid):
        """Remove a mediated device (a missing one is not an error)."""
        return self._call(context, host, '1.0', 'remove_mdev',
                          mdev_uuid=mdev_uuid)
