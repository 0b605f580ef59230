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
"""Versioned notifications: their event types, publishers and payloads.

A notification is data only: :mod:`cyborg.conductor.notifications` sends
it. Its payload goes out as the primitive of a versioned object, so a
consumer reads the payload's name and version before its fields; a change
to a payload's fields bumps its version (a new field: minor, a removed or
retyped one: major).

These objects are registered with :class:`NotificationObjectRegistry`,
apart from the objects that persist or cross RPC: nothing deserialises
them here, and their fingerprints are pinned by a test of their own.
"""

from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields as ovo_fields

from cyborg.objects import base
from cyborg.objects import fields


class NotificationObjectRegistry(ovo_base.VersionedObjectRegistry):
    """Keeps the notification objects out of the RPC objects' registry."""

    #: Every registered notification and payload class.
    notification_classes = []

    @classmethod
    def register_notification(cls, notification_cls):
        """Register a concrete notification or payload class."""
        # Makes the class's fields, without registering it with the
        # objects that RPC deserialises.
        cls.register_if(False)(notification_cls)
        cls.notification_classes.append(notification_cls)
        return notification_cls


class NotificationObject(base.CyborgObject):
    """Base of every notification object; it tracks no changes."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Nothing is saved: the changes oslo.versionedobjects tracks
        # would only make the primitive longer.
        self.obj_reset_changes(recursive=False)


class NotificationPriority(ovo_fields.Enum):
    INFO = 'info'
    ERROR = 'error'

    ALL = (INFO, ERROR)

    def __init__(self):
        super().__init__(valid_values=self.ALL)


class NotificationPriorityField(ovo_fields.BaseEnumField):
    AUTO_TYPE = NotificationPriority()


class NotificationPhase(ovo_fields.Enum):
    END = 'end'
    ERROR = 'error'

    ALL = (END, ERROR)

    def __init__(self):
        super().__init__(valid_values=self.ALL)


class NotificationPhaseField(ovo_fields.BaseEnumField):
    AUTO_TYPE = NotificationPhase()


class NotificationAction(ovo_fields.Enum):
    BIND = 'bind'
    UNBIND = 'unbind'
    CREATE = 'create'
    DELETE = 'delete'
    UPDATE = 'update'

    ALL = (BIND, UNBIND, CREATE, DELETE, UPDATE)

    def __init__(self):
        super().__init__(valid_values=self.ALL)


class NotificationActionField(ovo_fields.BaseEnumField):
    AUTO_TYPE = NotificationAction()


class NotificationSource(ovo_fields.Enum):
    CONDUCTOR = 'cyborg-conductor'

    ALL = (CONDUCTOR,)

    def __init__(self):
        super().__init__(valid_values=self.ALL)


class NotificationSourceField(ovo_fields.BaseEnumField):
    AUTO_TYPE = NotificationSource()


@NotificationObjectRegistry.register_notification
class EventType(NotificationObject):
    """``<object>.<action>[.<phase>]``, e.g. ``device_profile.create``."""

    # Version 1.0: Initial version
    # Version 1.1: action update
    VERSION = '1.1'

    fields = {
        'object': fields.StringField(),
        'action': NotificationActionField(),
        'phase': NotificationPhaseField(nullable=True, default=None),
    }

    def to_event_type(self):
        parts = [self.object, self.action]
        if self.obj_attr_is_set('phase') and self.phase is not None:
            parts.append(self.phase)
        return '.'.join(parts)


@NotificationObjectRegistry.register_notification
class Publisher(NotificationObject):
    """The service and host that send a notification."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'source': NotificationSourceField(),
        'host': fields.StringField(),
    }

    def to_publisher_id(self):
        return '%s:%s' % (self.source, self.host)


class NotificationBase(NotificationObject):
    """A notification: who sends what, how urgently, about what.

    Subclasses narrow ``payload`` to their payload class.
    """

    fields = {
        'priority': NotificationPriorityField(),
        'event_type': fields.ObjectField('EventType'),
        'publisher': fields.ObjectField('Publisher'),
    }

    def message(self):
        """(priority, publisher id, event type, payload primitive)."""
        return (self.priority, self.publisher.to_publisher_id(),
                self.event_type.to_event_type(),
                self.payload.obj_to_primitive())


class NotificationPayloadBase(NotificationObject):
    """A payload: its fields are those of the object it describes."""

    @classmethod
    def of(cls, source, **given):
        """The payload of ``source``; ``given`` values win over its own."""
        values = {name: getattr(source, name) for name in cls.fields
                  if name not in given}
        return cls(**values, **given)


# --- accelerator requests ----------------------------------------------------

@NotificationObjectRegistry.register_notification
class AcceleratorRequestPayload(NotificationPayloadBase):
    """An accelerator request as a bind or unbind left it."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'uuid': fields.UUIDField(),
        'state': fields.ARQStateField(),
        'device_profile_name': fields.StringField(),
        'device_profile_group_id': fields.IntegerField(),
        'hostname': fields.StringField(nullable=True),
        'device_rp_uuid': fields.UUIDField(nullable=True),
        'instance_uuid': fields.UUIDField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        'attach_handle_type': fields.StringField(),
    }


@NotificationObjectRegistry.register_notification
class AcceleratorRequestNotification(NotificationBase):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = dict(NotificationBase.fields, payload=fields.ObjectField(
        'AcceleratorRequestPayload'))


# --- devices -----------------------------------------------------------------

@NotificationObjectRegistry.register_notification
class DevicePayload(NotificationPayloadBase):
    """A device its host reported for the first time, or no longer."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'uuid': fields.UUIDField(),
        'type': fields.DeviceTypeField(),
        'vendor': fields.StringField(),
        'model': fields.StringField(),
        'hostname': fields.StringField(),
        'std_board_info': fields.StringField(nullable=True),
    }


@NotificationObjectRegistry.register_notification
class DeviceNotification(NotificationBase):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = dict(NotificationBase.fields,
                  payload=fields.ObjectField('DevicePayload'))


@NotificationObjectRegistry.register_notification
class DeviceHealthPayload(NotificationPayloadBase):
    """A device whose health or quarantine changed.

    ``accelerator_requests`` are those that hold an accelerator of the
    device, each ``{uuid, state, instance_uuid}``: a quarantine leaves
    them bound.
    """

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'uuid': fields.UUIDField(),
        'hostname': fields.StringField(),
        'health': fields.DeviceHealthField(nullable=True),
        'health_reasons': fields.ListOfStringsField(),
        'quarantined': fields.BooleanField(),
        'accelerator_requests': fields.ListOfDictOfNullableStringsField(),
    }


@NotificationObjectRegistry.register_notification
class DeviceHealthNotification(NotificationBase):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = dict(NotificationBase.fields,
                  payload=fields.ObjectField('DeviceHealthPayload'))


# --- device profiles ---------------------------------------------------------

@NotificationObjectRegistry.register_notification
class DeviceProfilePayload(NotificationPayloadBase):
    """A device profile created or deleted."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'uuid': fields.UUIDField(),
        'name': fields.StringField(),
        'description': fields.StringField(nullable=True),
        'groups': fields.ListOfDictOfNullableStringsField(),
    }


@NotificationObjectRegistry.register_notification
class DeviceProfileNotification(NotificationBase):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = dict(NotificationBase.fields,
                  payload=fields.ObjectField('DeviceProfilePayload'))
