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

"""Options of the [ssl] group: HTTPS of the ``cyborg-api`` command.

openstack-cyborg served HTTPS with oslo.service's ``sslutils``, which
read this group when ``[api] enable_ssl_api`` was set; the names and
meanings are kept. ``[glance]`` reads ``ca_file``, ``cert_file`` and
``key_file`` too when its own ``cafile``, ``certfile`` and ``keyfile``
are unset, as openstack-cyborg's did.
"""

from oslo_config import cfg

from cyborg.conf import ignored

ssl_group = cfg.OptGroup(
    'ssl',
    title='HTTPS options',
    help='The certificate and key the cyborg-api command serves HTTPS with '
         'when [api] enable_ssl_api is set.')

ssl_opts = [
    cfg.StrOpt(
        'cert_file',
        help="""
Certificate (PEM) the ``cyborg-api`` command serves HTTPS with.

Needed with ``[api] enable_ssl_api``; cyborg-api refuses to start when
the file cannot be read. It may hold the intermediate certificates after
the server's own.

Related options:

* ``key_file``
* ``[api] enable_ssl_api``
"""),
    cfg.StrOpt(
        'key_file',
        help="""
Private key (PEM) of ``cert_file``.

Needed with ``[api] enable_ssl_api``. Make it readable by the user
cyborg-api runs as only.

Related options:

* ``cert_file``
"""),
    cfg.StrOpt(
        'ca_file',
        help="""
CA certificates (PEM) that clients' certificates must be signed by.

When set together with ``[api] enable_ssl_api``, cyborg-api asks every
client for a certificate and refuses a connection without one signed by
these CAs (mutual TLS), as openstack-cyborg did. Leave it unset for
ordinary HTTPS, where clients need no certificate.

Related options:

* ``[api] enable_ssl_api``
"""),
    cfg.StrOpt(
        'ciphers',
        help="""
OpenSSL cipher list cyborg-api offers over HTTPS, for example
``ECDHE+AESGCM``. When unset, Python's default list for servers is used.
TLS 1.3 ciphers are not affected.
"""),
    ignored.option(
        cfg.StrOpt, 'version',
        'cyborg-api negotiates TLS 1.2 or later with each client; older '
        'protocols are refused.'),
]


def register_opts(conf):
    conf.register_group(ssl_group)
    conf.register_opts(ssl_opts, group=ssl_group)


def list_opts():
    return {ssl_group: ssl_opts}
