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
"""The quickstart's simulated host: its devices, drivers and fpgaconf.

Two Intel FPGAs with VFs, an NVIDIA GPU with vGPU types, a QAT card, a
generic PCI card and the fake driver's device (:data:`HOST_DEVICES`, as
:mod:`cyborg.tests.sysfs` builds them); where the real Neutron runs, an
Intel X710 port besides (:data:`NIC`), its VFs on
:data:`cyborg_quickstart.neutron.PHYSNET`, for ports of ``vnic_type``
``accelerator-direct``.
"""

from cyborg_quickstart import neutron
from cyborg_quickstart import quickstart_demo

#: The simulated host: (builder of cyborg.tests.sysfs, address, options).
HOST_DEVICES = [
    ('intel_fpga', '0000:5e:00.0', {'vfs': 2}),
    ('intel_fpga', '0000:af:00.0', {'vfs': 2}),
    ('nvidia_gpu', '0000:3b:00.0', {'mdev_types': {'nvidia-222': 4,
                                                   'nvidia-223': 2}}),
    ('intel_qat', '0000:3d:00.0', {'vfs': 2}),
    ('add_pci', '0000:d8:00.0', quickstart_demo.PCI_DEVICE),
]
DRIVERS = ('intel_fpga_driver,nvidia_gpu_driver,intel_qat_driver,'
           'generic_pci_driver,fake_driver')
VGPU_TYPE = 'nvidia-222'
#: The Intel X710 port of the host with the real Neutron, its netdev and
#: its VFs (16 routing ids on).
NIC = '0000:18:00.0'
NIC_IFNAME = 'ens785f0'
NIC_VFS = ('0000:18:02.0', '0000:18:02.1')

#: The stand-in for OPAE's fpgaconf: "loads" the bitstream by showing its
#: AFU id where the card's port shows it, as the real tool makes the
#: kernel do. The demo bitstream is JSON naming that id.
FPGACONF = '''#!{python}
import json, sys
args = sys.argv[1:]
with open(args[-1]) as f:
    afu_id = json.load(f)["afu_id"]
opt = dict(zip(args[:-1:2], args[1:-1:2]))
address = "%04x:%02x:%02x.%x" % tuple(
    int(opt[o], 16) for o in ("-S", "-B", "-D", "-F"))
with open({afu_files!r}) as f:
    afu_file = json.load(f)[address]
with open(afu_file, "w") as f:
    f.write(afu_id.replace("-", "") + "\\n")
print("fpgaconf (quickstart stand-in): loaded %s into %s" % (
    args[-1], address))
'''


def devices(nic):
    """The host's devices; with the :data:`NIC` port if ``nic``."""
    return HOST_DEVICES + ([('intel_nic', NIC, {
        'ifname': NIC_IFNAME, 'vfs': len(NIC_VFS)})] if nic else [])


def drivers(nic):
    """The agent's ``enabled_drivers``; the NIC's too if ``nic``."""
    return DRIVERS + (',intel_nic_driver' if nic else '')


def nic_config(nic):
    """cyborg.conf's lines of the :data:`NIC` port's section if ``nic``."""
    return ['', '[nic]', 'physical_device_mappings = %s:%s' % (
        neutron.PHYSNET, NIC_IFNAME)] if nic else []
