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

"""Options of the [api] group: the cyborg-api HTTP service."""

from oslo_config import cfg

from cyborg.conf import ignored

api_group = cfg.OptGroup(
    'api',
    title='API options',
    help='Options for the cyborg-api REST service.')

api_opts = [
    cfg.HostAddressOpt(
        'host_ip',
        default='127.0.0.1',
        help="""
Address the API server of the ``cyborg-api`` command listens on.

Used only when cyborg-api runs as its own console script; under a WSGI
server (uWSGI, mod_wsgi, gunicorn) the server's own settings decide. The
default, openstack-cyborg's, listens on the loopback address only: set the
address of the network Nova and clients reach the API on, ``0.0.0.0`` for
every IPv4 address or ``::`` for every IPv6 address.

Related options:

* ``port``
"""),
    cfg.PortOpt(
        'port',
        default=6666,
        help="""
TCP port the development API server listens on.

Used only when cyborg-api runs as its own console script. It must match the
port of the accelerator endpoint registered in the Keystone catalog, which
Nova uses to reach Cyborg.

Related options:

* ``host_ip``
"""),
    cfg.IntOpt(
        'api_workers',
        min=1,
        sample_default='<number of CPUs>',
        help="""
Number of worker processes of the development API server.

Used only when cyborg-api runs as its own console script. When unset, one
worker per CPU of the host is started. Lower it on hosts that run many other
services; each worker keeps its own pool of database connections.
"""),
    cfg.URIOpt(
        'public_endpoint',
        schemes=['http', 'https'],
        help="""
Public URL of the API, used in the links of version discovery documents.

Set it when the API sits behind a TLS terminator, load balancer or URL
prefix that clients see but the API process does not, for example
``https://cloud.example.com/accelerator``. When unset, links are built from
the host URL of each request plus its ``SCRIPT_NAME``. Setting
``[oslo_middleware] enable_proxy_headers_parsing`` lets the API learn the
public scheme and host from ``X-Forwarded-*`` headers instead.
"""),
    cfg.StrOpt(
        'auth_strategy',
        default='keystone',
        choices=[
            ('keystone', 'Validate tokens with Keystone through the '
                         'keystonemiddleware auth_token filter, configured '
                         'in [keystone_authtoken].'),
            ('noauth', 'Accept every request without a token and take the '
                       'caller\'s identity from headers or the noauth_* '
                       'defaults. For development and tests only.'),
        ],
        help="""
How the API authenticates callers.

Use ``keystone`` in every real deployment. ``noauth`` trusts whatever
identity a request claims, so anyone who can reach the API can do anything
policy allows to the claimed roles; it exists for development, the
all-in-one mode and tests.

With ``noauth`` the API logs a warning as it starts, and ``cyborg-api``
refuses to start on an address other than a loopback one unless
``noauth_allow_remote`` is set.

Related options:

* ``noauth_default_project_id``
* ``noauth_default_user_id``
* ``noauth_default_roles``
* ``noauth_allow_remote``
"""),
    cfg.BoolOpt(
        'noauth_allow_remote',
        default=False,
        help="""
Let ``cyborg-api`` serve ``auth_strategy = noauth`` beyond loopback.

By default ``cyborg-api`` with ``noauth`` refuses to start unless
``host_ip`` is a loopback address (``127.0.0.1``, ``::1`` or a name that
resolves only to loopback addresses): with ``noauth`` any caller that can
reach the API is an administrator. Set it only on an isolated test network
where every host that can reach the port is trusted. A WSGI server decides
its own addresses, so this option does not apply there.

Related options:

* ``auth_strategy``
* ``host_ip``
"""),
    cfg.StrOpt(
        'noauth_default_project_id',
        default='cyborg-dev',
        help="""
Project ID given to a caller that sends no ``X-Project-Id`` header.

Used only with ``auth_strategy = noauth``. Objects created without an
explicit project, such as accelerator requests, are owned by this project.

Related options:

* ``auth_strategy``
"""),
    cfg.StrOpt(
        'noauth_default_user_id',
        default='cyborg-dev-user',
        help="""
User ID given to a caller that sends no ``X-User-Id`` header.

Used only with ``auth_strategy = noauth``; it appears in logs and in the
request context.

Related options:

* ``auth_strategy``
"""),
    cfg.ListOpt(
        'noauth_default_roles',
        default=['admin', 'member', 'reader'],
        help="""
Roles given to a caller that sends no ``X-Roles`` header.

Used only with ``auth_strategy = noauth``. The default makes such a caller
an administrator so that every API works in development; remove ``admin``
to exercise the policy rules of an ordinary project member.

Related options:

* ``auth_strategy``
"""),
    cfg.ListOpt(
        'noauth_default_service_roles',
        default=['service'],
        help="""
Service-token roles given to a caller that sends no ``X-Roles`` header.

Used only with ``auth_strategy = noauth``, where they stand in for the
roles of an ``X-Service-Token`` and are checked against ``[keystone_authtoken]
service_token_roles`` by the calls that need a service token (see
``require_service_token``). A caller that sends ``X-Roles`` gets only the
service roles it sends in ``X-Service-Roles``.

Related options:

* ``auth_strategy``
* ``require_service_token``
"""),
    cfg.IntOpt(
        'max_limit',
        default=1000,
        min=1,
        help="""
Largest number of items one list request returns.

A list request that asks for a larger ``limit``, or gives none, gets at most
this many items; clients page through longer lists with ``marker``. Lower
it to bound the memory and time one request can take; raise it if clients
cannot page.
"""),
    cfg.IntOpt(
        'max_accelerators_per_request',
        default=256,
        min=1,
        help="""
Most accelerator requests one create may make.

A create makes one accelerator request per unit that its device profile's
groups ask for (``resources:FPGA=2`` makes two); a profile that asks for
more is refused with 409 and nothing is made. It bounds the time and the
rows one request can cost, whatever amount a profile names.
"""),
    cfg.BoolOpt(
        'require_service_token',
        default=True,
        help="""
Require a service token for the calls that only Nova should make.

When enabled, binding and unbinding accelerator requests (PATCH),
deleting them by instance and deleting one that is bound to an instance
need an ``X-Service-Token`` header whose token
carries one of the roles in ``[keystone_authtoken] service_token_roles``
(``service`` by default), besides a user token that policy allows. This
stops a user from binding requests to arbitrary hosts or releasing devices
under a running instance. Nova sends a service token when its
``[service_user] send_service_user_token`` is enabled. Disable this only if
Nova cannot send service tokens; then any caller that policy allows can
make these calls.

Related options:

* ``auth_strategy``
* ``[keystone_authtoken] service_token_roles``
"""),
    ignored.option(
        cfg.StrOpt, 'api_paste_config',
        'the middleware pipeline is built in code; see the API guide.'),
    cfg.BoolOpt(
        'enable_ssl_api',
        default=False,
        help="""
Serve HTTPS instead of HTTP from the ``cyborg-api`` command.

The certificate and key come from ``[ssl] cert_file`` and ``key_file``
(and ``[ssl] ca_file`` asks clients for certificates); cyborg-api refuses
to start when they are not set or cannot be read. Under a WSGI server, or
behind a proxy that terminates TLS, leave it off: they decide, and
``public_endpoint`` or ``[oslo_middleware] enable_proxy_headers_parsing``
give clients the ``https`` links. The Keystone endpoint of the
accelerator service must then name ``https``.

Related options:

* ``[ssl] cert_file``
* ``[ssl] key_file``
* ``[ssl] ca_file``
"""),
]


def register_opts(conf):
    conf.register_group(api_group)
    conf.register_opts(api_opts, group=api_group)


def list_opts():
    return {api_group: api_opts}
