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
"""Routing of a REST controller, with 405 answers that say what is allowed.

pecan's ``RestController._route`` is the custom routing hook pecan
documents; :class:`RoutedController` extends it.
"""

import functools
import inspect

import pecan
from pecan import rest
from webob import exc


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


class RoutedController(rest.RestController):
    """pecan's REST controller; a path it cannot serve is a 404 or a 405.

    A 405 names in ``Allow`` what the path of the request allows (pecan's
    names what any path of the collection allows).
    """

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
