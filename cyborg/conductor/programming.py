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

A region is never programmed under an accelerator that is in use, its
own or one of the deployables below it (its functions), and none of them
is bound while it is programmed: the database marks them in the
transaction that found them free, and a bind's claim refuses a marked
deployable (:mod:`cyborg.db.programming`). The traits that say what the
region holds go with the mark, from the database and then from
Placement, so that allocation candidates stop offering the old function;
the agent's report after programming brings the new ones, which reach
Placement once the mark is cleared. A mark that a conductor left behind
(it died while the agent programmed) is cleared by :func:`expire`.
"""

import datetime
import os
import time

from glanceclient import exc as glance_exc
from keystoneauth1 import exceptions as ks_exc
from oslo_log import log
from oslo_utils import timeutils

from cyborg.clients import glance
from cyborg.common import placement_names
from cyborg.common import profile_group
from cyborg.conductor import reconcile
import cyborg.conf
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import deployable as deployable_obj
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
    if _by_name_only(accel):
        function_name = accel['function_name']
        if _holds_function(context, deployable, function_name):
            return None
        return {'function_name': function_name}
    return _needed_by_id(accel, deployable, traits)


def loaded(group, deployable, traits):
    """Whether ``deployable`` holds what a bind of ``group`` would load.

    Known without Glance only: a group that asks for a function by name
    alone is not known to be held (see :func:`needed`).
    """
    accel = profile_group.parse(group).accel
    return (not _by_name_only(accel) and
            _needed_by_id(accel, deployable, traits) is None)


def _by_name_only(accel):
    return bool(accel.get('function_name')) and not (
        accel.get('bitstream_id') or accel.get('function_id'))


def _needed_by_id(accel, deployable, traits):
    """:func:`needed` for a group that asks by id, or for nothing."""
    bitstream_id = accel.get('bitstream_id')
    function_id = accel.get('function_id')
    if bitstream_id:
        if bitstream_id == deployable.bitstream_id:
            return None
        return {'bitstream_id': bitstream_id}
    if function_id:
        trait = placement_names.function_trait(
            placement_names.normalize_id(function_id))
        return None if trait in traits else {'function_id': function_id}
    return None


#: How long a Placement sync of a programmed region's host waits for the
#: host's inventory lease (a report being applied, a reconcile pass).
_LEASE_WAIT = 5.0


def _owner():
    return '%s:%d' % (CONF.host, os.getpid())


def sync_placement(context, hostname):
    """Make Placement show the host's traits as the database holds them.

    Waits a little for the host's inventory lease; a sync that cannot run
    now is left to the periodic reconcile, which withholds the traits of
    regions being programmed too.
    """
    waited = 0.0
    while True:
        try:
            reconcile.sync(context, hostname, _owner())
            return
        except exception.HostLeaseHeld as e:
            if waited >= _LEASE_WAIT:
                error = e
                break
        except (exception.PlacementUnavailable,
                exception.PlacementRequestFailed) as e:
            error = e
            break
        time.sleep(0.1)
        waited += 0.1
    LOG.warning('Placement sync of host %(host)s after a change of its '
                'FPGA regions postponed to the next reconciliation: '
                '%(error)s', {'host': hostname, 'error': error})


def program(context, deployable, device, agent, timeout, keep=None,
            **bitstream):
    """Load a bitstream into an FPGA region through its host's agent.

    :param deployable: the region's :class:`Deployable`; it has no
        ``bitstream_id`` while the agent works, then the loaded one.
    :param device: the region's :class:`Device`.
    :param agent: a :class:`cyborg.conductor.cyborg17_agents.HostAgents`
        (or :class:`cyborg.agent.rpcapi.AgentAPI`).
    :param timeout: seconds the agent has.
    :param keep: the id of an attach handle that may be in use: the one a
        bind claimed for the accelerator being programmed.
    :param bitstream: ``bitstream_id``, ``function_id`` or
        ``function_name``, as the agent's ``program`` takes them.
    :returns: ``deployable``.
    :raises NotProgrammable: it is not an FPGA region.
    :raises ObjectInUse: an accelerator of it, or of a deployable below
        it, is in use.
    :raises DeployableProgramming: it, or a region above it, is being
        programmed.
    """
    if device.type != states.DEVICE_FPGA:
        raise exception.NotProgrammable(
            deployable=deployable.uuid,
            reason=_('it belongs to a %s device, not an FPGA') % device.type)
    # Until the agent answers, what the region holds is unknown: if the
    # agent dies meanwhile, no bind may take it for the old bitstream.
    deployable_obj.Deployable.start_programming(context, deployable.id,
                                                keep=keep)
    deployable.bitstream_id = None
    deployable.obj_reset_changes(['bitstream_id'])
    loaded = None
    try:
        sync_placement(context, device.hostname)
        LOG.info('Programming %(name)s on host %(host)s with %(bitstream)s',
                 {'name': deployable.name, 'host': device.hostname,
                  'bitstream': bitstream})
        loaded = agent.program(context, device.hostname, deployable.name,
                               timeout=timeout, **bitstream)
    finally:
        # Failed, the region keeps no function trait until its host
        # reports what it holds.
        deployable_obj.Deployable.finish_programming(
            context, deployable.id, bitstream_id=loaded)
        sync_placement(context, device.hostname)
    deployable.bitstream_id = loaded
    deployable.obj_reset_changes(['bitstream_id'])
    return deployable


def expire(context):
    """Clear the marks of programmings that no conductor will finish.

    A conductor waits for the agent ``[DEFAULT] bind_timeout`` at most; a
    mark twice as old belongs to a conductor that died meanwhile. The
    region's traits come back with its host's next report. Meant for a
    periodic task.

    :returns: the names of the hosts whose regions were cleared.
    """
    before = timeutils.utcnow() - datetime.timedelta(
        seconds=2 * CONF.bind_timeout)
    hosts = deployable_obj.Deployable.expire_programming(context, before)
    for hostname in hosts:
        LOG.warning('FPGA regions of host %(host)s were marked as being '
                    'programmed for more than %(limit)d s; marks cleared',
                    {'host': hostname, 'limit': 2 * CONF.bind_timeout})
        sync_placement(context, hostname)
    return hosts
