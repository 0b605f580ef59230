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
"""``/v2/device_profiles``: named sets of accelerator requirements."""

from oslo_utils import uuidutils
import pecan
from wsme import types as wtypes

from cyborg.api.controllers import base
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


class DeviceProfile(base.Resource):
    """A device profile as the API shows it."""

    _collection = COLLECTION

    uuid = wtypes.text
    name = wtypes.text
    description = wtypes.text
    groups = base.ListOfStringDicts
    created_at = base.Timestamp
    updated_at = base.Timestamp
    links = [base.Link]


def _split(ident):
    """(uuids, names) of a uuid or name, or of a comma-separated list."""
    values = ident.split(',')
    uuids = [v.lower() for v in values if uuidutils.is_uuid_like(v)]
    names = [v for v in values if not uuidutils.is_uuid_like(v)]
    return uuids, names


class DeviceProfilesController(base.CollectionController):

    resource = DeviceProfile
    object_class = profile_obj.DeviceProfile
    key = COLLECTION
    list_rule = rules.GET_ALL
    show_rule = rules.GET_ONE
    query = schema.list_query
    sort_keys = schema.SORT_KEYS

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
        return {'device_profile': super()._show(ctx, profile)}

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
