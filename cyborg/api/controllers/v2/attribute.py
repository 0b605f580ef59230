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
"""``/v2/attributes``: key/value facts about deployables."""

from oslo_utils import uuidutils
import pecan
from wsme import types as wtypes

from cyborg.api.controllers import base
from cyborg.api.controllers import collection
from cyborg.api.controllers import links
from cyborg.api.controllers import resource
from cyborg.api.schemas import attribute as schema
from cyborg.api.schemas import parameter_types
from cyborg.api import validation
from cyborg.objects import attribute as attribute_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.policies import attribute as rules
from cyborg import policy

COLLECTION = 'attributes'


class Attribute(resource.Resource):
    """An attribute as the API shows it."""

    _collection = COLLECTION

    uuid = wtypes.text
    deployable_id = int
    key = wtypes.text
    value = wtypes.text
    created_at = resource.Timestamp
    updated_at = resource.Timestamp
    links = [links.Link]


def _deployable_id(ctx, ref):
    """The integer id of a deployable given by id or UUID."""
    if isinstance(ref, str) and uuidutils.is_uuid_like(ref):
        return deployable_obj.Deployable.get_by_uuid(ctx, ref.lower()).id
    return int(ref)


class AttributesController(collection.CollectionController):

    resource = Attribute
    object_class = attribute_obj.Attribute
    key = COLLECTION
    list_rule = rules.GET_ALL
    show_rule = rules.GET_ONE
    query = schema.list_query
    query_since = schema.list_query_since
    sort_keys = schema.SORT_KEYS

    def _filters(self, ctx, params):
        """``deployable_id`` by id, or (2.7) by UUID: none, an empty list."""
        filters = super()._filters(ctx, params)
        ref = filters.get('deployable_id')
        if ref is None:
            return filters
        if uuidutils.is_uuid_like(ref):
            filters['deployable_id'] = [
                d.id for d in deployable_obj.Deployable.list(
                    ctx, filters={'uuid': ref.lower()})]
        else:
            filters['deployable_id'] = int(ref)
        return filters

    @pecan.expose('json')
    def post(self):
        """Create an attribute; 201 with it."""
        ctx = base.context()
        policy.authorize(ctx, rules.CREATE, {})
        body = validation.body(pecan.request, schema.create)
        values = dict(body.get('attribute', body))
        values['deployable_id'] = _deployable_id(ctx,
                                                 values['deployable_id'])
        created = base.conductor().attribute_create(
            ctx, attribute_obj.Attribute(ctx, **values))
        pecan.response.status = 201
        return Attribute.render(created, base.version())

    @pecan.expose('json')
    def delete(self, uuid):
        ctx = base.context()
        policy.authorize(ctx, rules.DELETE, {})
        validation.query(pecan.request, parameter_types.no_query)
        base.conductor().attribute_delete(ctx, uuid.lower())
        return base.empty(204)
