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
virtual functions. Such a GPU that offers no vGPU type is offered whole,
and each of its virtual functions too, as the service Cyborg replaces
did, unless ``[gpu_devices] filter_sriov_vfs`` keeps the virtual
functions back (assigning a MIG virtual function to a guest whole is
unsafe).

A GPU offering one vGPU type has one deployable named after the GPU, as in
the replaced service; one offering several has one per type, named
``<address>_<type>``. Its traits are those the replaced service gave
(``CUSTOM_NVIDIA_<product id>[_<vGPU type name>]``) beside the descriptive
ones (:mod:`cyborg.drivers.cyborg17`).
"""

import os

from cyborg.common import placement_names
import cyborg.conf
from cyborg.conf import gpu_devices
from cyborg.drivers import base
from cyborg.drivers import cyborg17
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
    '2335': 'NVIDIA H200',
}

VENDOR_TRAIT = 'CUSTOM_GPU_NVIDIA'


def product_trait(product_id):
    return placement_names.custom_name('GPU_PRODUCT_ID', product_id)


def vgpu_type_trait(mdev_type):
    return placement_names.custom_name('VGPU_TYPE', mdev_type)


def cyborg17_trait(product_id, type_name=None):
    """The replaced service's trait of a GPU, or of one of its vGPU types.

    :param type_name: the vGPU type's ``name`` in sysfs, such as ``GRID
        T4-1B``, whose model part (``T4_1B``) the trait holds.
    """
    return placement_names.custom_name('NVIDIA', product_id, type_name and
                                       type_name.split(' ')[1])


def _type_name(function, mdev_type):
    """The name sysfs gives ``mdev_type``, when it has a model part."""
    name = function.read(os.path.join('mdev_supported_types', mdev_type,
                                      'name'))
    return name if name and len(name.split(' ')) > 1 else None


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
    # No kernel_drivers: a whole GPU that libvirt hands to instances
    # ("managed" PCI devices) is bound to vfio-pci, its own driver or none
    # in turn, all healthy.

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

    def reported_name(self, vendor_id):
        return cyborg17.vendor_name(cyborg17.PCI_VENDORS, vendor_id)

    def discover(self, pci_devices):
        devices = []
        for gpu in pci_devices.values():
            if (gpu.vendor_id != VENDOR_ID or gpu.physfn is not None or
                    not gpu.class_code.startswith(_CLASSES)):
                continue
            deployables, whole_vfs = self._deployables(gpu, pci_devices)
            if deployables:
                devices.append(self._device(gpu, deployables))
            devices.extend(self._device(vf, [self._whole(vf)])
                           for vf in whole_vfs)
        return devices

    @staticmethod
    def _device(function, deployables):
        return report.device(
            'GPU', VENDOR_ID,
            MODELS.get(function.product_id, 'NVIDIA %s' % function.product_id),
            function.address, deployables,
            std_board_info=report.std_board_info(function))

    def _whole(self, function):
        """The deployable of a PCI function offered as a whole GPU."""
        resource_class, traits = cyborg17.names(
            'PGPU', [VENDOR_TRAIT, product_trait(function.product_id)],
            cyborg17_traits=[cyborg17_trait(function.product_id)])
        return report.deployable(
            function.address, self.reported_name(function.vendor_id),
            resource_class, traits, [report.pci_handle(function.address)])

    def _deployables(self, gpu, pci_devices):
        """The deployables of ``gpu``'s device, and VFs offered whole.

        A GPU that offers no vGPU is offered whole; with SR-IOV on, so is
        each of its virtual functions, as its own device, unless
        ``[gpu_devices] filter_sriov_vfs`` keeps them back.
        """
        traits = [VENDOR_TRAIT, product_trait(gpu.product_id)]
        # vGPUs live on the VFs when SR-IOV is on, else on the GPU itself.
        functions = [pci_devices[vf] for vf in gpu.virtfns
                     if vf in pci_devices] or [gpu]
        offered = {}
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
                offered[mdev_type] = handles
        driver_name = self.reported_name(gpu.vendor_id)
        deployables = []
        for mdev_type, handles in offered.items():
            type_name = _type_name(functions[0], mdev_type)
            resource_class, vgpu_traits = cyborg17.names(
                'VGPU', traits + [vgpu_type_trait(mdev_type)],
                cyborg17_traits=[cyborg17_trait(gpu.product_id, type_name)]
                if type_name else [])
            name = (gpu.address if len(offered) == 1 else
                    '%s_%s' % (gpu.address, mdev_type))
            deployables.append(report.deployable(
                name, driver_name, resource_class, vgpu_traits, handles))
        if supports_vgpu:
            return deployables, []
        deployables.append(self._whole(gpu))
        if CONF.gpu_devices.filter_sriov_vfs:
            return deployables, []
        return deployables, [pci_devices[vf] for vf in gpu.virtfns
                             if vf in pci_devices]
