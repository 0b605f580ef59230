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
"""The agent's root work, each kind in its own privsep daemon.

The agent runs as an unprivileged user. What needs root goes through an
oslo.privsep daemon that keeps only the capabilities that work needs:

``sysfs_pctxt`` (``[privsep_sysfs]``)
    Writes sysfs attributes that only root may write, such as creating and
    removing mediated devices (:mod:`cyborg.privsep.mdev`). The files are
    root's with mode 0200: ``CAP_DAC_OVERRIDE`` is all it takes.
``vendor_tool_pctxt`` (``[privsep_vendor_tool]``)
    Runs the FPGA vendors' programming tools (:mod:`cyborg.privsep.
    vendor_tool`). They open root-only device nodes and sysfs files
    (``CAP_DAC_OVERRIDE``) and reconfigure the device through ioctls and
    PCI configuration space that the kernel keeps for ``CAP_SYS_ADMIN``.

Each daemon is started on first use with the context's ``helper_command``
(by default ``sudo privsep-helper`` with the agent's configuration files)
and reads its own configuration: it writes only below its own ``[agent]
sysfs_root`` and runs only the tools its ``[fpga] *_path`` options name,
whatever the agent asks.
"""

import copy

from oslo_privsep import capabilities as caps
from oslo_privsep import priv_context

_SYSFS_CAPS = (caps.CAP_DAC_OVERRIDE,)
_VENDOR_TOOL_CAPS = (caps.CAP_DAC_OVERRIDE, caps.CAP_SYS_ADMIN)

sysfs_pctxt = priv_context.PrivContext(
    'cyborg.privsep',
    cfg_section='privsep_sysfs',
    pypath=__name__ + '.sysfs_pctxt',
    capabilities=_SYSFS_CAPS,
)

vendor_tool_pctxt = priv_context.PrivContext(
    'cyborg.privsep',
    cfg_section='privsep_vendor_tool',
    pypath=__name__ + '.vendor_tool_pctxt',
    capabilities=_VENDOR_TOOL_CAPS,
)

#: Every context, with the capabilities its daemon keeps by default.
CONTEXTS = ((sysfs_pctxt, _SYSFS_CAPS),
            (vendor_tool_pctxt, _VENDOR_TOOL_CAPS))


def list_opts():
    """The options of each context's group, for oslo-config-generator.

    They are oslo.privsep's; the sample shows each context's own default
    capabilities.
    """
    listing = []
    for context, defaults in CONTEXTS:
        opts = []
        for opt in priv_context.OPTS:
            if opt.dest == 'capabilities':
                opt = copy.copy(opt)
                opt.sample_default = ','.join(
                    caps.CAPS_BYVALUE[c] for c in defaults)
            opts.append(opt)
        listing.append((context.cfg_section, opts))
    return listing
