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
"""``/v2/device_profiles``: named sets of accelerator requirements.

From 2.5 a profile's description and groups may be changed (PATCH) and a
profile may be disabled, so that no accelerator request is made from it,
and enabled again.
"""

from oslo_utils import uuidutils
import pecan
from webob import exc
from wsme import types as wtypes

from cyborg.api.controllers import base
from cyborg.api.controllers import collection
from cyborg.api.controllers import links
from cyborg.api.controllers import resource
from cyborg.api import microversion
from cyborg.api.schemas import device_profile as schema
from cyborg.api.schemas import parameter_types
from cyborg.api import validation
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import device_profile as profile_obj
from cyborg.policies import device_profile as rules
from cyborg import policy

COLLECTION = 'device_profiles'


class DeviceProfile(resource.Resource):
    """A device profile as the API shows it; ``enabled`` from 2.5."""

    _collection = COLLECTION
    _since = {'enabled': microversion.PROFILE_LIFECYCLE}

    uuid = wtypes.text
    name = wtypes.text
    description = wtypes.text
    groups = resource.ListOfStringDicts
    enabled = bool
    created_at = resource.Timestamp
    updated_at = resource.Timestamp
    links = [links.Link]


def _split(ident):
    """(uuids, names) of a uuid or name, or of a comma-separated list.

    :raises InvalidParameterValue: the list has an empty entry.
    """
    values = ident.split(',')
    if not all(values):
        raise exception.InvalidParameterValue(
            name=_('device profile'),
            reason=_('%r has an empty name in its list') % ident)
    uuids = [v.lower() for v in values if uuidutils.is_uuid_like(v)]
    names = [v for v in values if not uuidutils.is_uuid_like(v)]
    return uuids, names


def _spaced(time):
    """``time`` in ISO 8601 with a space between date and time, or None."""
    return None if time is None else time.isoformat(' ')


def _lifecycle_version(not_before_2_5):
    """Refuse a call of 2.5 below 2.5 with what answered it before."""
    if base.version() < microversion.PROFILE_LIFECYCLE:
        raise not_before_2_5


class DeviceProfilesController(collection.CollectionController):

    resource = DeviceProfile
    object_class = profile_obj.DeviceProfile
    key = COLLECTION
    list_rule = rules.GET_ALL
    show_rule = rules.GET_ONE
    query = schema.list_query
    sort_keys = schema.SORT_KEYS
    # POST /v2/device_profiles/{uuid_or_name}/enable and .../disable.
    _custom_actions = {'enable': ['POST'], 'disable': ['POST']}

    def _filters(self, ctx, params):
        """``name=a,b`` keeps the profiles with exactly one of the names."""
        if 'name' in params:
            return {'name': params['name'].split(',')}
        return {}

    def _find(self, ctx, ident):
        """By uuid, or by name from 2.2."""
        if uuidutils.is_uuid_like(ident):
            return self.object_class.get_by_uuid(ctx, ident.lower())
        if base.version() < microversion.PROFILE_BY_NAME:
            raise exception.NotAcceptable(reason=_(
                '%(ident)s is not a UUID; showing a device profile by name '
                'needs microversion %(version)s') % {
                    'ident': ident,
                    'version': microversion.PROFILE_BY_NAME})
        return self.object_class.get_by_name(ctx, ident)

    def _show(self, ctx, profile):
        """The profile under ``device_profile``.

        Before 2.6 its timestamps are spelt as the releases before ours
        spelt them here (only here): a space, not a ``T``, between the
        date and the time. An unset one is null, where they showed
        ``"None"``.
        """
        version = base.version()
        if version >= microversion.OWN_FORMATS:
            return {'device_profile': super()._show(ctx, profile)}
        return {'device_profile': DeviceProfile.render(
            profile, version, **{name: _spaced(profile[name])
                                 for name in ('created_at', 'updated_at')})}

    @pecan.expose('json')
    def post(self):
        """Create one profile; 201 with the profile."""
        ctx = base.context()
        policy.authorize(ctx, rules.CREATE, {})
        body = validation.body(pecan.request, schema.create)
        profile = profile_obj.DeviceProfile(
            ctx, **schema.profile_from_body(body))
        created = base.conductor().device_profile_create(ctx, profile)
        pecan.response.status = 201
        return DeviceProfile.render(created, base.version())

    @pecan.expose('json')
    def delete(self, ident=None):
        """Delete one profile, or ``?value=a,b``: all of them or none."""
        ctx = base.context()
        policy.authorize(ctx, rules.DELETE, {})
        if ident is None:
            ident = validation.query(pecan.request,
                                     schema.delete_query)['value']
        else:
            validation.query(pecan.request, parameter_types.no_query)
        uuids, names = _split(ident)
        base.conductor().device_profiles_delete(ctx, uuids=uuids,
                                                names=names)
        return base.empty(204)

    def _authorized(self, rule):
        """The request's context, allowed ``rule``; no query allowed."""
        ctx = base.context()
        policy.authorize(ctx, rule, {})
        validation.query(pecan.request, parameter_types.no_query)
        return ctx

    def _update(self, ctx, ident, values):
        """Have the conductor apply ``values`` to a profile."""
        profile = self._find(ctx, ident)
        return base.conductor().device_profile_update(ctx, profile.uuid,
                                                      values)

    @pecan.expose('json')
    def patch(self, ident):
        """Change the description or groups (2.5); 200 with the profile."""
        _lifecycle_version(exc.HTTPMethodNotAllowed(
            headers={'Allow': 'DELETE, GET'}))
        ctx = self._authorized(rules.UPDATE)
        values = schema.patch_values(validation.body(pecan.request,
                                                     schema.patch))
        return DeviceProfile.render(self._update(ctx, ident, values),
                                    base.version())

    @pecan.expose('json')
    def enable(self, ident):
        """Let accelerator requests be made from the profile (2.5); 204."""
        _lifecycle_version(exc.HTTPNotFound())
        self._update(self._authorized(rules.ENABLE), ident,
                     {'enabled': True})
        return base.empty(204)

    @pecan.expose('json')
    def disable(self, ident):
        """Make no more accelerator requests from the profile (2.5); 204.

        Requests made from it already keep their accelerators.
        """
        _lifecycle_version(exc.HTTPNotFound())
        self._update(self._authorized(rules.DISABLE), ident,
                     {'enabled': False})
        return base.empty(204)
