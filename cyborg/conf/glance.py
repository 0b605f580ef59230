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

"""Options of the [glance] group: where bitstreams come from."""

from oslo_config import cfg

from cyborg.conf import ksa_opts

SERVICE_TYPE = 'image'

#: Where the replaced service read these options.
DEPRECATED_OPTS = {
    'insecure': [cfg.DeprecatedOpt('api_insecure', group='glance')],
    'cafile': [cfg.DeprecatedOpt('ca_file', group='ssl')],
    'certfile': [cfg.DeprecatedOpt('cert_file', group='ssl')],
    'keyfile': [cfg.DeprecatedOpt('key_file', group='ssl')],
    'connect-retries': [cfg.DeprecatedOpt('num_retries', group='glance')],
}

glance_group = cfg.OptGroup(
    'glance',
    title='Glance service options',
    help=('How Cyborg authenticates to and finds the Glance image service, '
          'which stores FPGA bitstreams as images. The conductor reads image '
          'metadata to find the bitstream a device profile asks for; the '
          'agent downloads the image data before programming a device. The '
          'options are keystoneauth1\'s: session options (TLS, timeout), auth '
          'options (``auth_type`` and the options of that plugin) and adapter '
          'options (service type, interfaces, region, endpoint override), '
          'plus the options below.'))

glance_opts = [
    cfg.StrOpt(
        'download_dir',
        default='$state_path/bitstreams',
        help="""
Directory of the agent's own where it stores bitstreams downloaded from
Glance.

Each image is streamed into a file here, programmed into the device and
then removed. The agent creates the directory with mode 0700 when it
starts or first needs it, and narrows a directory of its own that others
may read to 0700; it refuses to download into a directory another user
owns. Bitstreams can be hundreds of megabytes (up to ``[fpga]
max_bitstream_size``), so keep it off a small or memory file system.
Before this release the default was the system temporary directory.

The ``[privsep_vendor_tool]`` daemon loads only files of this directory,
as its own configuration gives it: the daemon must read the same
``state_path`` and ``download_dir`` as the agent.

Related options:

* ``[DEFAULT] state_path``
* ``[fpga] max_bitstream_size``
* ``[fpga] program_timeout``
* ``[fpga] fpgaconf_path``, ``[fpga] xbmgmt_path``
"""),
]


def register_opts(conf):
    conf.register_group(glance_group)
    ksa_opts.register_client_opts(conf, glance_group, SERVICE_TYPE,
                                  DEPRECATED_OPTS)
    conf.register_opts(glance_opts, group=glance_group)


def list_opts():
    return {glance_group: ksa_opts.list_client_opts(SERVICE_TYPE,
                                                    DEPRECATED_OPTS) +
            glance_opts}
