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

import datetime
import typing

from cyborg.db import accelerator_request as arq_db
from cyborg.objects import base
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.objects import fields
from cyborg.objects import nova_event as event_obj
from cyborg.objects import stored
from cyborg import states


class BindTarget(typing.NamedTuple):
    """What the checks of a bind need of a resource provider's deployable."""

    deployable: deployable_obj.Deployable
    #: Its device.
    device: device_obj.Device
    #: (key, value) of its attributes.
    attributes: list
    #: Since when it is being programmed (see :mod:`cyborg.db.programming`),
    #: or None.
    programming_since: typing.Optional[datetime.datetime]
    #: Whether a handle of it is an MDEV one.
    mdev: bool


class Owner(typing.NamedTuple):
    """Whose an ARQ is: what the API checks before changing it."""

    uuid: str
    project_id: typing.Optional[str]
    instance_uuid: typing.Optional[str]


class Holder(typing.NamedTuple):
    """An ARQ and the handle it holds: what deleting it needs first."""

    uuid: str
    hostname: typing.Optional[str]
    attach_handle_id: typing.Optional[int]
    #: The handle's type; '' without a handle.
    attach_handle_type: str


def _bind_targets(context, rows):
    return {rp_uuid: BindTarget(
        deployable_obj.Deployable._from_db_object(context, row.deployable),
        device_obj.Device._from_db_object(context, row.device),
        row.attributes, row.deployable.programming_since, row.mdev)
        for rp_uuid, row in rows.items()}


@base.CyborgObjectRegistry.register
class AcceleratorRequest(stored.PersistentObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    _noun = 'accelerator_request'

    fields = dict(stored.PersistentObject.fields, **{
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

    @staticmethod
    def destroy_many(context, uuids=None, instance_uuid=None):
        """Delete by uuids (all or nothing) or by instance (idempotent).

        :returns: the uuids of the ARQs deleted.
        """
        return [row.uuid for row in arq_db.delete_many(
            context, uuids=uuids, instance_uuid=instance_uuid)]

    @staticmethod
    def holders(context, uuids=None, instance_uuid=None):
        """The :class:`Holder` of each ARQ of ``uuids`` or of an instance."""
        return [Holder(row.uuid, row.hostname, row.attach_handle_id,
                       row.attach_handle_type or '')
                for row in arq_db.holders(context, uuids=uuids,
                                          instance_uuid=instance_uuid)]

    @staticmethod
    def owners(context, uuids, project_id=None):
        """The :class:`Owner` of each ARQ of ``uuids`` found.

        :param project_id: find that project's ARQs only; None, any
            project's.
        """
        return [Owner(*row) for row in arq_db.owners(context, uuids,
                                                     project_id)]

    @classmethod
    def load_patch(cls, context, uuids, rp_uuids):
        """The ARQs of a bind/unbind patch and the targets of its binds.

        Read in one transaction.

        :returns: ({uuid: ARQ} of those found, {rp_uuid:
            :class:`BindTarget`} of the deployables found).
        """
        arqs, targets = arq_db.load_patch(context, uuids, rp_uuids)
        return ({uuid: cls._from_db_object(context, row)
                 for uuid, row in arqs.items()},
                _bind_targets(context, targets))

    @staticmethod
    def bind_targets(context, rp_uuids):
        """{rp_uuid: :class:`BindTarget`} of the deployables found."""
        return _bind_targets(context, arq_db.bind_targets(context, rp_uuids))

    @classmethod
    def start_binds(cls, context, binds, claims=None, hold=0):
        """Move ARQs to BindStarted together; bind those of ``claims`` now.

        In one transaction (see
        :func:`cyborg.db.accelerator_request.start_binds`). The ARQs given
        are changed as the database was: BindStarted with the bind's
        values, those of ``claims`` Bound with the handle they claimed
        (or, holding an MDEV handle, still BindStarted). Their
        ``updated_at`` is not read back.

        :param binds: {uuid: (the ARQ as it was seen, bind values)}.
        :param claims: {uuid: deployable id} of binds to finish now.
        :param hold: seconds the events are held for the caller to send.
        :returns: the :class:`~cyborg.objects.nova_event.NovaEvent`
            recorded.
        :raises AcceleratorRequestInvalidState: one of them changed since
            it was seen; none moved.
        :raises AttachHandleUnavailable: one of ``claims`` found no handle;
            none moved.
        :raises DeployableProgramming: one of ``claims`` is on a region
            being programmed; none moved.
        """
        claims = claims or {}
        outcomes, events = arq_db.start_binds(
            context, {uuid: (arq.state, values)
                      for uuid, (arq, values) in binds.items()},
            claims=claims, hold=hold)
        for uuid, (arq, values) in binds.items():
            for key, value in values.items():
                setattr(arq, key, value)
            arq.state = states.BIND_STARTED
            if uuid in outcomes:
                arq._took(outcomes[uuid], claims[uuid])
            arq.obj_reset_changes()
        return event_obj.NovaEvent._from_db_objects(context, events)

    def destroy(self, context):
        self.destroy_many(context, uuids=[self.uuid])

    def update_state(self, context, target, values=None, expected=None):
        """Move to ``target`` if the transition table allows it."""
        row = arq_db.update_state(context, self.uuid, target,
                                  values=values, expected=expected)
        self._from_db_object(context, row, obj=self)

    def unbind(self, context):
        """Release the handle and forget host, RP and instance."""
        self._let_go(arq_db.unbind(context, self.uuid), states.UNBOUND,
                     arq_db.UNBIND_VALUES)

    def _let_go(self, updated_at, state, values=None):
        """Be in ``state``, holding no handle, as the database now is."""
        for key, value in dict(values or {}, updated_at=updated_at,
                               state=state,
                               attach_handle_id=None, deployable_id=None,
                               attach_handle_type='', attach_handle_uuid=None,
                               attach_handle_info={}).items():
            setattr(self, key, value)
        self.obj_reset_changes()

    def claim_handle(self, context, deployable_id, finish=False):
        """Claim a handle of the deployable; the ARQ stays BindStarted.

        With ``finish``, the ARQ becomes Bound in the same transaction
        unless the handle is an MDEV one (see
        :func:`cyborg.db.accelerator_request.claim_handle`).

        :returns: whether the claim also bound the ARQ.
        """
        claim = arq_db.claim_handle(context, self.uuid, deployable_id,
                                    finish=finish)
        self._took(claim, deployable_id)
        self.obj_reset_changes()
        return claim.bound

    def _took(self, claim, deployable_id):
        """Hold what a claim gave; shown once the claim bound the ARQ."""
        self.attach_handle_id = claim.handle.id
        self.deployable_id = deployable_id
        if claim.bound:
            self.state = states.BOUND
            self.attach_handle_type = claim.handle.attach_type
            self.attach_handle_uuid = claim.handle.uuid
            self.attach_handle_info = dict(claim.handle.attach_info)

    def fail_bind(self, context):
        """Become BindFailed and release the claimed handle."""
        self._let_go(arq_db.bind_failed(context, self.uuid),
                     states.BIND_FAILED)
