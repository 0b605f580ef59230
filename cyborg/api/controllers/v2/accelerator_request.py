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
"""``/v2/accelerator_requests``: one accelerator for one instance (ARQ).

Non-administrators see and touch only the ARQs of their own project; the
filter is part of the SQL query. Policy targets carry each ARQ's project.
"""

import pecan
from wsme import types as wtypes

from cyborg.api import auth
from cyborg.api.controllers import base
from cyborg.api.controllers import collection
from cyborg.api.controllers import links
from cyborg.api.controllers import resource
from cyborg.api import microversion
from cyborg.api.schemas import accelerator_request as schema
from cyborg.api.schemas import parameter_types
from cyborg.api import validation
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import accelerator_request as arq_obj
from cyborg.policies import accelerator_request as rules
from cyborg import policy
from cyborg import states

COLLECTION = 'accelerator_requests'
ARQ = arq_obj.AcceleratorRequest


#: The attach handle fields of an ARQ that shows no handle.
_NO_HANDLE = {'attach_handle_type': '', 'attach_handle_uuid': None,
              'attach_handle_info': {}}


class AcceleratorRequest(resource.Resource):
    """An accelerator request as the API shows it.

    Before 2.6 only a Bound ARQ shows its attach handle, as the releases
    before ours did; from 2.6 every ARQ that holds one shows it.
    """

    _collection = COLLECTION

    uuid = wtypes.text
    state = wtypes.text
    device_profile_name = wtypes.text
    device_profile_group_id = int
    hostname = wtypes.text
    device_rp_uuid = wtypes.text
    instance_uuid = wtypes.text
    project_id = wtypes.text
    attach_handle_type = wtypes.text
    attach_handle_uuid = wtypes.text
    attach_handle_info = resource.StringDict
    links = [links.Link]
    created_at = resource.Timestamp
    updated_at = resource.Timestamp

    @classmethod
    def render(cls, obj, version, url=None, **extra):
        """The ARQ at ``version``; see the class."""
        if version < microversion.OWN_FORMATS and obj.state != states.BOUND:
            extra = dict(_NO_HANDLE, **extra)
        return super().render(obj, version, url, **extra)


def _own(ctx, filters):
    """``filters`` limited to the caller's project unless an admin."""
    if not ctx.is_admin:
        filters['project_id'] = ctx.project_id
    return filters


def _owned(ctx, action, uuids):
    """Whose the ARQs of ``uuids`` are, each authorised for ``action``.

    :returns: the :class:`~cyborg.objects.accelerator_request.Owner` of
        each.
    :raises AcceleratorRequestNotFound: one of them does not exist, or
        belongs to another project and the caller is no administrator.
    """
    owners = ARQ.owners(ctx, uuids,
                        None if ctx.is_admin else ctx.project_id)
    missing = set(uuids) - {owner.uuid for owner in owners}
    if missing:
        raise exception.AcceleratorRequestNotFound(
            uuid=', '.join(sorted(missing)))
    _authorize_owners(ctx, action, {owner.project_id for owner in owners})
    return owners


def _authorize_owners(ctx, action, project_ids):
    """Authorise ``action`` on the objects of each of ``project_ids``."""
    for project_id in sorted(project_ids, key=str):
        policy.authorize(ctx, action, {'project_id': project_id})


def _check_resolved(ctx, instance):
    """Refuse while any ARQ of ``instance`` is still being bound."""
    pending = ARQ.list(ctx, filters=_own(ctx, {
        'instance_uuid': instance, 'state': schema.UNRESOLVED_STATES}),
        limit=1)
    if pending:
        raise exception.AcceleratorRequestsUnresolved(instance=instance)


