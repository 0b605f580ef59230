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
"""What every v2 controller shares: links, response types and lists.

Responses are described by WSME types (one per resource, in that
resource's controller module) and rendered to JSON in the order their
attributes are declared. Requests are validated with JSON Schema
(:mod:`cyborg.api.validation`), not by WSME.
"""

import collections
import datetime
import functools
import inspect
import threading
from urllib import parse

import pecan
from pecan import jsonify
from pecan import rest
import webob
from webob import exc
from wsme import types as wtypes

from cyborg.api import microversion
from cyborg.api.schemas import parameter_types
from cyborg.api import validation
import cyborg.conf
from cyborg.i18n import _
from cyborg import policy

CONF = cyborg.conf.CONF


def base_url():
    """``[api] public_endpoint``, else this request's host and mount."""
    if CONF.api.public_endpoint:
        return CONF.api.public_endpoint.rstrip('/')
    return pecan.request.application_url.rstrip('/')


class Link(wtypes.Base):
    """A link to a resource."""

    href = wtypes.text
    rel = wtypes.text


def links(collection, uuid, bookmark=False, url=None):
    """The ``self`` link (and the unversioned ``bookmark``) of a resource.

    ``url`` is :func:`base_url`, when the caller has it already.
    """
    url = url or base_url()
    result = [{'href': '%s/v2/%s/%s' % (url, collection, uuid),
               'rel': 'self'}]
    if bookmark:
        result.append({'href': '%s/%s/%s' % (url, collection, uuid),
                       'rel': 'bookmark'})
    return result


#: Type of created_at and updated_at: ISO 8601 with a time zone.
Timestamp = datetime.datetime
StringDict = wtypes.DictType(wtypes.text, wtypes.text)
ListOfStringDicts = wtypes.ArrayType(StringDict)


def _same(value):
    return value


def _to_json(datatype):
    """A function turning a value of WSME ``datatype`` into JSON data.

    It gives what WSME's ``tojson`` gives for the types the resources
    declare, without its per-value dispatch: this runs for every field
    of every item of a list.
    """
    if isinstance(datatype, wtypes.ArrayType):
        item = _to_json(datatype.item_type) or _same
        return lambda value: (None if value is None
                              else [item(v) for v in value])
    if isinstance(datatype, wtypes.DictType):
        key = _to_json(datatype.key_type) or _same
        val = _to_json(datatype.value_type) or _same
        return lambda value: (None if value is None else
                              {key(k): val(v) for k, v in value.items()})
    if datatype is datetime.datetime:
        return lambda value: None if value is None else value.isoformat()
    if wtypes.iscomplex(datatype) or datatype not in (
            wtypes.text, str, int, bool):
        raise TypeError('no JSON rendering for %r' % (datatype,))
    return None  # already JSON data


class Resource(wtypes.Base):
    """A resource as the API shows it; subclasses declare the fields.

    Fields are rendered in the order a subclass declares them, ``links``
    among them. ``_collection`` is the URL segment of its collection;
    ``_bookmark`` adds an unversioned bookmark link; ``_since`` maps the
    fields added by a microversion to it. (WSME takes every public class
    attribute for a field.)
    """

    _collection = None
    _bookmark = False
    _since = {}

    @classmethod
    @functools.lru_cache(maxsize=None)
    def _fields(cls, version):
        """(name, to JSON or None) of the fields shown at ``version``."""
        return tuple((attr.key, None if attr.key == 'links'
                      else _to_json(attr.datatype))
                     for attr in wtypes.list_attributes(cls)
                     if version >= cls._since.get(attr.key, version))

    @classmethod
    def render(cls, obj, version, url=None, **extra):
        """The JSON-ready dict of ``obj`` at ``version``.

        ``extra`` gives, as JSON data, the fields that are not the
        object's own or that it shows otherwise; ``url`` is
        :func:`base_url`, when the caller has it already.
        """
        body = {}
        for name, to_json in cls._fields(version):
            if name == 'links':
                value = links(cls._collection, obj.uuid, cls._bookmark, url)
            elif name in extra:
                value = extra[name]
            else:
                value = obj[name]
                if to_json is not None:
                    value = to_json(value)
            body[name] = value
        return body


def empty(status):
    """A response without a body (202, 204): not even a JSON null."""
    return webob.Response(status=status, content_type=None)


def version():
    """The microversion of the current request."""
    return pecan.request.context['version']


