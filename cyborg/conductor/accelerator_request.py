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
"""ARQ workflows: create from a profile, bind, unbind and delete.

Binding is asynchronous: the RPC call validates the patch and moves the
ARQs to BindStarted, then the conductor's executor claims an attach handle
of the deployable behind the chosen resource provider and moves each ARQ
to Bound or BindFailed.
"""

from oslo_log import log

from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.objects import device_profile as profile_obj
from cyborg import states

LOG = log.getLogger(__name__)

RESOURCES_PREFIX = 'resources:'


def _units(group):
    """How many accelerators one profile group asks for."""
    return sum(int(amount) for key, amount in group.items()
               if key.startswith(RESOURCES_PREFIX))


def create(context, device_profile_name, project_id):
    """Make one ARQ per requested unit of every group of the profile."""
    profile = profile_obj.DeviceProfile.get_by_name(context,
                                                    device_profile_name)
    if not profile.enabled:
        raise exception.DeviceProfileDisabled(name=profile.name)
    values = [{'device_profile_id': profile.id,
               'device_profile_group_id': group_id,
               'device_profile_group': group,
               'project_id': project_id}
              for group_id, group in enumerate(profile.groups)
              for _unit in range(_units(group))]
    arqs = arq_obj.AcceleratorRequest.create_many(context, values)
    LOG.info('Created %(count)d accelerator requests for profile %(name)s',
             {'count': len(arqs), 'name': profile.name})
    return arqs


def start_binds(context, patch):
    """Validate a bind/unbind patch and start it.

    Every ARQ is checked before any changes, so a bad entry leaves all
    of them as they were. Unbinds finish here; binds move to BindStarted
    and the returned ARQs still need :func:`bind`.

    :param patch: {arq_uuid: bind values or None to unbind}.
    :returns: the ARQs to bind in the background.
    """
    arqs = {uuid: arq_obj.AcceleratorRequest.get_by_uuid(context, uuid)
            for uuid in patch}
    for uuid, values in patch.items():
        target = states.UNBOUND if values is None else states.BIND_STARTED
        if not states.can_transition(arqs[uuid].state, target):
            raise exception.AcceleratorRequestInvalidState(
                uuid=uuid, state=arqs[uuid].state,
                allowed=', '.join(sorted(states.sources_of(target))))
    to_bind = []
    for uuid, values in patch.items():
        arq = arqs[uuid]
        if values is None:
            arq.unbind(context)
        else:
            arq.update_state(context, states.BIND_STARTED, values=values,
                             expected=[arq.state])
            to_bind.append(arq)
    return to_bind


def _deployable_for(context, arq):
    deployables = deployable_obj.Deployable.list(
        context, filters={'rp_uuid': arq.device_rp_uuid})
    if not deployables:
        raise exception.InvalidParameterValue(
            name='device_rp_uuid',
            reason=_('no deployable has resource provider %s')
            % arq.device_rp_uuid)
    deployable = deployables[0]
    device = device_obj.Device.get_by_id(context, deployable.device_id)
    if device.hostname != arq.hostname:
        raise exception.InvalidParameterValue(
            name='device_rp_uuid',
            reason=_('resource provider %(rp)s is on host %(other)s, not '
                     '%(host)s') % {'rp': arq.device_rp_uuid,
                                    'other': device.hostname,
                                    'host': arq.hostname})
    return deployable


def bind(context, arq):
    """Claim a handle for one BindStarted ARQ: Bound or BindFailed."""
    try:
        deployable = _deployable_for(context, arq)
        arq.bind(context, deployable.id)
    except exception.CyborgException as e:
        LOG.warning('Binding accelerator request %(uuid)s failed: %(err)s',
                    {'uuid': arq.uuid, 'err': e})
        try:
            arq.update_state(context, states.BIND_FAILED,
                             expected=[states.BIND_STARTED])
        except exception.CyborgException as e:
            # Unbound or deleted meanwhile: nothing is left to fail.
            LOG.info('Accelerator request %(uuid)s left alone: %(err)s',
                     {'uuid': arq.uuid, 'err': e})
    return arq


def delete(context, uuids=None, instance_uuid=None):
    arqs = arq_obj.AcceleratorRequest.destroy_many(
        context, uuids=uuids, instance_uuid=instance_uuid)
    LOG.info('Deleted accelerator requests %s', [a.uuid for a in arqs])
    return arqs
