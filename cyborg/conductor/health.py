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
"""Device health as the agents report it, and the quarantine it drives.

A device its host reports unhealthy, or unhealthy for new reasons, is
quarantined: Placement reserves its whole inventory
(:mod:`cyborg.conductor.placement_sync`), so nothing new lands on it,
while the accelerator requests that hold it keep it; the log and a
``device.health.update`` notification name them. A device reported
healthy again leaves quarantine once it has stayed healthy for ``[conductor]
quarantine_quiet_period`` seconds, checked on each report and by the
periodic tasks (:mod:`cyborg.conductor.reconcile`); an operator may
release it sooner (:mod:`cyborg.conductor.device`). Every change is made
under the host's inventory lease.
"""

import datetime

from oslo_log import log
from oslo_utils import timeutils

from cyborg.common import pci_address
from cyborg.conductor import notifications
import cyborg.conf
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import control_path as control_path_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg import states

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


def holders(context, device):
    """The accelerator requests that hold an accelerator of ``device``."""
    deployables = deployable_obj.Deployable.list(
        context, filters={'device_id': device.id})
    if not deployables:
        return []
    return arq_obj.AcceleratorRequest.list(
        context, filters={'deployable_id': [d.id for d in deployables]},
        sort_key='id')


def _now():
    # utcnow() without a zone, as a time override in tests gives it too.
    return timeutils.utcnow().replace(tzinfo=datetime.timezone.utc)


def _due(device, now):
    """Whether a quarantined device has been healthy long enough."""
    return (device.quarantined_at is not None and
            device.health == states.DEVICE_HEALTHY and
            device.health_changed_at is not None and
            now - device.health_changed_at >= datetime.timedelta(
                seconds=CONF.conductor.quarantine_quiet_period))


def _reported(host_report):
    """{PCI address: (health, reasons)} of the devices that say it."""
    reported = {}
    for device in host_report.devices:
        if device.obj_attr_is_set('health') and device.health is not None:
            address = pci_address.address_of(device.controlpath_id.cpid_info)
            reported[address] = (device.health, list(device.health_reasons))
    return reported


def _addresses(context, devices):
    """{device id: control path PCI address} of ``devices``."""
    if not devices:
        return {}
    return {cpid.device_id: pci_address.address_of(cpid.cpid_info)
            for cpid in control_path_obj.ControlpathID.list(
                context, filters={'device_id': [d.id for d in devices]})}


def _record(context, device, health, reasons, now):
    """Store a device's reported health; whether to tell of the change."""
    if health == device.health and reasons == device.health_reasons:
        return False
    before = device.health
    if health != before:
        device.health_changed_at = now
    device.health, device.health_reasons = health, reasons
    if health == states.DEVICE_UNHEALTHY:
        if device.quarantined_at is None:
            device.quarantined_at = now
        arqs = holders(context, device)
        LOG.warning('Device %(device)s of host %(host)s is unhealthy and '
                    'quarantined: %(reasons)s. Accelerator requests holding '
                    'it (instance): %(arqs)s',
                    {'device': device.uuid, 'host': device.hostname,
                     'reasons': '; '.join(reasons),
                     'arqs': ', '.join('%s (%s)' % (a.uuid, a.instance_uuid)
                                       for a in arqs) or 'none'})
    elif before is not None:
        LOG.info('Device %(device)s of host %(host)s is healthy again',
                 {'device': device.uuid, 'host': device.hostname})
    device.save(context)
    return before is not None or health != states.DEVICE_HEALTHY


def release(context, device, why):
    """End the device's quarantine; the caller holds its host's lease."""
    device.quarantined_at = None
    device.save(context)
    LOG.info('Device %(device)s of host %(host)s leaves quarantine: '
             '%(why)s', {'device': device.uuid, 'host': device.hostname,
                         'why': why})


def apply_report(context, hostname, host_report):
    """Store the health a host's report gives, under the host's lease.

    A report from an agent that says nothing of health (an older one)
    changes nothing and quarantines nothing.

    :returns: the devices whose health or quarantine changed, for
        :func:`notify` once the caller holds the lease no more.
    """
    reported = _reported(host_report)
    if not reported:
        return []
    devices = device_obj.Device.list(context, filters={'hostname': hostname})
    addresses = _addresses(context, devices)
    now = _now()
    changed = [device for device in devices
               if device.id in addresses and
               addresses[device.id] in reported and
               _record(context, device, *reported[addresses[device.id]],
                       now=now)]
    released = release_due(context, devices, now)
    return changed + [d for d in released if d not in changed]


def release_due(context, devices, now=None):
    """Release those of ``devices`` healthy for the quiet period.

    The caller holds their host's lease.

    :returns: the released devices.
    """
    now = now or _now()
    due = [device for device in devices if _due(device, now)]
    for device in due:
        release(context, device, 'healthy for the quiet period')
    return due


def notify(context, devices):
    """``device.health.update`` for each device, after the change."""
    for device in devices:
        notifications.device_health_changed(context, device,
                                            holders(context, device))


def recovered_hosts(context):
    """The hosts of the quarantined devices healthy for the quiet period."""
    now = _now()
    return sorted({device.hostname
                   for device in device_obj.Device.list_quarantined(context)
                   if _due(device, now)})
