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
"""The conductor's versioned notifications, sent once a change is committed.

Each function here is called after the transaction that made the change,
never inside it, and only reports: a notification that cannot be sent is
logged, and the operation it reports stands. While no notification driver
is configured (:func:`cyborg.common.rpc.init_notifier`) nothing is built.
The notifications are listed in ``doc/source/admin/notifications.rst``.
"""

from oslo_log import log

from cyborg.common import rpc
import cyborg.conf
from cyborg.objects import notification as n_obj

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)

_INFO = n_obj.NotificationPriority.INFO
_ERROR = n_obj.NotificationPriority.ERROR


def _send(context, notification_cls, obj, action, phase, payload,
          priority=_INFO):
    """Send one notification; ``payload`` is a callable that builds it."""
    if rpc.NOTIFIER is None:
        return
    event_type = n_obj.EventType(object=obj, action=action, phase=phase)
    try:
        notification = notification_cls(
            priority=priority, event_type=event_type,
            publisher=n_obj.Publisher(
                source=n_obj.NotificationSource.CONDUCTOR, host=CONF.host),
            payload=payload())
        priority, publisher_id, name, primitive = notification.message()
        notifier = rpc.get_notifier(publisher_id)
        getattr(notifier, priority)(context, name, primitive)
    except Exception:
        # The change is committed: a lost notification must not undo it
        # nor fail the operation that made it.
        LOG.exception('Notification %s could not be sent',
                      event_type.to_event_type())


# --- accelerator requests ----------------------------------------------------

def _arq(context, action, phase, payload, priority=_INFO):
    _send(context, n_obj.AcceleratorRequestNotification,
          'accelerator_request', action, phase, payload, priority)


def arq_bound(context, arq):
    """``accelerator_request.bind.end``: ``arq`` is Bound."""
    _arq(context, n_obj.NotificationAction.BIND, n_obj.NotificationPhase.END,
         lambda: n_obj.AcceleratorRequestPayload.of(arq))


def arq_bind_failed(context, arq):
    """``accelerator_request.bind.error`` (ERROR): ``arq`` is BindFailed."""
    _arq(context, n_obj.NotificationAction.BIND,
         n_obj.NotificationPhase.ERROR,
         lambda: n_obj.AcceleratorRequestPayload.of(arq), priority=_ERROR)


def arq_unbound(context, arq, hostname, device_rp_uuid, instance_uuid):
    """``accelerator_request.unbind.end``: ``arq`` is Unbound.

    The ARQ no longer names what it was bound to: the payload does, from
    the host, resource provider and instance given.
    """
    _arq(context, n_obj.NotificationAction.UNBIND,
         n_obj.NotificationPhase.END,
         lambda: n_obj.AcceleratorRequestPayload.of(
             arq, hostname=hostname, device_rp_uuid=device_rp_uuid,
             instance_uuid=instance_uuid))


# --- devices -----------------------------------------------------------------

def devices_changed(context, hostname, added, removed):
    """``device.create`` and ``device.delete``, one per device.

    :param added: the devices a report added (objects or rows with the
        fields of :class:`cyborg.objects.notification.DevicePayload` but
        ``hostname``).
    :param removed: the devices a report removed, likewise.
    """
    for action, devices in ((n_obj.NotificationAction.CREATE, added),
                            (n_obj.NotificationAction.DELETE, removed)):
        for device in devices:
            _send(context, n_obj.DeviceNotification, 'device', action, None,
                  lambda device=device: n_obj.DevicePayload.of(
                      device, hostname=hostname))


def device_health_changed(context, device, arqs):
    """``device.health.update``: the device's health or quarantine changed.

    :param arqs: the accelerator requests that hold the device.
    """
    _send(context, n_obj.DeviceHealthNotification, 'device.health',
          n_obj.NotificationAction.UPDATE, None,
          lambda: n_obj.DeviceHealthPayload.of(
              device, quarantined=device.quarantined_at is not None,
              accelerator_requests=[
                  {'uuid': arq.uuid, 'state': arq.state,
                   'instance_uuid': arq.instance_uuid} for arq in arqs]))


# --- device profiles ---------------------------------------------------------

def _profiles(context, action, profiles):
    for profile in profiles:
        _send(context, n_obj.DeviceProfileNotification, 'device_profile',
              action, None,
              lambda profile=profile: n_obj.DeviceProfilePayload.of(profile))


def device_profile_created(context, profile):
    """``device_profile.create``."""
    _profiles(context, n_obj.NotificationAction.CREATE, [profile])


def device_profiles_deleted(context, profiles):
    """``device_profile.delete``, one per profile."""
    _profiles(context, n_obj.NotificationAction.DELETE, profiles)
