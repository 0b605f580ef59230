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
"""Accelerator request (ARQ): one accelerator requested for an instance."""

from cyborg.db import accelerator_request as arq_db
from cyborg.objects import base
from cyborg.objects import fields
from cyborg import states


@base.CyborgObjectRegistry.register
class AcceleratorRequest(base.PersistentObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    _noun = 'accelerator_request'

    fields = dict(base.PersistentObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'uuid': fields.UUIDField(),
        'state': fields.ARQStateField(default='Initial'),
        'device_profile_id': fields.IntegerField(),
        'device_profile_name': fields.StringField(),
        'device_profile_group_id': fields.IntegerField(),
        'device_profile_group': fields.DictOfNullableStringsField(),
        'hostname': fields.StringField(nullable=True),
        'device_rp_uuid': fields.UUIDField(nullable=True),
        'instance_uuid': fields.UUIDField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        'attach_handle_id': fields.IntegerField(nullable=True),
        'deployable_id': fields.IntegerField(nullable=True),
        'attach_handle_type': fields.StringField(),
        'attach_handle_uuid': fields.UUIDField(nullable=True),
        'attach_handle_info': fields.DictOfNullableStringsField(),
    })

    _derived_fields = ('device_profile_name', 'attach_handle_type',
                       'attach_handle_uuid', 'attach_handle_info')

    @classmethod
    def _from_db_object(cls, context, db_row, obj=None):
        obj = super()._from_db_object(context, db_row, obj=obj)
        # A handle claimed while the bind is still running is not the
        # instance's yet: Nova sees it once the ARQ is Bound.
        handle = (db_row.attach_handle
                  if db_row.state != states.BIND_STARTED else None)
        obj.device_profile_name = db_row.device_profile.name
        obj.attach_handle_type = handle.attach_type if handle else ''
        obj.attach_handle_uuid = handle.uuid if handle else None
        obj.attach_handle_info = dict(handle.attach_info) if handle else {}
        obj.obj_reset_changes()
        return obj

    @classmethod
    def create_for_profile(cls, context, device_profile_name, project_id,
                           limit):
        """The ARQs a device profile asks for, new, in one transaction.

        :param limit: the most ARQs the profile may make.
        """
        return cls._from_db_objects(context, arq_db.create_for_profile(
            context, device_profile_name, project_id, limit))

    @classmethod
    def list_bind_started(cls, context, updated_before=None):
        """The ARQs being bound (unchanged since ``updated_before``)."""
        return cls._from_db_objects(context, arq_db.list_bind_started(
            context, updated_before=updated_before))

    @classmethod
    def destroy_many(cls, context, uuids=None, instance_uuid=None):
        """Delete by uuids (all or nothing) or by instance (idempotent).

        :returns: the deleted ARQs as they were before deletion.
        """
        return cls._from_db_objects(
            context, arq_db.delete_many(context, uuids=uuids,
                                        instance_uuid=instance_uuid))

    @classmethod
    def start_binds(cls, context, binds):
        """Move ARQs to BindStarted together, each from the state it had.

        :param binds: {uuid: (state seen, bind values)}.
        :returns: the BindStarted ARQs.
        :raises AcceleratorRequestInvalidState: one of them changed since
            it was seen; none moved.
        """
        return cls._from_db_objects(context,
                                    arq_db.start_binds(context, binds))

    def destroy(self, context):
        self.destroy_many(context, uuids=[self.uuid])

    def update_state(self, context, target, values=None, expected=None):
        """Move to ``target`` if the transition table allows it."""
        row = arq_db.update_state(context, self.uuid, target,
                                  values=values, expected=expected)
        self._from_db_object(context, row, obj=self)

    def unbind(self, context):
        """Release the handle and forget host, RP and instance."""
        self._from_db_object(context, arq_db.unbind(context, self.uuid),
                             obj=self)

    def claim_handle(self, context, deployable_id, finish=False):
        """Claim a handle of the deployable; the ARQ stays BindStarted.

        With ``finish``, the ARQ becomes Bound in the same transaction
        unless the handle is an MDEV one (see
        :func:`cyborg.db.accelerator_request.claim_handle`).

        :returns: whether the claim also bound the ARQ.
        """
        claim = arq_db.claim_handle(context, self.uuid, deployable_id,
                                    finish=finish)
        self._from_db_object(context, claim.arq, obj=self)
        return claim.bound

    def fail_bind(self, context):
        """Become BindFailed and release the claimed handle."""
        self._from_db_object(
            context, arq_db.bind_failed(context, self.uuid), obj=self)
