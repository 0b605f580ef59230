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

from cyborg.db import programming as programming_db
from cyborg.objects import base
from cyborg.objects import fields
from cyborg.objects import stored


@base.CyborgObjectRegistry.register
class Deployable(stored.PersistentObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    _noun = 'deployable'

    fields = dict(stored.PersistentObject.fields, **{
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

    # FPGA regions being programmed (see cyborg.db.programming); the mark
    # is no field: the API does not show it.

    @staticmethod
    def start_programming(context, deployable_id, keep=None):
        """Mark the region and the deployables below it being programmed.

        :returns: the ids of the marked deployables.
        :raises ObjectInUse: an attach handle of them, but ``keep``, is
            in use.
        :raises DeployableProgramming: one of them is being programmed.
        """
        return programming_db.start(context, deployable_id, keep=keep)

    @staticmethod
    def finish_programming(context, deployable_id, bitstream_id=None):
        """Clear the mark; record ``bitstream_id`` on the region if given."""
        programming_db.finish(context, deployable_id,
                              bitstream_id=bitstream_id)

    @staticmethod
    def being_programmed(context, deployable_ids):
        """{id: since when} of those of the deployables being programmed."""
        return programming_db.being_programmed(context, deployable_ids)

    @staticmethod
    def expire_programming(context, before):
        """Clear the marks set before ``before``; returns their hosts."""
        return programming_db.expire(context, before)
