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
"""``/v2/deployables``: the parts of devices that are handed out."""

import pecan
from webob import exc
from wsme import types as wtypes

from cyborg.api.controllers import base
from cyborg.api.schemas import deployable as schema
from cyborg.api import validation
from cyborg.objects import attribute as attribute_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.policies import deployable as rules
from cyborg import policy

COLLECTION = 'deployables'


class Deployable(base.Resource):
    """A deployable as the API shows it.

    ``attributes_list`` holds the deployable's attributes as one-entry
    ``{key: value}`` dicts, loaded for a whole page in one query.
    """

    _collection = COLLECTION
    _bookmark = True

    uuid = wtypes.text
    parent_id = int
    root_id = int
    name = wtypes.text
    num_accelerators = int
    device_id = int
    attributes_list = base.ListOfStringDicts
    rp_uuid = wtypes.text
    driver_name = wtypes.text
    bitstream_id = wtypes.text
    links = [base.Link]
    created_at = base.Timestamp
    updated_at = base.Timestamp


class DeployablesController(base.CollectionController):

    resource = Deployable
    object_class = deployable_obj.Deployable
    key = COLLECTION
    list_rule = rules.GET_ALL
    show_rule = rules.GET_ONE
    query = schema.list_query
    sort_keys = schema.SORT_KEYS
    legacy_filters = {'name': 'name'}

    def _render(self, ctx, deployables):
        """Deployables with their attributes, in one query for all."""
        attributes = {}
        if deployables:
            for attr in attribute_obj.Attribute.list(
                    ctx, filters={'deployable_id': [d.id for d in
                                                    deployables]},
                    sort_key='id'):
                attributes.setdefault(attr.deployable_id, []).append(
                    {attr.key: attr.value})
        return [Deployable.render(deployable, base.version(),
                                  attributes_list=attributes.get(
                                      deployable.id, []))
                for deployable in deployables]

    @pecan.expose('json')
    def patch(self, uuid, action, again=None):
        """``/{uuid}/program``: program an FPGA, return the deployable.

        openstacksdk (and so the ``openstack`` CLI) appends the uuid once
        more, ``/{uuid}/program/{uuid}``; that is accepted too.
        """
        if action != 'program' or again not in (None, uuid):
            raise exc.HTTPNotFound()
        ctx = base.context()
        policy.authorize(ctx, rules.PROGRAM, {})
        body = validation.body(pecan.request, schema.program)
        deployable = deployable_obj.Deployable.get_by_uuid(ctx, uuid.lower())
        image_uuid = body[0]['value'][0]['image_uuid'].lower()
        programmed = base.conductor().deployable_program(
            ctx, deployable.uuid, image_uuid)
        return self._render(ctx, [programmed])[0]
