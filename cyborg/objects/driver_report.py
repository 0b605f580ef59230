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
"""What an agent reports about its host: plain payloads, never stored.

Drivers build these; the agent sends a :class:`HostReport` to the
conductor, which turns it into rows. Deployables form a tree through
``parent_name`` (unique within a device); attach handles and attributes
belong to the deployable that lists them.
"""

from oslo_utils import versionutils

from cyborg.objects import base
from cyborg.objects import fields


@base.CyborgObjectRegistry.register
class AttributeReport(base.CyborgObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'key': fields.StringField(),
        'value': fields.StringField(),
    }


@base.CyborgObjectRegistry.register
class AttachHandleReport(base.CyborgObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'attach_type': fields.AttachTypeField(),
        'attach_info': fields.DictOfNullableStringsField(),
        # True when the host already uses it outside Cyborg.
        'in_use': fields.BooleanField(default=False),
    }


@base.CyborgObjectRegistry.register
class DeployableReport(base.CyborgObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'name': fields.StringField(),
        'parent_name': fields.StringField(nullable=True, default=None),
        'num_accelerators': fields.IntegerField(),
        'driver_name': fields.StringField(),
        'bitstream_id': fields.UUIDField(nullable=True, default=None),
        'attributes': fields.ListOfObjectsField('AttributeReport',
                                                default=[]),
        'attach_handles': fields.ListOfObjectsField('AttachHandleReport',
                                                    default=[]),
    }


@base.CyborgObjectRegistry.register
class ControlpathReport(base.CyborgObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'cpid_type': fields.ControlpathTypeField(),
        'cpid_info': fields.DictOfNullableStringsField(),
    }


@base.CyborgObjectRegistry.register
class DeviceReport(base.CyborgObject):
    # Version 1.0: Initial version
    # Version 1.1: health, health_reasons
    VERSION = '1.1'

    fields = {
        'type': fields.DeviceTypeField(),
        'vendor': fields.StringField(),
        'model': fields.StringField(),
        'std_board_info': fields.StringField(nullable=True, default=None),
        'vendor_board_info': fields.StringField(nullable=True,
                                                default=None),
        'controlpath_id': fields.ObjectField('ControlpathReport'),
        'deployables': fields.ListOfObjectsField('DeployableReport',
                                                 default=[]),
        # What the host shows of the device's health (see
        # cyborg.drivers.health); None (or a 1.0 report) says nothing.
        'health': fields.DeviceHealthField(nullable=True, default=None),
        'health_reasons': fields.ListOfStringsField(default=[]),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if versionutils.convert_version_to_tuple(target_version) < (1, 1):
            primitive.pop('health', None)
            primitive.pop('health_reasons', None)


@base.CyborgObjectRegistry.register
class HostReport(base.CyborgObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'hostname': fields.StringField(),
        'devices': fields.ListOfObjectsField('DeviceReport', default=[]),
    }
