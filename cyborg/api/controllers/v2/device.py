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
"""``/v2/devices``: physical accelerator cards found on hosts."""

import pecan
from webob import exc
from wsme import types as wtypes

from cyborg.api.controllers import base
from cyborg.api import microversion
from cyborg.api.schemas import device as schema
from cyborg.api.schemas import parameter_types
from cyborg.api import validation
from cyborg.objects import device as device_obj
from cyborg.policies import device as rules
from cyborg import policy

COLLECTION = 'devices'

_ACTION_RULES = {'enable': rules.ENABLE, 'disable': rules.DISABLE}


class Device(base.Resource):
    """A device as the API shows it; ``status`` from 2.3."""

    _collection = COLLECTION
    _since = {'status': microversion.DEVICE_STATUS}

    uuid = wtypes.text
    type = wtypes.text
    vendor = wtypes.text
    model = wtypes.text
    std_board_info = wtypes.text
    vendor_board_info = wtypes.text
    hostname = wtypes.text
    status = wtypes.text
    links = [base.Link]
    created_at = base.Timestamp
    updated_at = base.Timestamp


class DevicesController(base.CollectionController):

    resource = Device
    object_class = device_obj.Device
    key = COLLECTION
    list_rule = rules.GET_ALL
    show_rule = rules.GET_ONE
    query = schema.list_query
    sort_keys = schema.SORT_KEYS
    # Older releases took filters.field pairs here; only paging applied.
    legacy_filters = {}

    def _filters(self, ctx, params):
        """Exact matches; ``vendor`` with or without ``0x`` either way.

        Drivers of the releases before ours stored some vendors as
        ``0x8086``, others as ``8086``; a filter finds both.
        """
        filters = super()._filters(ctx, params)
        if 'vendor' in filters:
            vendor = filters['vendor']
            if vendor[:2].lower() == '0x':
                vendor = vendor[2:]
            filters['vendor'] = [vendor, '0x' + vendor]
        return filters

    @pecan.expose('json')
    def post(self, uuid, action):
        """``/{uuid}/enable`` and ``/{uuid}/disable``; 204."""
        if action not in schema.ACTIONS:
            raise exc.HTTPNotFound()
        ctx = base.context()
        policy.authorize(ctx, _ACTION_RULES[action], {})
        validation.query(pecan.request, parameter_types.no_query)
        device = device_obj.Device.get_by_uuid(ctx, uuid.lower())
        base.conductor().device_set_status(ctx, device.uuid,
                                           schema.ACTIONS[action])
        return base.empty(204)
