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
"""ARQ unbinds, and the mediated devices that binds leave behind.

An unbind releases the ARQ's handle and, for an MDEV handle, has the
agent of the host that serves the handle remove its mdev first. A failed
bind and an ARQ being deleted remove their mdevs as far as they can: an
mdev left on a host that is down keeps its handle's uuid and is reused by
the next bind of that handle.
"""

from oslo_log import log
import oslo_messaging as messaging

from cyborg.conductor import cyborg17_agents
from cyborg.conductor import notifications
from cyborg import exception
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg import states

LOG = log.getLogger(__name__)

# Failures of an agent call: a domain error it raised, or no answer.
AGENT_ERRORS = (exception.CyborgException, messaging.MessagingException)


def _agent_host(context, handle):
    """The host whose agent serves ``handle`` (not the ARQ's name)."""
    deployable = deployable_obj.Deployable.get_by_id(context,
                                                     handle.deployable_id)
    return device_obj.Device.get_by_id(context,
                                       deployable.device_id).hostname


def remove_mdev(context, agent, handle, quiet=False):
    """Have the agent serving ``handle`` remove its mdev.

    :param quiet: log, instead of raising, an agent that fails.
    """
    host = _agent_host(context, handle)
    try:
        agent.remove_mdev(context, host, handle.uuid)
    except AGENT_ERRORS as e:
        if not quiet:
            raise
        LOG.warning('Mediated device %(uuid)s on %(host)s stays: %(err)s; '
                    'the next bind of its handle reuses it',
                    {'uuid': handle.uuid, 'host': host, 'err': e})


def mdev_of(context, arq):
    """The MDEV attach handle an ARQ holds, or None.

    :param arq: an ARQ, or its
        :class:`~cyborg.objects.accelerator_request.Holder`.
    """
    if arq.attach_handle_id is None or not arq.hostname:
        return None
    if arq.attach_handle_type not in ('', states.ATTACH_MDEV):
        # A bound ARQ shows its handle's type, a Holder any handle's.
        return None
    handle = handle_obj.AttachHandle.get_by_id(context, arq.attach_handle_id)
    return handle if handle.attach_type == states.ATTACH_MDEV else None


def unbind(context, arq, agent=None):
    """Release an ARQ's handle and mdev; it becomes Unbound.

    :raises UnbindFailed: the agent could not remove the mdev; the ARQ is
        UnbindFailed, keeps its handle, and a later unbind retries.
    """
    handle = mdev_of(context, arq)
    if handle is not None:
        agent = agent or cyborg17_agents.HostAgents()
        try:
            remove_mdev(context, agent, handle)
        except AGENT_ERRORS as e:
            LOG.warning('Unbinding accelerator request %(uuid)s failed: '
                        '%(err)s', {'uuid': arq.uuid, 'err': e})
            arq.update_state(context, states.UNBIND_FAILED,
                             expected=[arq.state])
            raise exception.UnbindFailed(uuid=arq.uuid, reason=str(e))
    bound_to = arq.hostname, arq.device_rp_uuid, arq.instance_uuid
    arq.unbind(context)
    notifications.arq_unbound(context, arq, *bound_to)


def remove_mdevs(context, arqs):
    """Remove the mdevs of ARQs about to be deleted, as far as possible.

    Deleting must not stop at a host that is down: an mdev left there keeps
    its handle's uuid and is reused by the next bind of that handle.

    :param arqs: the ARQs, or their
        :class:`~cyborg.objects.accelerator_request.Holder`.
    """
    agent = None
    for arq in arqs:
        handle = mdev_of(context, arq)
        if handle is not None:
            agent = agent or cyborg17_agents.HostAgents()
            remove_mdev(context, agent, handle, quiet=True)
