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

Binding is asynchronous: the RPC call validates the patch (states, and that
each resource provider is a deployable of the named host that fits the
ARQ's group) and moves the ARQs to BindStarted, then
:mod:`cyborg.conductor.binding` finishes them in the conductor's executor.
Unbind and delete release handles and mdevs here, in the RPC call.
"""

from oslo_log import log

from cyborg.conductor import binding
import cyborg.conf
from cyborg import exception
from cyborg.objects import accelerator_request as arq_obj
from cyborg import states

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


def create(context, device_profile_name, project_id):
    """Make one ARQ per requested unit of every group of the profile.

    :raises TooManyAccelerators: the profile asks for more than ``[api]
        max_accelerators_per_request``.
    """
    arqs = arq_obj.AcceleratorRequest.create_for_profile(
        context, device_profile_name, project_id,
        CONF.api.max_accelerators_per_request)
    LOG.info('Created %(count)d accelerator requests for profile %(name)s',
             {'count': len(arqs), 'name': device_profile_name})
    return arqs


def start_binds(context, patch, executor):
    """Validate a bind/unbind patch, start the binds, do the unbinds.

    Every ARQ is checked before any changes, so a bad entry leaves all
    of them as they were. The binds move to BindStarted together, in one
    transaction that only moves each ARQ from the state it was checked
    in: if a concurrent request changed any of them meanwhile, none moves.
    They finish in the background on ``executor``; unbinds finish here.

    :param patch: {arq_uuid: bind values or None to unbind}.
    :raises AcceleratorRequestInvalidState: an ARQ cannot move that way;
        nothing changed.
    :raises BindRefused: a bind names a resource provider that no
        deployable of its host has, or one that cannot serve the ARQ's
        group; nothing changed.
    :raises UnbindFailed: an unbind could not release its mdev (the other
        entries are done; that ARQ is UnbindFailed and may be unbound
        again).
    """
    arqs = {uuid: arq_obj.AcceleratorRequest.get_by_uuid(context, uuid)
            for uuid in patch}
    for uuid, values in patch.items():
        target = states.UNBOUND if values is None else states.BIND_STARTED
        if not states.can_transition(arqs[uuid].state, target):
            raise exception.AcceleratorRequestInvalidState(
                uuid=uuid, state=arqs[uuid].state,
                allowed=', '.join(sorted(states.sources_of(target))))
    binds = {uuid: (arqs[uuid].state, values)
             for uuid, values in patch.items() if values is not None}
    checked = {uuid: binding.check(context, arqs[uuid], values['hostname'],
                                   values['device_rp_uuid'])
               for uuid, (_state, values) in binds.items()}
    if binds:
        binding.submit(context, arq_obj.AcceleratorRequest.start_binds(
            context, binds), executor, checked=checked)
    unbind_failures = []
    for uuid, values in patch.items():
        if values is None:
            try:
                binding.unbind(context, arqs[uuid])
            except exception.UnbindFailed as e:
                unbind_failures.append(e)
    if unbind_failures:
        raise unbind_failures[0]


def delete(context, uuids=None, instance_uuid=None):
    """Delete ARQs, removing their mdevs first; handles are released."""
    if uuids is not None:
        arqs = arq_obj.AcceleratorRequest.list(context,
                                               filters={'uuid': uuids})
        missing = set(uuids) - {a.uuid for a in arqs}
        if missing:
            # Checked before any mdev goes: all or nothing.
            raise exception.AcceleratorRequestNotFound(
                uuid=', '.join(sorted(missing)))
    else:
        arqs = arq_obj.AcceleratorRequest.list(
            context, filters={'instance_uuid': instance_uuid})
    binding.remove_mdevs(context, arqs)
    arqs = arq_obj.AcceleratorRequest.destroy_many(
        context, uuids=uuids, instance_uuid=instance_uuid)
    LOG.info('Deleted accelerator requests %s', [a.uuid for a in arqs])
    return arqs
