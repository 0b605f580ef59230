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
"""Device profile: a named set of accelerator requirements."""

from cyborg.db import device_profile as profile_db
from cyborg.objects import base
from cyborg.objects import fields
from cyborg.objects import stored


@base.CyborgObjectRegistry.register
class DeviceProfile(stored.PersistentObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    _noun = 'device_profile'

    fields = dict(stored.PersistentObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'name': fields.StringField(),
        'description': fields.StringField(nullable=True),
        'groups': fields.ListOfDictOfNullableStringsField(),
        'enabled': fields.BooleanField(default=True),
    })

    @classmethod
    def get_by_name(cls, context, name):
        return cls._from_db_object(
            context, profile_db.get_by_name(context, name))

    @classmethod
    def destroy_many(cls, context, uuids=(), names=()):
        """Delete the named profiles, all or none.

        :returns: the deleted profiles as they were before deletion.
        """
        return cls._from_db_objects(context, profile_db.delete_many(
            context, uuids=uuids, names=names))

    def destroy(self, context):
        self.destroy_many(context, uuids=[self.uuid])
