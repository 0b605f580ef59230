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
"""Control path id: how the host reaches a device (e.g. its PCI PF)."""

from cyborg.objects import base
from cyborg.objects import fields
from cyborg.objects import stored


@base.CyborgObjectRegistry.register
class ControlpathID(stored.PersistentObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    _noun = 'controlpath_id'

    fields = dict(stored.PersistentObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'device_id': fields.IntegerField(),
        'cpid_type': fields.ControlpathTypeField(),
        'cpid_info': fields.DictOfNullableStringsField(),
    })
