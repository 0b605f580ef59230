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
"""``/healthcheck``: oslo.middleware's health check, details for admins.

Load balancers call it without a token and get the plain answer (``OK``,
or 503 when a backend of ``[healthcheck] backends`` says the service
should take no traffic). A request that carries a token passes
authentication first; an admin then gets the detailed answer, with each
backend's reason and the process's threads. ``[healthcheck] detailed``
is not read: who sees details is decided here.
"""

from oslo_middleware import healthcheck

PATH = '/healthcheck'


def _check(app, detailed):
    """oslo.middleware's health check, with or without details.

    The choice goes in as the middleware's own (paste's) options, which
    come before ``[healthcheck]``; the other options are read from
    ``[healthcheck]``. The middleware reads ``detailed`` once, when it is
    made, so the checks of one process can differ. The options are those
    of oslo.config's global object, which is Cyborg's configuration.
    """
    return healthcheck.Healthcheck(app, {'detailed': detailed})


def _is_health_check(environ):
    return environ.get('PATH_INFO') == PATH


def public(app):
    """Answer a token-less ``/healthcheck`` before authentication."""
    check = _check(app, detailed=False)

    def route(environ, start_response):
        if _is_health_check(environ) and 'HTTP_X_AUTH_TOKEN' not in environ:
            return check(environ, start_response)
        return app(environ, start_response)
    return route


def authenticated(app):
    """Answer ``/healthcheck`` after authentication: details for admins."""
    plain = _check(app, detailed=False)
    detailed = _check(app, detailed=True)

    def route(environ, start_response):
        if not _is_health_check(environ):
            return app(environ, start_response)
        roles = environ.get('HTTP_X_ROLES', '').split(',')
        check = detailed if 'admin' in roles else plain
        return check(environ, start_response)
    return route
