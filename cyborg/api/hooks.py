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
"""Pecan hooks: request context, microversion, media type and errors."""

import re

from pecan import hooks
from webob import exc as webob_exc

from cyborg.api import errors
from cyborg.api import microversion
from cyborg import context
from cyborg import exception
from cyborg.i18n import _
from cyborg import policy

# Paths that are not under /v2: only the root document.
_UNVERSIONED = frozenset(('', '/'))


class ContextHook(hooks.PecanHook):
    """Builds the RequestContext from the identity headers.

    It applies the policy files as they are at the start of the request
    (:func:`cyborg.policy.refresh`): every check of the request sees them.

    It also hands controllers the conductor's RPC API, made once per
    process.
    """

    priority = 10

    def __init__(self, conductor):
        self.conductor = conductor

    def before(self, state):
        ctx = context.RequestContext.from_environ(state.request.environ)
        policy.refresh()
        ctx.is_admin = policy.check_is_admin(ctx)
        state.request.context['cyborg'] = ctx
        state.request.context['conductor'] = self.conductor


class MicroversionHook(hooks.PecanHook):
    """Reads the microversion a request asks for and says which it got.

    It reads it before routing, so that a 404 or 405 of a /v2 path
    carries the version headers too, but refuses a version it does not
    serve (406) only after routing: a path or a method the API does not
    have is a 404 or a 405 (with ``Allow``) whatever the header says.
    """

    priority = 20

    def on_route(self, state):
        if state.request.path_info in _UNVERSIONED:
            return
        state.request.context['version'] = None
        try:
            state.request.context['version'] = microversion.from_header(
                state.request.headers.get(microversion.HEADER))
        except exception.NotAcceptable as refusal:
            # Refused once the route is known to take the method.
            state.request.context['version_refused'] = refusal

    def before(self, state):
        refusal = state.request.context.pop('version_refused', None)
        if refusal is not None:
            raise refusal

    def after(self, state):
        if 'version' in state.request.context:
            state.response.headers.update(microversion.response_headers(
                state.request.context['version']))


#: A media type, ``type/subtype``, as RFC 9110 section 8.3.1 spells it:
#: each of the two a run of the characters the RFC calls a token's.
_NAME = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_MEDIA_TYPE = re.compile('%s/%s' % (_NAME, _NAME))


def _takes(media_type):
    """Whether a body of ``media_type`` (lower case) is JSON."""
    return media_type == 'application/json' or (
        media_type.startswith('application/') and
        media_type.endswith('+json'))


def _has_body(request):
    """Whether ``request`` comes with a body (a length, or chunked)."""
    return bool(request.content_length) or 'chunked' in request.headers.get(
        'Transfer-Encoding', '').lower()


class ContentTypeHook(hooks.PecanHook):
    """Refuses a request whose ``Content-Type`` names no JSON body.

    The API reads JSON bodies only. pecan's routing reads
    ``request.params``, for which WebOb parses a form body
    (``application/x-www-form-urlencoded`` or ``multipart/form-data``)
    that no controller reads, and raised for a multipart type without a
    boundary or a form with an unknown charset: a 500. This hook answers
    before routing, for every route and method that comes with a body:
    400 for a value that is no media type, 415 for one that is not JSON.
    Without a body the media type means nothing and is dropped (wsgiref
    and some proxies give every request ``text/plain``). Parameters
    (``charset``) are not read: JSON has none (RFC 8259).
    """

    priority = 25

    def on_route(self, state):
        value = state.request.headers.get('Content-Type', '')
        media_type = value.split(';', 1)[0].strip()
        if not value.strip():
            return
        if not _has_body(state.request):
            # Nothing to describe: dropped, so that WebOb reads no charset
            # from it either (for the query string).
            del state.request.environ['CONTENT_TYPE']
            return
        if _MEDIA_TYPE.fullmatch(media_type) is None:
            raise webob_exc.HTTPBadRequest(_(
                'The Content-Type header is not a media type: %s') % value)
        if not _takes(media_type.lower()):
            raise webob_exc.HTTPUnsupportedMediaType(_(
                'The API takes JSON bodies only (Content-Type: '
                'application/json), not %s.') % media_type)


class ErrorHook(hooks.PecanHook):
    """Turns an exception into the contract's error response."""

    priority = 30

    def on_error(self, state, exc):
        return errors.response_for(exc, state.request.context.get('version'))
