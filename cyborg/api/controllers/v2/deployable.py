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

from oslo_serialization import jsonutils
import pecan
from webob import exc
from wsme import types as wtypes

from cyborg.api.controllers import base
from cyborg.api.controllers import collection
from cyborg.api.controllers import links
from cyborg.api.controllers import resource
from cyborg.api.controllers.v2 import device as device_api
from cyborg.api import microversion
from cyborg.api.schemas import deployable as schema
from cyborg.api import validation
from cyborg.common import placement_names
from cyborg.objects import attribute as attribute_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.policies import deployable as rules
from cyborg import policy

COLLECTION = 'deployables'


class Deployable(resource.Resource):
    """A deployable as the API shows it.

    ``name`` is the name of its resource provider, ``<host>_<name>``, as
    the releases before ours named deployables. ``attributes_list`` holds
    the deployable's attributes as one-entry ``{key: value}`` dicts (before
    2.6 that list as a JSON string, as those releases showed it). From 2.9
    it shows its device's health.
    """

    _collection = COLLECTION
    _bookmark = True
    _since = {'health': microversion.DEVICE_HEALTH,
              'health_reasons': microversion.DEVICE_HEALTH,
              'quarantined': microversion.DEVICE_HEALTH}

    uuid = wtypes.text
    parent_id = int
    root_id = int
    name = wtypes.text
    num_accelerators = int
    device_id = int
    attributes_list = resource.ListOfStringDicts
    rp_uuid = wtypes.text
    driver_name = wtypes.text
    bitstream_id = wtypes.text
    health = wtypes.text
    health_reasons = [wtypes.text]
    quarantined = bool
    links = [links.Link]
    created_at = resource.Timestamp
    updated_at = resource.Timestamp


def _devices(ctx, filters):
    """{device id: device} of the devices that ``filters`` match."""
    return {device.id: device
            for device in device_obj.Device.list(ctx, filters=filters)}


class DeployablesController(collection.CollectionController):

    resource = Deployable
    object_class = deployable_obj.Deployable
    key = COLLECTION
    list_rule = rules.GET_ALL
    show_rule = rules.GET_ONE
    query = schema.list_query
    sort_keys = schema.SORT_KEYS
    legacy_filters = {'name': 'name'}

    def _legacy_filters(self, ctx, old):
        """``filters.field=name``: the name the API shows, host included.

        The value may split into host and name at any ``_``: the rows of
        each split are found in SQL, then the exact ones are kept.
        """
        if 'name' not in old:
            return {}
        value = old['name']
        splits = [(value[:i], value[i + 1:])
                  for i, char in enumerate(value) if char == '_']
        devices = _devices(ctx, filters={
            'hostname': sorted({host for host, _name in splits})})
        candidates = deployable_obj.Deployable.list(ctx, filters={
            'name': sorted({name for _host, name in splits}),
            'device_id': sorted(devices)}) if devices else []
        return {'id': [d.id for d in candidates
                       if placement_names.provider_name(
                           devices[d.device_id].hostname, d.name) == value]}

    def _render(self, ctx, deployables):
        """Deployables with their devices and attributes, a query for each."""
        attributes = {}
        devices = {}
        if deployables:
            for attr in attribute_obj.Attribute.list(
                    ctx, filters={'deployable_id': [d.id for d in
                                                    deployables]},
                    sort_key='id'):
                attributes.setdefault(attr.deployable_id, []).append(
                    {attr.key: attr.value})
            devices = _devices(ctx, filters={
                'id': sorted({d.device_id for d in deployables})})
        version = base.version()
        url = links.base_url()
        result = []
        for deployable in deployables:
            attributes_list = attributes.get(deployable.id, [])
            if version < microversion.OWN_FORMATS:
                attributes_list = jsonutils.dumps(attributes_list)
            device = devices[deployable.device_id]
            health = (device_api.health_view(device)
                      if version >= microversion.DEVICE_HEALTH else {})
            result.append(Deployable.render(
                deployable, version, url, attributes_list=attributes_list,
                name=placement_names.provider_name(
                    device.hostname, deployable.name), **health))
        return result

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
