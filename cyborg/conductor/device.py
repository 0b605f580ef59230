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
"""Operator actions on devices: maintenance, quarantine release, programming.

Disabling a device (``maintaining``) reserves its whole inventory in
Placement so the scheduler stops picking it, while the accelerators
already in use stay attached; enabling it frees the inventory again. The
database keeps the status across the agent's later reports, so every
Placement sync after it keeps the reservation.
"""

from oslo_log import log

from cyborg.conductor import cyborg17_agents
from cyborg.conductor import health
from cyborg.conductor import inventory
from cyborg.conductor import programming
import cyborg.conf
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


def set_status(context, device_uuid, status):
    """Store the device's new status; returns the device.

    The caller syncs the device's host with Placement afterwards.
    """
    device = device_obj.Device.get_by_uuid(context, device_uuid)
    if device.status != status:
        device.status = status
        device.save(context)
        LOG.info('Device %(uuid)s on host %(host)s is now %(status)s',
                 {'uuid': device_uuid, 'host': device.hostname,
                  'status': status})
    return device


def release(context, device_uuid, owner):
    """End a device's quarantine (see :mod:`cyborg.conductor.health`).

    The device is quarantined again only when its host reports it
    unhealthy anew; one not quarantined is left as it is. The caller
    syncs the device's host with Placement afterwards.

    :returns: the device.
    :raises HostLeaseHeld: another conductor works on the device's host.
    """
    hostname = device_obj.Device.get_by_uuid(context, device_uuid).hostname
    with inventory.host_lease(context, hostname, owner):
        device = device_obj.Device.get_by_uuid(context, device_uuid)
        quarantined = device.quarantined_at is not None
        if quarantined:
            health.release(context, device, 'released by an operator')
    if quarantined:
        health.notify(context, [device])
    return device


def allocated(context, device):
    """How many attach handles of the device's deployables are in use."""
    return sum(
        len(handle_obj.AttachHandle.list(
            context, filters={'deployable_id': dep.id, 'in_use': True}))
        for dep in deployable_obj.Deployable.list(
            context, filters={'device_id': device.id}))


def program(context, deployable_uuid, image_uuid, agent=None):
    """Load a Glance bitstream into an FPGA deployable through its agent.

    Refused while any accelerator of the deployable, or of a deployable
    below it, is in use (loading a new bitstream would pull it from under
    its instance), and while it is being programmed already.

    This operator action is the only one that may update a card's shell
    (persistent firmware), and only with an image that declares itself a
    shell image (``shell_image=true``) while no function of the whole
    card is allocated: the agent is told whether it may
    (``allow_shell``). A bind never flashes a shell.

    :returns: the deployable, with the loaded ``bitstream_id``.
    :raises NotProgrammable: it is not an FPGA region.
    :raises ObjectInUse: an accelerator of it is in use.
    :raises DeployableProgramming: it is being programmed.
    """
    deployable = deployable_obj.Deployable.get_by_uuid(context,
                                                       deployable_uuid)
    device = device_obj.Device.get_by_id(context, deployable.device_id)
    in_use = allocated(context, device)
    if in_use:
        LOG.info('Device %(uuid)s has %(count)d allocated function(s): '
                 'programming %(name)s may not update its shell',
                 {'uuid': device.uuid, 'count': in_use,
                  'name': deployable.name})
    return programming.program(context, deployable, device,
                               agent or cyborg17_agents.HostAgents(),
                               timeout=CONF.bind_timeout,
                               bitstream_id=image_uuid,
                               allow_shell=not in_use)
