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
"""Attach handle: the PCI function or mdev an instance gets."""

from cyborg.db import attach_handle as handle_db
from cyborg.objects import base
from cyborg.objects import fields
from cyborg.objects import stored


@base.CyborgObjectRegistry.register
class AttachHandle(stored.PersistentObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    _noun = 'attach_handle'

    fields = dict(stored.PersistentObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'deployable_id': fields.IntegerField(),
        'cpid_id': fields.IntegerField(),
        'in_use': fields.BooleanField(default=False),
        'attach_type': fields.AttachTypeField(),
        'attach_info': fields.DictOfNullableStringsField(),
    })

    @staticmethod
    def free_unheld(context, handle_id):
        """Free an in-use handle that no ARQ holds; False if one does now."""
        return handle_db.free_unheld(context, handle_id)
