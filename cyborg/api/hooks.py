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
"""Pecan hooks: request context, microversion, and error responses."""

from pecan import hooks

from cyborg.api import errors
from cyborg.api import microversion
from cyborg import context
from cyborg import policy

# Paths that are not under /v2: only the root document.
_UNVERSIONED = frozenset(('', '/'))


class ContextHook(hooks.PecanHook):
    """Builds the RequestContext from the identity headers.

    It applies the policy files as they are at the start of the request
    (:func:`cyborg.policy.refresh`): every check of the request sees them.

    It also hands controllers the conductor's RPC API, made once per
    process, and the application's
    :class:`~cyborg.api.controllers.base.ListCache`.
    """

    priority = 10

    def __init__(self, conductor, lists):
        self.conductor = conductor
        self.lists = lists

    def before(self, state):
        ctx = context.RequestContext.from_environ(state.request.environ)
        policy.refresh()
        ctx.is_admin = policy.check_is_admin(ctx)
        state.request.context['cyborg'] = ctx
        state.request.context['conductor'] = self.conductor
        state.request.context['lists'] = self.lists


class MicroversionHook(hooks.PecanHook):
    """Reads the microversion a request asks for and says which it got.

    It reads it before routing, so that a 404 or 405 of a /v2 path
    carries the version headers too.
    """

    priority = 20

    def on_route(self, state):
        if state.request.path_info in _UNVERSIONED:
            return
        state.request.context['version'] = None
        state.request.context['version'] = microversion.from_header(
            state.request.headers.get(microversion.HEADER))

    def after(self, state):
        if 'version' in state.request.context:
            state.response.headers.update(microversion.response_headers(
                state.request.context['version']))


class ErrorHook(hooks.PecanHook):
    """Turns an exception into the contract's error response."""

    priority = 30

    def on_error(self, state, exc):
        return errors.response_for(exc)
