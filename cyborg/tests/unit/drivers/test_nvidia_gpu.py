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
"""The NVIDIA GPU driver: whole GPUs, vGPU types, SR-IOV."""

from stevedore import extension

from cyborg.common import pci_address
from cyborg.conf import gpu_devices
from cyborg.drivers import base
from cyborg.drivers import health
from cyborg.drivers import nvidia_gpu
from cyborg.tests import sysfs
from cyborg.tests.unit.drivers import driver_case

T4 = '0000:3b:00.0'
A100 = '0000:af:00.0'
A10 = '0000:d8:00.0'


class TestDiscovery(driver_case.DriverTestCase):

    HOST = [
        ('nvidia_gpu', T4, dict(product='1eb8', mdev_types={
            'nvidia-222': 16, 'nvidia-223': 8})),
        # Ampere: vGPUs on VFs, one instance of a type per VF.
        ('nvidia_gpu', A100, dict(product='20f1', class_code='030200',
                                  vfs=3, vf_mdev_types={'nvidia-471': 1})),
        ('nvidia_gpu', A10, dict(product='2236')),
        # The HDMI audio function of a GPU is not a GPU.
        ('add_pci', '0000:d8:00.1', dict(vendor='10de', product='10fa',
                                         class_code='040300')),
    ]

    def _discover(self, *types):
        self.conf.config(enabled_vgpu_types=list(types), group='gpu_devices')
        return self.discover(nvidia_gpu.NvidiaGpuDriver())

    def test_whole_gpus_without_vgpu_types(self):
        self.conf.config(filter_sriov_vfs=True, group='gpu_devices')
        devices = self._discover()
        deps = self.deployables(devices)
        # The A100 has VFs enabled: they are kept back, not the GPU.
        self.assertEqual([T4, A100, A10], sorted(deps))
        self.assertEqual(['NVIDIA Tesla T4', 'NVIDIA A100 PCIe 40GB',
                          'NVIDIA A10'], [d.model for d in devices])
        t4 = deps[T4]
        self.assertEqual('PGPU', self.attributes(t4)['rc'])
        # The replaced service's trait, beside the descriptive ones.
        self.assertEqual({'CUSTOM_GPU_NVIDIA', 'CUSTOM_GPU_PRODUCT_ID_1EB8',
                          'CUSTOM_NVIDIA_1EB8'}, self.traits(t4))
        self.assertEqual('NVIDIA', t4.driver_name)
        self.conf.config(placement_names='descriptive', group='agent')
        self.assertEqual(
            {'CUSTOM_GPU_NVIDIA', 'CUSTOM_GPU_PRODUCT_ID_1EB8'},
            self.traits(self.deployables(self._discover())[T4]))
        self.assertEqual([T4], self.addresses(t4))
        self.assertEqual('PCI', t4.attach_handles[0].attach_type)

    def test_vgpu_type_inventory(self):
        # A GPU offering one type: its deployable is named after it.
        self.conf.config(filter_sriov_vfs=True, group='gpu_devices')
        deps = self.deployables(self._discover('nvidia-222'))
        self.assertEqual([T4, A100, A10], sorted(deps))
        vgpu = deps[T4]
        self.assertEqual('VGPU', self.attributes(vgpu)['rc'])
        # The model part of the type's name ("GRID nvidia-222" here) makes
        # the replaced service's trait.
        self.assertEqual({'CUSTOM_GPU_NVIDIA', 'CUSTOM_GPU_PRODUCT_ID_1EB8',
                          'CUSTOM_VGPU_TYPE_NVIDIA_222',
                          'CUSTOM_NVIDIA_1EB8_NVIDIA_222'}, self.traits(vgpu))
        self.assertEqual(16, vgpu.num_accelerators)
        handle = vgpu.attach_handles[0]
        self.assertEqual('MDEV', handle.attach_type)
        self.assertEqual({'asked_type': 'nvidia-222', 'domain': '0000',
                          'bus': '3b', 'device': '00', 'function': '0'},
                         handle.attach_info)

    def test_existing_mdevs_keep_the_inventory(self):
        self.tree.mdev('b1d7d1f2-5a9e-4d8e-9f0a-1c2b3d4e5f60', T4,
                       'nvidia-222')
        deps = self.deployables(self._discover('nvidia-222'))
        self.assertEqual(16, deps[T4].num_accelerators)

    def test_several_types(self):
        # A GPU offering several types: a deployable per type.
        deps = self.deployables(self._discover('nvidia-222', 'nvidia-223'))
        self.assertEqual(8, deps[T4 + '_nvidia-223'].num_accelerators)
        self.assertEqual(16, deps[T4 + '_nvidia-222'].num_accelerators)
        self.assertNotIn(T4, deps)

    def test_virtual_functions_offered_whole_as_the_replaced_service(self):
        devices = self._discover()
        vfs = ['0000:af:00.1', '0000:af:00.2', '0000:af:00.3']
        self.assertEqual([T4, A100] + vfs + [A10],
                         [self.addresses(d.deployables[0])[0]
                          for d in devices])
        for device in devices[2:5]:
            deployable, = device.deployables
            self.assertEqual('PGPU', self.attributes(deployable)['rc'])
            self.assertEqual(self.addresses(deployable),
                             [deployable.name])
            self.assertEqual(
                deployable.name, pci_address.join(
                    device.controlpath_id.cpid_info))

    def test_vgpus_on_virtual_functions(self):
        deps = self.deployables(self._discover('nvidia-471'))
        vgpu = deps[A100]
        self.assertEqual(['0000:af:00.1', '0000:af:00.2', '0000:af:00.3'],
                         self.addresses(vgpu))
        self.assertEqual({'MDEV'},
                         {h.attach_type for h in vgpu.attach_handles})
        self.assertIn('CUSTOM_GPU_PRODUCT_ID_20F1', self.traits(vgpu))
        self.assertEqual([T4, A100, A10], list(deps))

    def test_type_groups_pick_the_gpus_of_a_type(self):
        # [vgpu_<type>] device_addresses, as the replaced service read it.
        self.conf.config(enabled_vgpu_types=['nvidia-222', 'nvidia-223'],
                         filter_sriov_vfs=True, group='gpu_devices')
        gpu_devices.register_type_opts(self.conf.conf)
        self.assertEqual(
            [T4 + '_nvidia-222', T4 + '_nvidia-223', A100, A10],
            sorted(self.deployables(self.discover(
                nvidia_gpu.NvidiaGpuDriver()))))
        self.conf.config(device_addresses=[A10], group='vgpu_nvidia-222')
        self.assertEqual(
            [T4, A100, A10],
            sorted(self.deployables(self.discover(
                nvidia_gpu.NvidiaGpuDriver()))))


