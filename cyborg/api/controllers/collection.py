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
"""Collections: the list body with its ``next`` page, list and show.

Every v2 collection is a :class:`CollectionController`; its query
parameters are read by :mod:`cyborg.api.controllers.query`, its 405s by
:mod:`cyborg.api.controllers.routing`.
"""

from urllib import parse

import pecan

from cyborg.api.controllers import base
from cyborg.api.controllers import links
from cyborg.api.controllers import query
from cyborg.api.controllers import routing
from cyborg.api import microversion
from cyborg.api.schemas import parameter_types
from cyborg.api import validation
from cyborg import policy


def body(key, resource, objects, params, page, render=None):
    """A list body: the collection key first, then ``next`` with paging.

    ``next`` is the URL of the following page while this page is full,
    else null. ``render`` turns the objects into dicts when rendering one
    by one does not do.
    """
    version = base.version()
    if render is None:
        url = links.base_url()
        items = [resource.render(obj, version, url) for obj in objects]
    else:
        items = render(objects)
    result = {key: items}
    if version >= microversion.PAGING:
        result['next'] = None
        if objects and len(objects) == page['limit']:
            following = dict(params, limit=page['limit'],
                             marker=objects[-1].uuid)
            result['next'] = '%s/v2/%s?%s' % (
                links.base_url(), resource._collection,
                parse.urlencode(following))
    return result


class CollectionController(routing.RoutedController):
    """``GET`` of a collection and of one member; subclasses fill in.

    ``resource`` renders, ``object_class`` reads, ``key`` names the list
    in the body; ``query`` are the filter parameters (exact matches on
    the columns of the same names unless ``_filters`` says otherwise),
    ``query_since`` those a microversion adds or changes, ``sort_keys``
    what a paged list may be sorted by (see
    :mod:`cyborg.api.controllers.query`). ``legacy_filters``, where
    releases before ours took ``filters.field``/``filters.value`` pairs
    on the list, maps the fields that filter here to their columns; the
    paging fields page at any microversion and the other fields are
    accepted and ignored, as they were.
    """

    resource = None
    object_class = None
    key = None
    list_rule = None
    show_rule = None
    query = {}
    query_since = {}
    sort_keys = ()
    legacy_filters = None

    def _target(self, ctx, obj=None):
        """The policy target: the owner of ``obj`` (by default none)."""
        return {}

    def _filters(self, ctx, params):
        return {name: params[name]
                for name in query.names(self.query, self.query_since)
                if name in params}

    def _legacy_filters(self, ctx, old):
        """The column filters of ``filters.field`` pairs ``old``."""
        return {column: old[field] for field, column
                in (self.legacy_filters or {}).items() if field in old}

    def _find(self, ctx, ident):
        return self.object_class.get_by_uuid(ctx, ident.lower())

    def _render(self, ctx, objects):
        url, version = links.base_url(), base.version()
        return [self.resource.render(obj, version, url) for obj in objects]

    @pecan.expose('json')
    def get_all(self):
        ctx = base.context()
        policy.authorize(ctx, self.list_rule, self._target(ctx))
        params, old, page = query.read(
            pecan.request, base.version(), self.query, self.query_since,
            self.sort_keys, legacy=self.legacy_filters is not None)
        filters = self._filters(ctx, params)
        filters.update(self._legacy_filters(ctx, old))
        objects = self.object_class.list(ctx, filters=filters, **page)
        return body(self.key, self.resource, objects, params, page,
                    render=lambda objs: self._render(ctx, objs))

    @pecan.expose('json')
    def get_one(self, ident):
        ctx = base.context()
        validation.query(pecan.request, parameter_types.no_query)
        obj = self._find(ctx, ident)
        policy.authorize(ctx, self.show_rule, self._target(ctx, obj))
        return self._show(ctx, obj)

    def _show(self, ctx, obj):
        return self._render(ctx, [obj])[0]