def context():
    """The :class:`cyborg.context.RequestContext` of the current request."""
    return pecan.request.context['cyborg']


def conductor():
    """The conductor's RPC API, through which every write goes."""
    return pecan.request.context['conductor']


#: The paging parameters of a list query.
PAGING_KEYS = ('limit', 'marker', 'sort_key', 'sort_dir')


def paging(params, always=False):
    """limit, marker, sort_key and sort_dir of a list query (2.4).

    Before 2.4 a list has no pages (unless ``always``: the older
    releases' filters asked for them); from 2.4 a page holds at most
    ``[api] max_limit`` items.
    """
    if version() < microversion.PAGING and not always:
        return {}
    limit = min(int(params.get('limit', CONF.api.max_limit)),
                CONF.api.max_limit)
    return {'limit': limit, 'marker': params.get('marker'),
            'sort_key': params.get('sort_key'),
            'sort_dir': params.get('sort_dir')}


def collection(key, resource, objects, params, page, render=None):
    """A list body: the collection key first, then ``next`` from 2.4.

    ``next`` is the URL of the following page while this page is full,
    else null. ``render`` turns the objects into dicts when rendering one
    by one does not do.
    """
    if render is None:
        url = base_url()
        items = [resource.render(obj, version(), url) for obj in objects]
    else:
        items = render(objects)
    body = {key: items}
    if version() >= microversion.PAGING:
        body['next'] = None
        if objects and len(objects) == page['limit']:
            query = dict(params, limit=page['limit'],
                         marker=objects[-1].uuid)
            body['next'] = '%s/v2/%s?%s' % (
                base_url(), resource._collection, parse.urlencode(query))
    return body


class ListCache:
    """The JSON bodies of lists an application answered, by generation.

    The application has one (see :class:`cyborg.api.hooks.ContextHook`).

    A body is good while the generation of its objects
    (:func:`cyborg.db.api.generation`, read for every request) is the one
    it was made at: every write of those objects, whichever process makes
    it, changes the generation in its own transaction. The least recently
    used bodies go beyond ``max_bytes``.
    """

    def __init__(self, max_bytes=4 * 1024 * 1024):
        self.max_bytes = max_bytes
        self._bodies = collections.OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key, generation):
        """The body kept for ``key`` at ``generation``, else None."""
        with self._lock:
            generation_and_body = self._bodies.get(key)
            if generation is None or generation_and_body is None or (
                    generation_and_body[0] != generation):
                return None
            self._bodies.move_to_end(key)
            return generation_and_body[1]

    def put(self, key, generation, body):
        """Keep ``body`` for ``key``, unless a newer generation's is kept."""
        if generation is None or len(body) > self.max_bytes:
            return
        with self._lock:
            kept = self._bodies.pop(key, None)
            if kept is not None:
                self._size -= len(kept[1])
                if kept[0] > generation:
                    body, generation = kept[1], kept[0]
            self._bodies[key] = (generation, body)
            self._size += len(body)
            while self._size > self.max_bytes:
                self._size -= len(self._bodies.popitem(last=False)[1][1])


#: The controller methods of each HTTP method, as pecan routes them.
_METHODS = (('GET', 'get_all'), ('GET', 'get_one'), ('POST', 'post'),
            ('PATCH', 'patch'), ('DELETE', 'delete'))


@functools.lru_cache(maxsize=1024)
def _arity(func):
    """(fewest, most) positional arguments of a controller method."""
    params = [p for p in inspect.signature(func).parameters.values()
              if p.kind == p.POSITIONAL_OR_KEYWORD]
    return len([p for p in params if p.default is p.empty]), len(params)


def _fits(func, count, exact=True):
    """Whether a controller method takes ``count`` path arguments.

    ``exact=False``: whether they are enough for it.
    """
    fewest, most = _arity(func)
    return fewest <= count and (not exact or count <= most)


