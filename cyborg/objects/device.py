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
"""Device: a physical card found on a host."""

from oslo_utils import versionutils

from cyborg.db import device as device_db
from cyborg.objects import base
from cyborg.objects import fields
from cyborg.objects import stored


@base.CyborgObjectRegistry.register
class Device(stored.PersistentObject):
    # Version 1.0: Initial version
    # Version 1.1: vanished_at
    # Version 1.2: health, health_reasons, health_changed_at, quarantined_at
    VERSION = '1.2'

    _noun = 'device'

    fields = dict(stored.PersistentObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'type': fields.DeviceTypeField(),
        'vendor': fields.StringField(),
        'model': fields.StringField(),
        'std_board_info': fields.StringField(nullable=True),
        'vendor_board_info': fields.StringField(nullable=True),
        'hostname': fields.StringField(),
        'status': fields.DeviceStatusField(default='enabled'),
        # Set while the host no longer reports the device but an ARQ
        # still holds one of its accelerators.
        'vanished_at': fields.DateTimeField(nullable=True, default=None),
        # What the host's agent last said of the device's health (None
        # until one that reports health does), and why it is not healthy;
        # see cyborg.conductor.health.
        'health': fields.DeviceHealthField(nullable=True, default=None),
        'health_reasons': fields.ListOfStringsField(default=[]),
        'health_changed_at': fields.DateTimeField(nullable=True,
                                                  default=None),
        # Set while the device is quarantined: its inventory is reserved.
        'quarantined_at': fields.DateTimeField(nullable=True, default=None),
    })

    @classmethod
    def list_quarantined(cls, context):
        """Every quarantined device, oldest quarantine first."""
        return cls._from_db_objects(context, device_db.quarantined(context))

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if versionutils.convert_version_to_tuple(target_version) < (1, 1):
            primitive.pop('vanished_at', None)
        if versionutils.convert_version_to_tuple(target_version) < (1, 2):
            for name in ('health', 'health_reasons', 'health_changed_at',
                         'quarantined_at'):
                primitive.pop(name, None)
