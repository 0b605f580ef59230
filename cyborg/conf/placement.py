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

"""Options of the [placement] group: how the conductor reaches Placement."""

from oslo_config import cfg

from cyborg.conf import ksa_opts

SERVICE_TYPE = 'placement'

placement_group = cfg.OptGroup(
    'placement',
    title='Placement service options',
    help=('How cyborg-conductor authenticates to and finds the Placement '
          'service, where it keeps one resource provider per device with '
          'its inventory and traits. The options are keystoneauth1\'s: '
          'session options (TLS, timeout), auth options (``auth_type`` and '
          'the options of that plugin; the user needs a role that '
          'Placement\'s policy lets manage resource providers, usually '
          '``admin`` or ``service``) and adapter options (service type, '
          'interfaces, region, endpoint override). Only the conductor uses '
          'them.'))


def register_opts(conf):
    conf.register_group(placement_group)
    ksa_opts.register_client_opts(conf, placement_group, SERVICE_TYPE)


def list_opts():
    return {placement_group: ksa_opts.list_client_opts(SERVICE_TYPE)}
