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
"""``nvmf_spdk_driver``, a name of the replaced service; it reports nothing.

That service's SPDK NVMe-oF driver talked to a local SPDK target but had
no discovery the agent could call, so it never reported an accelerator.
This driver keeps ``cyborg.conf`` files that enable it loading, says once
that it offers nothing, and reports nothing.
"""

from oslo_log import log

from cyborg.drivers import base

LOG = log.getLogger(__name__)


class NvmfSpdkDriver(base.Driver):
    """Offers no accelerators; kept so existing configurations load."""

    name = 'nvmf_spdk_driver'

    def __init__(self):
        LOG.warning('Accelerator driver %s reports no devices: SPDK NVMe-oF '
                    'targets are not offered as accelerators. Remove it from '
                    '[agent] enabled_drivers.', self.name)

    def discover(self, pci_devices):
        return []
