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

"""Options of the [nic] group: networks of the NICs the agent offers."""

from oslo_config import cfg

nic_group = cfg.OptGroup(
    'nic',
    title='NIC options',
    help='Options of the Intel NIC driver of cyborg-agent.')

nic_opts = [
    cfg.ListOpt(
        'physical_device_mappings',
        default=[],
        help="""
Physical networks that the ports of SR-IOV NICs are cabled to.

A list of ``<physical_network>:<interface>`` pairs, where the interface is
the host's network interface of a NIC's physical function, as in Neutron's
SR-IOV agent option of the same name. The virtual functions of a mapped
port carry the physical network in their attach handles and a
``CUSTOM_PHYSNET_<NAME>`` trait (and ``CUSTOM_<NAME>``, as openstack-cyborg
17.0.0 named it, unless ``[agent] placement_names`` is ``descriptive``), so
that instances get a VF on the network their port needs. VFs of unmapped
ports are still offered, without a network. Keep it equal to the SR-IOV
agent's mappings on the same host.

Example::

  physical_device_mappings = physnet1:ens785f0,physnet2:ens785f1

Related options:

* ``[agent] enabled_drivers``, which must include the Intel NIC driver
"""),
    cfg.ListOpt(
        'product_ids',
        default=['1572', '158a', '158b'],
        help="""
PCI product ids of the Intel Ethernet controllers the Intel NIC driver takes.

The defaults are the X710 and XXV710 physical functions that
openstack-cyborg 17.0.0 took. The driver offers the virtual functions (VFs)
of each such port, or the port itself while it has no VFs. Add the ids of
other Intel Ethernet controllers, or ``*`` for all of them, only where no
other service (such as Neutron's SR-IOV agent or Nova's PCI passthrough)
manages them: a device must be given out by one service only.

Related options:

* ``[nic_devices] enabled_nic_types``, whose groups' ``device_addresses``
  narrow the ports further
"""),
]


def register_opts(conf):
    conf.register_group(nic_group)
    conf.register_opts(nic_opts, group=nic_group)


def list_opts():
    return {nic_group: nic_opts}
