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
"""Field types of Cyborg's versioned objects."""

from oslo_versionedobjects import fields

from cyborg import states

BooleanField = fields.BooleanField
DateTimeField = fields.DateTimeField
DictOfNullableStringsField = fields.DictOfNullableStringsField
IntegerField = fields.IntegerField
ListOfDictOfNullableStringsField = fields.ListOfDictOfNullableStringsField
ListOfObjectsField = fields.ListOfObjectsField
ListOfStringsField = fields.ListOfStringsField
ObjectField = fields.ObjectField
StringField = fields.StringField
UUIDField = fields.UUIDField


class ARQState(fields.Enum):
    def __init__(self, **kwargs):
        super().__init__(valid_values=states.ALL_STATES, **kwargs)


class ARQStateField(fields.BaseEnumField):
    AUTO_TYPE = ARQState()


class DeviceType(fields.Enum):
    def __init__(self, **kwargs):
        super().__init__(valid_values=states.DEVICE_TYPES, **kwargs)


class DeviceTypeField(fields.BaseEnumField):
    AUTO_TYPE = DeviceType()


class DeviceStatus(fields.Enum):
    def __init__(self, **kwargs):
        super().__init__(valid_values=states.DEVICE_STATUSES, **kwargs)


class DeviceStatusField(fields.BaseEnumField):
    AUTO_TYPE = DeviceStatus()


class DeviceHealth(fields.Enum):
    def __init__(self, **kwargs):
        super().__init__(valid_values=states.DEVICE_HEALTHS, **kwargs)


class DeviceHealthField(fields.BaseEnumField):
    AUTO_TYPE = DeviceHealth()


class AttachType(fields.Enum):
    def __init__(self, **kwargs):
        super().__init__(valid_values=states.ATTACH_TYPES, **kwargs)


class AttachTypeField(fields.BaseEnumField):
    AUTO_TYPE = AttachType()


class ControlpathType(fields.Enum):
    def __init__(self, **kwargs):
        super().__init__(valid_values=states.CPID_TYPES, **kwargs)


class ControlpathTypeField(fields.BaseEnumField):
    AUTO_TYPE = ControlpathType()
