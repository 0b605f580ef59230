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
from cyborg.api.controllers import collection
from cyborg.api.controllers import links
from cyborg.api.controllers import resource
from cyborg.api import microversion
from cyborg.api.schemas import device as schema
from cyborg.api.schemas import parameter_types
from cyborg.api import validation
from cyborg.objects import device as device_obj
from cyborg.policies import device as rules
from cyborg import policy
from cyborg import states

COLLECTION = 'devices'

_ACTION_RULES = {'enable': rules.ENABLE, 'disable': rules.DISABLE}

#: The reason a vanished device shows (it keeps the last one reported).
VANISHED = 'the host no longer reports the device'


def health_view(device):
    """``health``, ``health_reasons`` and ``quarantined`` of a device.

    A device its host no longer reports, kept while accelerator requests
    hold it, is unhealthy for that reason; one no agent said anything of
    is ``unknown``.
    """
    health = device.health or states.DEVICE_HEALTH_UNKNOWN
    reasons = list(device.health_reasons)
    if device.vanished_at is not None:
        health = states.DEVICE_UNHEALTHY
        reasons.append(VANISHED)
    return {'health': health, 'health_reasons': reasons,
            'quarantined': device.quarantined_at is not None}


class Device(resource.Resource):
    """A device as the API shows it; ``status`` from 2.3, health from 2.9."""

    _collection = COLLECTION
    _since = {'status': microversion.DEVICE_STATUS,
              'health': microversion.DEVICE_HEALTH,
              'health_reasons': microversion.DEVICE_HEALTH,
              'quarantined': microversion.DEVICE_HEALTH}

    uuid = wtypes.text
    type = wtypes.text
    vendor = wtypes.text
    model = wtypes.text
    std_board_info = wtypes.text
    vendor_board_info = wtypes.text
    hostname = wtypes.text
    status = wtypes.text
    health = wtypes.text
    health_reasons = [wtypes.text]
    quarantined = bool
    links = [links.Link]
    created_at = resource.Timestamp
    updated_at = resource.Timestamp


class DevicesController(collection.CollectionController):

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

    def _render(self, ctx, objects):
        url = links.base_url()
        version = base.version()
        extra = version >= microversion.DEVICE_HEALTH
        return [Device.render(obj, version, url,
                              **(health_view(obj) if extra else {}))
                for obj in objects]

    @pecan.expose('json')
    def post(self, uuid, action):
        """``/{uuid}/enable``, ``/{uuid}/disable``, ``/{uuid}/release``.

        ``release`` (from 2.9) ends a health quarantine. All answer 204.
        """
        release = (action == 'release' and
                   base.version() >= microversion.DEVICE_HEALTH)
        if action not in schema.ACTIONS and not release:
            raise exc.HTTPNotFound()
        ctx = base.context()
        policy.authorize(ctx, rules.RELEASE if release
                         else _ACTION_RULES[action], {})
        validation.query(pecan.request, parameter_types.no_query)
        device = device_obj.Device.get_by_uuid(ctx, uuid.lower())
        if release:
            base.conductor().device_release(ctx, device.uuid)
        else:
            base.conductor().device_set_status(ctx, device.uuid,
                                               schema.ACTIONS[action])
        return base.empty(204)
