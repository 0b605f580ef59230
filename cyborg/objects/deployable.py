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
"""Deployable: a node of a device's tree that can be handed out."""

from cyborg.objects import base
from cyborg.objects import fields


@base.CyborgObjectRegistry.register
class Deployable(base.PersistentObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    _noun = 'deployable'

    fields = dict(base.PersistentObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'parent_id': fields.IntegerField(nullable=True),
        'root_id': fields.IntegerField(nullable=True),
        'name': fields.StringField(),
        'num_accelerators': fields.IntegerField(),
        'device_id': fields.IntegerField(),
        'rp_uuid': fields.UUIDField(nullable=True),
        'driver_name': fields.StringField(nullable=True),
        'bitstream_id': fields.UUIDField(nullable=True),
    })
