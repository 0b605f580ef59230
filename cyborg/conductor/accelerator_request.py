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

A bind is checked in the RPC call (states, and that each resource provider
is a deployable of the named host that fits the ARQ's group). One that
needs nothing but a PCI handle is then done in the call, in one
transaction; one that loads a bitstream or makes an mdev moves to
BindStarted, and :mod:`cyborg.conductor.binding` finishes it in the
conductor's executor. Unbind and delete release handles and mdevs here, in
the RPC call.
"""

from oslo_log import log

from cyborg.conductor import binding
from cyborg.conductor import unbinding
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
    """Validate a bind/unbind patch, do the binds, do the unbinds.

    The ARQs and the deployables the binds name are read at once, and
    every ARQ is checked before any changes, so a bad entry leaves all of
    them as they were. The binds start together, in one transaction that
    only moves each ARQ from the state it was checked in: if a concurrent
    request changed any of them meanwhile, none moves. Binds that need no
    more than a PCI handle end in that transaction; the others finish in
    the background on ``executor`` (:func:`cyborg.conductor.binding.start`).
    Unbinds finish here; unbinding an Unbound ARQ changes nothing and
    succeeds.

    :param patch: {arq_uuid: bind values or None to unbind}.
    :raises AcceleratorRequestNotFound: no ARQ has one of the uuids.
    :raises AcceleratorRequestInvalidState: an ARQ cannot move that way;
        nothing changed.
    :raises BindRefused: a bind names a resource provider that no
        deployable of its host has, or one that cannot serve the ARQ's
        group; nothing changed.
    :raises UnbindFailed: an unbind could not release its mdev (the other
        entries are done; that ARQ is UnbindFailed and may be unbound
        again).
    """
    arqs, targets = arq_obj.AcceleratorRequest.load_patch(
        context, list(patch), {values['device_rp_uuid']
                               for values in patch.values() if values})
    for uuid in patch:
        if uuid not in arqs:
            raise exception.AcceleratorRequestNotFound(uuid=uuid)
    binds = {uuid: (arqs[uuid], values)
             for uuid, values in patch.items() if values is not None}
    # One released already is left alone: a release retried after its
    # answer was lost succeeds, as it did in 17.0.0.
    unbinds = [uuid for uuid, values in patch.items()
               if values is None and arqs[uuid].state != states.UNBOUND]
    for uuid in [*binds, *unbinds]:
        target = states.BIND_STARTED if uuid in binds else states.UNBOUND
        if not states.can_transition(arqs[uuid].state, target):
            raise exception.AcceleratorRequestInvalidState(
                uuid=uuid, state=arqs[uuid].state,
                allowed=', '.join(sorted(states.sources_of(target))))
    try:
        checked = {uuid: binding.check(context, arq, values['hostname'],
                                       values['device_rp_uuid'], targets)
                   for uuid, (arq, values) in binds.items()}
    except exception.BindRefused as e:
        # Nova fails the boot saying only that the bind failed.
        LOG.warning('Bind refused: %s', e)
        raise
    if binds:
        binding.start(context, binds, checked, executor)
    unbind_failures = []
    for uuid in unbinds:
        try:
            unbinding.unbind(context, arqs[uuid])
        except exception.UnbindFailed as e:
            unbind_failures.append(e)
    if unbind_failures:
        raise unbind_failures[0]


def delete(context, uuids=None, instance_uuid=None):
    """Delete ARQs, removing their mdevs first; handles are released.

    :returns: the uuids of the ARQs deleted.
    """
    holders = arq_obj.AcceleratorRequest.holders(
        context, uuids=uuids, instance_uuid=instance_uuid)
    if uuids is not None:
        missing = set(uuids) - {h.uuid for h in holders}
        if missing:
            # Checked before any mdev goes: all or nothing.
            raise exception.AcceleratorRequestNotFound(
                uuid=', '.join(sorted(missing)))
    unbinding.remove_mdevs(context, holders)
    deleted = arq_obj.AcceleratorRequest.destroy_many(
        context, uuids=uuids, instance_uuid=instance_uuid)
    LOG.info('Deleted accelerator requests %s', deleted)
    return deleted
