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
"""Authentication middleware: keystonemiddleware, or noauth for development.

Both leave the caller's identity in the standard ``X-*`` headers that
keystonemiddleware sets, from which :mod:`cyborg.api.hooks` builds the
request context. Version discovery (``GET /`` and ``GET /v2``) and the
OpenAPI document (``GET /v2/openapi.json``) are public.
"""

import ipaddress
import socket

from keystonemiddleware import auth_token
from oslo_log import log

import cyborg.conf
from cyborg import exception

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)

#: Paths served without authentication (version discovery and the
#: OpenAPI document).
PUBLIC_PATHS = frozenset(('', '/', '/v2', '/v2/', '/v2/openapi.json'))

# Headers only the authentication middleware may set.
_SYSTEM_SCOPE_HEADER = 'OpenStack-System-Scope'
_IDENTITY_HEADERS = ('X-Identity-Status', 'X-User-Id', 'X-Project-Id',
                     'X-Roles', 'X-Service-Roles',
                     'X-Service-Identity-Status', _SYSTEM_SCOPE_HEADER)


def _environ_key(header):
    return 'HTTP_' + header.upper().replace('-', '_')


def _is_public(environ):
    return (environ.get('REQUEST_METHOD') in ('GET', 'HEAD') and
            environ.get('PATH_INFO', '') in PUBLIC_PATHS)


class NoAuth:
    """Trust the identity a request claims; fill gaps from ``[api]``.

    ``X-User-Id``, ``X-Project-Id``, ``X-Roles`` and ``X-Service-Roles``
    are taken as sent. A request that claims no roles at all (no
    ``X-Roles`` header) gets ``noauth_default_roles`` and the
    ``noauth_default_service_roles``, so real clients with
    ``--os-auth-type none`` work. Development and tests only.
    """

    def __init__(self, app, conf):
        self.app = app
        self.conf = conf

    def __call__(self, environ, start_response):
        api = self.conf.api
        defaults = {'X-User-Id': api.noauth_default_user_id,
                    'X-Project-Id': api.noauth_default_project_id}
        if _environ_key('X-Roles') not in environ:
            defaults['X-Roles'] = ','.join(api.noauth_default_roles)
            defaults['X-Service-Roles'] = ','.join(
                api.noauth_default_service_roles)
        for header, value in defaults.items():
            environ.setdefault(_environ_key(header), value)
        environ[_environ_key('X-Identity-Status')] = 'Confirmed'
        return self.app(environ, start_response)


def _user_system_scope(app):
    """Set ``OpenStack-System-Scope`` from the user's token alone.

    keystonemiddleware sets the header from the user's token and then
    again from the service token's (which it leaves out when that token
    is not system-scoped), so a system-scoped user token sent with a
    project-scoped service token would pass as unscoped, outside the
    policies' ``scope_types``. The user's token, as auth_token validated
    it, decides.
    """
    key = _environ_key(_SYSTEM_SCOPE_HEADER)

    def scoped(environ, start_response):
        plugin = environ.get('keystone.token_auth')
        user = plugin.user if plugin and plugin.has_user_token else None
        if user is not None and user.system_scoped and user.system.get(
                'all'):
            environ[key] = 'all'
        else:
            environ.pop(key, None)
        return app(environ, start_response)
    return scoped


class KeystoneAuth:
    """keystonemiddleware's ``auth_token`` except on public paths."""

    def __init__(self, app, conf):
        self.app = app
        # A service token without one of service_token_roles is refused
        # (401), as openstack-cyborg set it; a file may still turn it off.
        conf.set_default('service_token_roles_required', True,
                         group='keystone_authtoken')
        self.auth = auth_token.AuthProtocol(
            _user_system_scope(app), {'oslo_config_config': conf})

    def __call__(self, environ, start_response):
        if _is_public(environ):
            for header in _IDENTITY_HEADERS:
                environ.pop(_environ_key(header), None)
            return self.app(environ, start_response)
        return self.auth(environ, start_response)


def middleware(app, conf):
    """Wrap ``app`` in the authentication ``[api] auth_strategy`` names.

    With ``noauth`` it says so loudly: every caller is whoever it claims,
    an administrator when it claims nothing.
    """
    if conf.api.auth_strategy == 'noauth':
        LOG.warning('[api] auth_strategy is noauth: the API is '
                    'UNAUTHENTICATED; any caller that reaches it is '
                    'whoever it claims to be, an administrator when it '
                    'claims nothing. For development and tests only.')
        return NoAuth(app, conf)
    return KeystoneAuth(app, conf)


def _is_loopback(host):
    """Whether every address ``host`` names is a loopback address."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False
    return bool(infos) and all(
        ipaddress.ip_address(info[4][0].split('%')[0]).is_loopback
        for info in infos)


def unsafe_noauth_address(conf):
    """Why the API must not serve ``conf``'s ``[api] host_ip``, or None.

    ``noauth`` is served on loopback only, unless ``[api]
    noauth_allow_remote`` says the network is trusted.
    """
    api = conf.api
    if (api.auth_strategy != 'noauth' or api.noauth_allow_remote or
            _is_loopback(api.host_ip)):
        return None
    return ('[api] auth_strategy is noauth and host_ip %s is not a loopback '
            'address: anyone who reaches it would be an administrator. '
            'Listen on 127.0.0.1 or ::1, use auth_strategy = keystone, or '
            'set [api] noauth_allow_remote = True on a trusted test '
            'network.' % api.host_ip)


def require_service_token(context, action):
    """Refuse ``action`` unless a service token came with the request.

    The service token's roles (``X-Service-Roles``, set by auth_token from
    ``X-Service-Token``, or sent as is under noauth) must include one of
    ``[keystone_authtoken] service_token_roles``. ``[api]
    require_service_token = False`` turns the gate off.

    :raises ServiceTokenRequired: there is no such token.
    """
    if not CONF.api.require_service_token:
        return
    wanted = set(CONF.keystone_authtoken.service_token_roles)
    if not wanted.intersection(context.service_roles or ()):
        raise exception.ServiceTokenRequired(action=action)