class TestH200VirtualMachine(driver_case.DriverTestCase):
    """The shape of a real host: a VM given a whole H200 (sysfs.H200_VM).

    No NUMA information (numa_node -1), no IOMMU group, no AER counters,
    no SR-IOV, no mdev types: every driver reads it without failing, and
    the NVIDIA driver offers the GPU whole.
    """

    HOST = sysfs.H200_VM
    GPU = '0000:00:05.0'

    def test_every_driver_reads_it(self):
        names = sorted(set(extension.ExtensionManager(
            base.NAMESPACE).names()) - {'fake_driver', 'nvmf_spdk_driver'})
        found = {}
        for driver in base.load(names):
            devices = self.discover(driver)
            found.update((dep.name, (driver.name, dev))
                         for dev in devices for dep in dev.deployables)
        self.assertEqual([self.GPU], sorted(found))
        name, gpu = found[self.GPU]
        self.assertEqual('nvidia_gpu_driver', name)
        self.assertEqual('NVIDIA H200', gpu.model)
        (dep,) = gpu.deployables
        self.assertEqual('PGPU', self.attributes(dep)['rc'])
        self.assertEqual([self.GPU], self.addresses(dep))

    def test_no_numa_node_and_no_iommu_group(self):
        dev = self.scan()[self.GPU]
        self.assertIsNone(dev.numa_node)
        self.assertIsNone(dev.read('iommu_group'))
        self.assertEqual(('10de', '18bf'), (dev.subsystem_vendor_id,
                                            dev.subsystem_product_id))
        self.assertEqual(('healthy', []), health.Monitor().check(dev, []))
