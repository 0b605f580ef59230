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
"""Loading bitstreams into FPGA regions: whether a bind needs it, and doing it.

Both ways a region gets programmed come here: a bind whose profile group
asks for a bitstream or a function the region does not hold
(:mod:`cyborg.conductor.binding`), and an operator's program request
(:mod:`cyborg.conductor.device`). The host's agent does the loading; the
deployable records the loaded bitstream at once, so the next bind on the
region does not program it again (the agent's next report says the same).
A region is never programmed under an accelerator that is in use.
"""

from glanceclient import exc as glance_exc
from keystoneauth1 import exceptions as ks_exc
from oslo_log import log

from cyborg.clients import glance
from cyborg.common import placement_names
from cyborg.common import profile_group
import cyborg.conf
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import attach_handle as handle_obj
from cyborg import states

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


def _holds_function(context, deployable, function_name):
    """Whether the bitstream the region holds is named ``function_name``.

    Only Glance knows a bitstream's function name; when it cannot tell,
    the region counts as not holding it. Glance is asked as the service,
    as the agent asks it, never as the request's user.
    """
    if not deployable.bitstream_id:
        return False
    try:
        image = glance.get_client(CONF, context).images.get(
            deployable.bitstream_id)
    except (glance_exc.ClientException, glance_exc.CommunicationError,
            ks_exc.ClientException) as e:
        LOG.warning('Cannot read bitstream %(image)s of %(name)s from '
                    'Glance, so it is programmed again: %(error)s',
                    {'image': deployable.bitstream_id,
                     'name': deployable.name, 'error': e})
        return False
    return image.get('function_name') == function_name


def asked(group):
    """Whether the profile group asks for a bitstream or a function."""
    accel = profile_group.parse(group).accel
    return any(accel.get(key) for key in ('bitstream_id', 'function_id',
                                          'function_name'))


def needed(context, group, deployable, traits):
    """What a bind of ``group`` must load into ``deployable``, if anything.

    A region already holding the asked bitstream, a function trait of the
    asked function, or a bitstream of the asked function name, is used as
    it is.

    :param context: the request's; Glance is asked as the service.
    :param group: the ARQ's profile group.
    :param traits: the deployable's traits.
    :returns: the keyword arguments of :func:`program` (``bitstream_id``,
        ``function_id`` or ``function_name``), or None.
    """
    accel = profile_group.parse(group).accel
    bitstream_id = accel.get('bitstream_id')
    function_id = accel.get('function_id')
    function_name = accel.get('function_name')
    if bitstream_id:
        if bitstream_id == deployable.bitstream_id:
            return None
        return {'bitstream_id': bitstream_id}
    if function_id:
        trait = placement_names.function_trait(
            placement_names.normalize_id(function_id))
        return None if trait in traits else {'function_id': function_id}
    if function_name:
        if _holds_function(context, deployable, function_name):
            return None
        return {'function_name': function_name}
    return None


def program(context, deployable, device, agent, timeout, keep=None,
            **bitstream):
    """Load a bitstream into an FPGA region through its host's agent.

    :param deployable: the region's :class:`Deployable`; it is saved with
        no ``bitstream_id`` while the agent works, then with the loaded
        one.
    :param device: the region's :class:`Device`.
    :param agent: an :class:`cyborg.agent.rpcapi.AgentAPI`.
    :param timeout: seconds the agent has.
    :param keep: the id of an attach handle that may be in use: the one a
        bind claimed for the accelerator being programmed.
    :param bitstream: ``bitstream_id``, ``function_id`` or
        ``function_name``, as the agent's ``program`` takes them.
    :returns: ``deployable``.
    :raises NotProgrammable: it is not an FPGA region.
    :raises ObjectInUse: another accelerator of it is in use.
    """
    if device.type != states.DEVICE_FPGA:
        raise exception.NotProgrammable(
            deployable=deployable.uuid,
            reason=_('it belongs to a %s device, not an FPGA') % device.type)
    in_use = [h for h in handle_obj.AttachHandle.list(
        context, filters={'deployable_id': deployable.id, 'in_use': True})
        if h.id != keep]
    if in_use:
        raise exception.ObjectInUse(
            kind=_('Deployable'), uuid=deployable.uuid,
            reason=_('programming %(name)s would disturb %(count)d '
                     'accelerator(s) attached to it') % {
                'name': deployable.name, 'count': len(in_use)})
    if deployable.bitstream_id is not None:
        # Until the agent answers, what the region holds is unknown: if the
        # agent dies meanwhile, no bind may take it for the old bitstream.
        deployable.bitstream_id = None
        deployable.save(context)
    LOG.info('Programming %(name)s on host %(host)s with %(bitstream)s',
             {'name': deployable.name, 'host': device.hostname,
              'bitstream': bitstream})
    deployable.bitstream_id = agent.program(
        context, device.hostname, deployable.name, timeout=timeout,
        **bitstream)
    deployable.save(context)
    return deployable
