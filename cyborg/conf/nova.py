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

"""Options of the [nova] group: how Cyborg reaches Nova."""

from oslo_config import cfg

from cyborg.conf import ksa_opts

SERVICE_TYPE = 'compute'

nova_group = cfg.OptGroup(
    'nova',
    title='Nova service options',
    help=('How cyborg-conductor authenticates to and finds the Nova compute '
          'API, to which it sends ``accelerator-request-bound`` external '
          'events. The options are keystoneauth1\'s: session options (TLS, '
          'timeout), auth options (``auth_type`` and the options of that '
          'plugin; the user needs the role that Nova\'s policy requires for '
          'external events, ``service`` in current Nova releases) and adapter '
          'options (service type, interfaces, region, endpoint override), '
          'plus the options below.'))

nova_opts = [
    cfg.StrOpt(
        'nova_conf',
        help="""
Path of Nova's configuration file on this host, such as
``/etc/nova/nova.conf``.

Read only by ``cyborg-status upgrade check``, which warns when Nova's
``[pci] device_spec`` (or its older name ``passthrough_whitelist``) matches
devices that Cyborg also manages: Nova and Cyborg would then both hand the
same device to instances. When unset the check is skipped. Set it on hosts
that run both nova-compute and cyborg-agent.

Related options:

* ``[pci] device_spec``
"""),
]


def register_opts(conf):
    conf.register_group(nova_group)
    ksa_opts.register_client_opts(conf, nova_group, SERVICE_TYPE)
    conf.register_opts(nova_opts, group=nova_group)


def list_opts():
    return {nova_group: ksa_opts.list_client_opts(SERVICE_TYPE) + nova_opts}
