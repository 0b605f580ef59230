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

"""Options of the [service_user] group: Cyborg's own service identity."""

from oslo_config import cfg

from cyborg.conf import ksa_opts

service_user_group = cfg.OptGroup(
    'service_user',
    title='Service user options',
    help=('Credentials of the service user Cyborg sends as a service token '
          'alongside the user\'s token when it calls other services on a '
          'user\'s behalf. Other services accept a request with an expired '
          'user token when a valid service token comes with it, so long '
          'operations do not fail halfway. The options are keystoneauth1\'s '
          'session and auth options plus the option below.'))

service_user_opts = [
    cfg.BoolOpt(
        'send_service_user_token',
        default=False,
        help="""
Send a service token with requests made on a user's behalf.

When enabled, calls to other services that carry a user's token (for
example a Glance download for a user's bitstream) also carry a token of the
user configured in this group, in the ``X-Service-Token`` header. Enable it
when the receiving services are configured to accept service tokens
(``[keystone_authtoken] service_token_roles`` there); the user must have
one of those roles, usually ``service``.
"""),
]


def register_opts(conf):
    conf.register_group(service_user_group)
    conf.register_opts(service_user_opts, group=service_user_group)
    ksa_opts.register_session_and_auth(conf, service_user_group)


def list_opts():
    return {service_user_group: (service_user_opts +
                                 ksa_opts.list_session_and_auth())}
