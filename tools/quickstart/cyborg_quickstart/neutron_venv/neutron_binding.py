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
"""An ML2 mechanism driver that binds ports on any host, without agents.

This file runs inside the real Neutron's virtualenv (by path: neither
Cyborg nor its quickstart is installed there), loaded by
:class:`cyborg_quickstart.neutron.Neutron` as the mechanism driver
``cyborg_any_host``. It stands in for a hypervisor's switch, which the
demo has none of: Neutron's own drivers bind only on hosts whose L2 agent
reports, and a port that no driver binds fails Nova's boot.

It binds ``normal`` ports as Open vSwitch would, and SR-IOV ports
(``direct``, ``accelerator-direct``...) as Neutron's SR-IOV driver would,
on a segment of the physical network that Nova wrote into the port's
``binding:profile`` (from Cyborg's accelerator request, for the
``accelerator-direct`` ports). Nothing is plugged anywhere.
"""

from neutron_lib.api.definitions import portbindings
from neutron_lib import constants
from neutron_lib.plugins.ml2 import api

#: The VIF type each supported VNIC type is bound with.
VIF_TYPES = {
    portbindings.VNIC_NORMAL: portbindings.VIF_TYPE_OVS,
    portbindings.VNIC_DIRECT: portbindings.VIF_TYPE_HW_VEB,
    portbindings.VNIC_ACCELERATOR_DIRECT: portbindings.VIF_TYPE_HW_VEB,
    portbindings.VNIC_DIRECT_PHYSICAL: portbindings.VIF_TYPE_HOSTDEV_PHY,
    portbindings.VNIC_ACCELERATOR_DIRECT_PHYSICAL:
        portbindings.VIF_TYPE_HOSTDEV_PHY,
}


class AnyHostMechanismDriver(api.MechanismDriver):
    """Bind every port of a supported VNIC type, on whatever host."""

    def initialize(self):
        pass

    def bind_port(self, context):
        """Bind to the first segment the port can use.

        A port of a VF (any VNIC type but ``normal``) needs a segment of
        the physical network its ``binding:profile`` names; without one
        the port stays unbound, and Neutron reports ``binding_failed``.
        """
        port = context.current
        vnic_type = port.get(portbindings.VNIC_TYPE, portbindings.VNIC_NORMAL)
        if vnic_type not in VIF_TYPES:
            return
        physnet = (port.get(portbindings.PROFILE) or {}).get(
            'physical_network')
        for segment in context.segments_to_bind:
            if (vnic_type != portbindings.VNIC_NORMAL and
                    segment[api.PHYSICAL_NETWORK] != physnet):
                continue
            context.set_binding(segment[api.ID], VIF_TYPES[vnic_type],
                                {portbindings.VIF_DETAILS_CONNECTIVITY:
                                 portbindings.CONNECTIVITY_L2},
                                status=constants.PORT_STATUS_ACTIVE)
            return