class AcceleratorRequestsController(collection.CollectionController):

    resource = AcceleratorRequest
    object_class = ARQ
    key = 'arqs'
    list_rule = rules.GET_ALL
    show_rule = rules.GET_ONE
    query = schema.list_query
    query_since = schema.list_query_since
    sort_keys = schema.SORT_KEYS

    def _find(self, ctx, ident):
        """Another project's ARQ is not found, as one that does not exist."""
        arq = super()._find(ctx, ident)
        if not ctx.is_admin and arq.project_id != ctx.project_id:
            raise exception.AcceleratorRequestNotFound(uuid=ident)
        return arq

    def _target(self, ctx, arq=None):
        """The ARQ's project; for a list, the caller's own."""
        return {'project_id': arq.project_id if arq else ctx.project_id}

    def _filters(self, ctx, params):
        """By instance and, from 2.4, state, host and RP; own project.

        ``bind_state=resolved`` keeps resolved ARQs; with ``instance``
        it refuses (423) while any ARQ of the instance is unresolved.
        """
        filters = _own(ctx, {})
        for param, column in (('instance', 'instance_uuid'),
                              ('device_rp_uuid', 'device_rp_uuid')):
            if param in params:
                filters[column] = params[param].lower()
        if 'hostname' in params:
            filters['hostname'] = params['hostname']
        wanted_states = set(states.ALL_STATES)
        if 'state' in params:
            wanted_states = {params['state']}
        if 'bind_state' in params:
            wanted_states &= states.RESOLVED_STATES
            if 'instance' in params:
                _check_resolved(ctx, filters['instance_uuid'])
        if wanted_states != set(states.ALL_STATES):
            filters['state'] = sorted(wanted_states)
        return filters

    @pecan.expose('json')
    def post(self):
        """Create the ARQs a device profile asks for; 201."""
        ctx = base.context()
        policy.authorize(ctx, rules.CREATE, {'project_id': ctx.project_id})
        body = validation.body(pecan.request, schema.create)
        arqs = base.conductor().arq_create(ctx, body['device_profile_name'],
                                           ctx.project_id)
        pecan.response.status = 201
        return {'arqs': [AcceleratorRequest.render(arq, base.version())
                         for arq in arqs]}

    @pecan.expose('json')
    def patch(self, uuid=None):
        """Bind or unbind ARQs; 202.

        A bind that needs nothing but a PCI function is done when this
        answers; one that programs or makes an mdev goes on in the
        background.
        """
        ctx = base.context()
        if uuid is not None and base.version() >= microversion.PATCH_ONE:
            body = {uuid.lower(): validation.body(pecan.request,
                                                  schema.operations)}
        else:
            body = validation.body(pecan.request, schema.patch)
            if uuid is not None and set(body) != {uuid.lower()}:
                raise exception.InvalidParameterValue(
                    name=_('body'), reason=_('it must patch exactly the '
                                             'accelerator request %s') % uuid)
        patch = {arq_uuid.lower(): schema.patch_values(arq_uuid, ops,
                                                       base.version())
                 for arq_uuid, ops in body.items()}
        _owned(ctx, rules.UPDATE, patch)
        if any(values and 'project_id' in values
               for values in patch.values()) and not ctx.is_admin:
            raise exception.PolicyNotAuthorized(
                action=_('setting /project_id'))
        auth.require_service_token(ctx, _('Binding and unbinding '
                                          'accelerator requests'))
        base.conductor().arq_apply_patch(ctx, patch)
        return base.empty(202)

    @pecan.expose('json')
    def delete(self, uuid=None):
        """Delete ARQs: ``/{uuid}``, ``?arqs=u1,u2`` or ``?instance=``."""
        ctx = base.context()
        if uuid is not None:
            validation.query(pecan.request, parameter_types.no_query)
            params = {'arqs': uuid}
        else:
            params = validation.query(pecan.request, schema.delete_query)
        if ('arqs' in params) == ('instance' in params):
            raise exception.InvalidParameterValue(
                name=_('query'), reason=_('give either arqs or instance'))
        if 'arqs' in params:
            uuids = sorted({u.lower() for u in params['arqs'].split(',')})
            owners = _owned(ctx, rules.DELETE, uuids)
            # What is bound to an instance is Nova's to release.
            if any(owner.instance_uuid for owner in owners):
                auth.require_service_token(ctx, _(
                    'Deleting accelerator requests bound to an instance'))
            base.conductor().arq_delete(ctx, uuids=uuids)
        else:
            self._delete_instance(ctx, params['instance'].lower())
        return base.empty(204)

    @staticmethod
    def _delete_instance(ctx, instance):
        """Delete the instance's ARQs of the caller's project.

        Only an administrator's request reaches other projects' ARQs.
        Nova deletes them with the token of the user deleting the server
        (its project's, or an administrator's) and its service token
        beside it, so this is all Nova needs; a service account of its
        own, or a member of another project, deletes nothing, and gets
        the same answer whether the instance has ARQs or not.
        """
        arqs = ARQ.list(ctx, filters={'instance_uuid': instance})
        own = [arq for arq in arqs
               if ctx.is_admin or arq.project_id == ctx.project_id]
        # Nothing to delete is still the caller's own request.
        _authorize_owners(ctx, rules.DELETE,
                          {arq.project_id for arq in own} or
                          {ctx.project_id})
        auth.require_service_token(ctx, _('Deleting the accelerator '
                                          'requests of an instance'))
        if not own:
            return
        if len(own) == len(arqs):
            base.conductor().arq_delete(ctx, instance_uuid=instance)
        else:
            base.conductor().arq_delete(
                ctx, uuids=sorted(arq.uuid for arq in own))
