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
"""NVIDIA GPUs, offered whole (PGPU) or as virtual GPUs (VGPU).

A GPU that supports one of ``[gpu_devices] enabled_vgpu_types`` offers
virtual GPUs of those types, as mediated devices (mdev), unless the type's
``[vgpu_<type>] device_addresses`` names other GPUs; any other GPU is
offered whole. GPUs with SR-IOV (Ampere and later) create their vGPUs on
virtual functions: a physical function whose VFs are enabled, and the VFs
themselves, are never offered whole.
"""

import os

from cyborg.common import placement_names
import cyborg.conf
from cyborg.conf import gpu_devices
from cyborg.drivers import base
from cyborg.drivers import report

CONF = cyborg.conf.CONF

VENDOR_ID = '10de'
#: Display controllers: VGA-compatible (0300) and 3D (0302).
_CLASSES = ('0300', '0302')

#: Model names of common data-centre GPUs; others show their product id.
MODELS = {
    '1db4': 'NVIDIA Tesla V100 PCIe 16GB',
    '1eb8': 'NVIDIA Tesla T4',
    '20b0': 'NVIDIA A100 SXM4 40GB',
    '20f1': 'NVIDIA A100 PCIe 40GB',
    '2235': 'NVIDIA A40',
    '2236': 'NVIDIA A10',
    '25b6': 'NVIDIA A16',
    '26b5': 'NVIDIA L40',
    '27b8': 'NVIDIA L4',
}

VENDOR_TRAIT = 'CUSTOM_GPU_NVIDIA'


def product_trait(product_id):
    return placement_names.custom_name('GPU_PRODUCT_ID', product_id)


def vgpu_type_trait(mdev_type):
    return placement_names.custom_name('VGPU_TYPE', mdev_type)


def vgpu_capacity(dev, mdev_type):
    """How many mdevs of ``mdev_type`` the function holds in all.

    The instances still available plus those that exist already, so the
    inventory does not shrink as Cyborg creates mdevs. None when the
    function does not support the type.
    """
    type_dir = os.path.join('mdev_supported_types', mdev_type)
    available = dev.read(os.path.join(type_dir, 'available_instances'))
    if available is None:
        return None
    existing = dev.glob(os.path.join(type_dir, 'devices', '*'))
    return int(available) + len(existing)


class NvidiaGpuDriver(base.Driver):
    """Whole GPUs as ``PGPU``, enabled vGPU types as ``VGPU``."""

    name = 'nvidia_gpu_driver'
    pci_ids = frozenset([(VENDOR_ID, '*')])

    def __init__(self):
        self.vgpu_types = list(CONF.gpu_devices.enabled_vgpu_types)
        gpu_devices.register_type_opts(CONF)
        #: vGPU type -> addresses of the GPUs that may offer it (all when
        #: not in here).
        self.type_gpus = {}
        for mdev_type in self.vgpu_types:
            group = CONF[gpu_devices.type_group(mdev_type)]
            if group.device_addresses:
                self.type_gpus[mdev_type] = frozenset(
                    a.strip().lower() for a in group.device_addresses)

    def discover(self, pci_devices):
        devices = []
        for gpu in pci_devices.values():
            if (gpu.vendor_id != VENDOR_ID or gpu.physfn is not None or
                    not gpu.class_code.startswith(_CLASSES)):
                continue
            deployables = self._deployables(gpu, pci_devices)
            if deployables:
                devices.append(report.device(
                    'GPU', VENDOR_ID,
                    MODELS.get(gpu.product_id, 'NVIDIA %s' % gpu.product_id),
                    gpu.address, deployables,
                    std_board_info=report.std_board_info(gpu)))
        return devices

    def _deployables(self, gpu, pci_devices):
        traits = [VENDOR_TRAIT, product_trait(gpu.product_id)]
        # vGPUs live on the VFs when SR-IOV is on, else on the GPU itself.
        functions = [pci_devices[vf] for vf in gpu.virtfns
                     if vf in pci_devices] or [gpu]
        deployables = []
        supports_vgpu = False
        for mdev_type in self.vgpu_types:
            if gpu.address not in self.type_gpus.get(mdev_type,
                                                     (gpu.address,)):
                continue
            handles = []
            for function in functions:
                capacity = vgpu_capacity(function, mdev_type)
                if capacity is not None:
                    supports_vgpu = True
                    handles.extend(
                        report.mdev_handle(function.address, mdev_type)
                        for _ in range(capacity))
            if handles:
                deployables.append(report.deployable(
                    '%s_%s' % (gpu.address, mdev_type), self.name, 'VGPU',
                    traits + [vgpu_type_trait(mdev_type)], handles))
        if not supports_vgpu and not gpu.virtfns:
            deployables.append(report.deployable(
                gpu.address, self.name, 'PGPU', traits,
                [report.pci_handle(gpu.address)]))
        return deployables
