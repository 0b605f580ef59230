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
    help=('Credentials of a service user whose token would go alongside a '
          'user\'s token. Cyborg no longer calls other services with a '
          'user\'s token (Glance is asked with the credentials of '
          '``[glance]``), so nothing reads this group; it is accepted so '
          'that configuration files written for the service Cyborg '
          'replaces still load.'))

service_user_opts = [
    cfg.BoolOpt(
        'send_service_user_token',
        default=False,
        help="""
Send a service token with requests made on a user's behalf.

Unused: Cyborg makes no request on a user's behalf. Glance, which the
service Cyborg replaces called with the user's token, is asked with the
credentials of ``[glance]``, so that which bitstream images are found
does not depend on the user.
"""),
]


def register_opts(conf):
    conf.register_group(service_user_group)
    conf.register_opts(service_user_opts, group=service_user_group)
    ksa_opts.register_session_and_auth(conf, service_user_group)


def list_opts():
    return {service_user_group: (service_user_opts +
                                 ksa_opts.list_session_and_auth())}
