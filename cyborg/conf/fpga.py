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

"""Options of the [fpga] group: programming FPGAs on the agent."""

from oslo_config import cfg

fpga_group = cfg.OptGroup(
    'fpga',
    title='FPGA options',
    help='Options of the FPGA drivers of cyborg-agent.')

fpga_opts = [
    cfg.IntOpt(
        'program_timeout',
        default=600,
        min=1,
        help="""
Seconds one FPGA programming run may take.

A vendor tool that has not finished within this time is stopped and the
programming fails, which fails the bind of the accelerator request that
asked for it. Raise it for large bitstreams or slow devices, and keep
``[DEFAULT] bind_timeout`` longer than this plus the bitstream download.

Related options:

* ``[DEFAULT] bind_timeout``
* ``fpgaconf_path``
* ``xbmgmt_path``
"""),
    cfg.StrOpt(
        'fpgaconf_path',
        default='/usr/bin/fpgaconf',
        help="""
Absolute path of the tool the Intel FPGA driver runs to program a device.

The OPAE ``fpgaconf`` tool, where OPAE's packages install it by default.
The ``[privsep_vendor_tool]`` daemon runs it as root by this path, never
through ``PATH``: a relative path (such as a bare ``fpgaconf``) is
refused and programming fails until it is made absolute.

Related options:

* ``program_timeout``
"""),
    cfg.StrOpt(
        'xbmgmt_path',
        default='/opt/xilinx/xrt/bin/xbmgmt',
        help="""
Absolute path of the tool the Xilinx FPGA driver runs to program a device.

The Xilinx Runtime (XRT) ``xbmgmt`` tool, where XRT installs it. The
``[privsep_vendor_tool]`` daemon runs it as root by this path, never
through ``PATH``: a relative path (such as a bare ``xbmgmt``) is refused
and programming fails until it is made absolute. A bind loads the user
partition (``--user``) only; the shell is flashed only by an operator's
shell update (see the administrator guide, "FPGA bitstreams").

Related options:

* ``program_timeout``
"""),
    cfg.ListOpt(
        'trusted_image_owners',
        default=[],
        help="""
Projects whose Glance images may be programmed into FPGAs.

A bitstream image is loaded only if its ``owner`` (the id of the project
that uploaded it, as Glance shows it) is one of these project ids. Any
Glance user may upload an image tagged ``FPGA`` that claims a function;
without this rule, a project member's image would be found and loaded into
shared hardware in place of the operator's. Untrusted images are left out
of every search, whether by ``function_uuid``, ``function_name`` or the
``accel:function_id`` of the service Cyborg replaces, and an untrusted
image named by id is refused.

When empty, the project of the ``[glance]`` credentials (Cyborg's service
project) is the one trusted owner; with no credentials there (Glance
without Keystone) no image is trusted until this option names owners.

Related options:

* ``[glance] auth_type`` and the credentials of that group
"""),
    cfg.IntOpt(
        'max_bitstream_size',
        default=1024,
        min=1,
        help="""
Largest bitstream, in MiB, the agent downloads from Glance.

An image whose ``size`` Glance records as larger is refused before the
download; a download that passes this many bytes all the same is stopped
and its file removed, so an image cannot fill the agent's disk. Raise it
only for devices whose bitstreams really are larger.

Related options:

* ``[glance] download_dir``
"""),
]


def register_opts(conf):
    conf.register_group(fpga_group)
    conf.register_opts(fpga_opts, group=fpga_group)


def list_opts():
    return {fpga_group: fpga_opts}
