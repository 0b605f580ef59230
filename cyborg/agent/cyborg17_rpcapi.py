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
"""Client of openstack-cyborg 17.0.0's agent RPC API, for rolling upgrades.

While a compute host still runs 17.0.0's ``cyborg-agent``, the conductors
of this release ask it with its own methods and arguments: it serves
topic ``cyborg-agent``, version 1.0, under its ``[DEFAULT] host``, and
knows ``fpga_program``, ``create_vgpu_mdev`` and ``remove_vgpu_mdev``, not
this release's ``program``, ``create_mdev`` and ``remove_mdev``.
:mod:`cyborg.conductor.cyborg17_agents` picks this client for such hosts.
"""

import copy

import oslo_messaging as messaging

from cyborg.agent import rpcapi
from cyborg.common import rpc
import cyborg.conf
from cyborg.i18n import _
from cyborg.objects import base as objects_base

CONF = cyborg.conf.CONF


class AgentAPI:
    """What the conductor asks a 17.0.0 agent to do."""

    #: The only version 17.0.0's agent serves.
    RPC_API_VERSION = '1.0'

    def __init__(self, topic=rpcapi.TOPIC):
        target = messaging.Target(topic=topic, version=self.RPC_API_VERSION)
        self.client = rpc.get_client(
            target, objects_base.CyborgObjectSerializer(),
            version_cap=self.RPC_API_VERSION)
        self._token_client = rpc.get_client(
            target, objects_base.CyborgObjectSerializer(),
            version_cap=self.RPC_API_VERSION, with_token=True)

    def _call(self, context, server, method, timeout=None, client=None,
              **kwargs):
        client = client or self.client
        return rpc.call(client.prepare(server=server, timeout=timeout),
                        context, method,
                        _("openstack-cyborg 17.0.0's agent %s has not") %
                        server, **kwargs)

    def fpga_program(self, context, server, controlpath_id, bitstream_uuid,
                     driver_name, timeout=None, glance_token=None):
        """Load Glance image ``bitstream_uuid`` into the card.

        :param controlpath_id: the card's control path, as 17.0.0's
            conductor sent it: ``cpid_type`` and ``cpid_info`` (a dict).
        :param driver_name: the deployable's ``driver_name``, which picks
            17.0.0's FPGA driver.
        :param glance_token: a token with which it downloads the image
            (``[conductor] cyborg17_agents_glance_token``); the call
            carries no token without one.
        :returns: what its driver returned (True when it loaded).
        """
        client = None
        if glance_token is not None:
            context = copy.copy(context)
            context.auth_token = glance_token
            client = self._token_client
        return self._call(context, server, 'fpga_program', timeout=timeout,
                          client=client, controlpath_id=controlpath_id,
                          bitstream_uuid=bitstream_uuid,
                          driver_name=driver_name)

    def create_vgpu_mdev(self, context, server, pci_addr, asked_type,
                         ah_uuid):
        """Create mediated device ``ah_uuid`` of ``asked_type``."""
        return self._call(context, server, 'create_vgpu_mdev',
                          pci_addr=pci_addr, asked_type=asked_type,
                          ah_uuid=ah_uuid)

    def remove_vgpu_mdev(self, context, server, pci_addr, asked_type,
                         ah_uuid):
        """Remove mediated device ``ah_uuid``."""
        return self._call(context, server, 'remove_vgpu_mdev',
                          pci_addr=pci_addr, asked_type=asked_type,
                          ah_uuid=ah_uuid)