class CollectionController(rest.RestController):
    """``GET`` of a collection and of one member; subclasses fill in.

    ``resource`` renders, ``object_class`` reads, ``key`` names the list
    in the body; ``query``, ``query_2_4`` and ``query_2_7`` are the filter
    parameters (exact matches on the columns of the same names unless
    ``_filters`` says otherwise), ``sort_keys`` what 2.4 may sort by.
    ``legacy_filters``, where releases before ours took
    ``filters.field``/``filters.value`` pairs on the list, maps the
    fields that filter here to their columns; the paging fields page at
    any microversion and the other fields are accepted and ignored, as
    they were.
    """

    resource = None
    object_class = None
    key = None
    list_rule = None
    show_rule = None
    query = {}
    query_2_4 = {}
    query_2_7 = {}
    sort_keys = ()
    legacy_filters = None
    #: Whether the process keeps the lists it answered (:class:`ListCache`):
    #: only for objects whose changes are counted (``generation()``), in
    #: lists that look the same to every caller allowed to see them (their
    #: rule is checked each time).
    cached_lists = False

    def _not_allowed(self, args):
        """405 naming what the path of ``args`` serves (404: nothing)."""
        given = len([a for a in args if a])
        allowed = {method for method, name in _METHODS
                   if hasattr(self, name) and
                   _fits(getattr(self, name), given)}
        for action, methods in self._custom_actions.items():
            if given and args[-1] == action and _fits(getattr(self, action),
                                                      given - 1):
                allowed.update(methods)
        if not allowed:
            return exc.HTTPNotFound()
        return exc.HTTPMethodNotAllowed(
            headers={'Allow': ', '.join(sorted(allowed))})

    @pecan.expose()
    def _route(self, args, request=None):
        """pecan's routing, with a 405 that says what the path allows.

        A path short of an argument its method needs is refused too:
        pecan would call the method without it and fail (a 500).
        """
        try:
            controller, remainder = super()._route(args, request)
        except exc.HTTPMethodNotAllowed:
            # pecan's Allow names what any path of the collection allows.
            raise self._not_allowed(args)
        if not _fits(controller, len([r for r in remainder if r]),
                     exact=False):
            raise self._not_allowed(args)
        return controller, remainder

    def _target(self, ctx, obj=None):
        """The policy target: the owner of ``obj`` (by default none)."""
        return {}

    def _filters(self, ctx, params):
        return {name: params[name] for name in
                list(self.query) + list(self.query_2_4) if name in params}

    def _legacy_filters(self, ctx, old):
        """The column filters of ``filters.field`` pairs ``old``."""
        return {column: old[field] for field, column
                in (self.legacy_filters or {}).items() if field in old}

    def _find(self, ctx, ident):
        return self.object_class.get_by_uuid(ctx, ident.lower())

    def _render(self, ctx, objects):
        url = base_url()
        return [self.resource.render(obj, version(), url)
                for obj in objects]

    @pecan.expose('json')
    def get_all(self):
        ctx = context()
        policy.authorize(ctx, self.list_rule, self._target(ctx))
        if not self.cached_lists:
            return self._list(ctx)
        # Before the rows: see cyborg.db.api.generation.
        generation = self.object_class.generation(ctx)
        # Everything the body depends on besides the rows; the query is
        # validated whenever a body is made for it.
        key = (self.key, version(), base_url(), pecan.request.query_string)
        lists = pecan.request.context['lists']
        body = lists.get(key, generation)
        if body is None:
            body = jsonify.encode(self._list(ctx)).encode()
            lists.put(key, generation, body)
        pecan.response.body = body
        pecan.response.content_type = 'application/json'
        return pecan.response

    def _list(self, ctx):
        """The list the request's query asks for, as JSON-ready data."""
        legacy = self.legacy_filters is not None
        params = validation.query(pecan.request, parameter_types.list_query(
            version(), self.query, self.sort_keys, self.query_2_4,
            self.query_2_7), legacy=legacy)
        old = validation.legacy_filters(pecan.request) if legacy else {}
        old_paging = {k: old[k] for k in PAGING_KEYS if k in old}
        if old_paging:
            validation.validate(parameter_types.paging_query(self.sort_keys),
                                old_paging, _('filter'))
            params = dict(old_paging, **params)
        filters = self._filters(ctx, params)
        filters.update(self._legacy_filters(ctx, old))
        page = paging(params, always=bool(old_paging))
        objects = self.object_class.list(ctx, filters=filters, **page)
        return collection(self.key, self.resource, objects, params, page,
                          render=lambda objs: self._render(ctx, objs))

    @pecan.expose('json')
    def get_one(self, ident):
        ctx = context()
        validation.query(pecan.request, parameter_types.no_query)
        obj = self._find(ctx, ident)
        policy.authorize(ctx, self.show_rule, self._target(ctx, obj))
        return self._show(ctx, obj)

    def _show(self, ctx, obj):
        return self._render(ctx, [obj])[0]
