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
"""Our drivers report what openstack-cyborg 17.0.0's reported, and more.

For each card, 17.0.0's own driver code (run in its virtualenv by
``cyborg17_report.py``) says what that service reported; ours, on a
simulated host with the same card, must report by default the same
resource class, at least the same traits, the same device type and
vendor, the same ``driver_name``, and deployables of the same names (less
the ``<host>_`` prefix, which the database conversion removes) offering
the same functions. With ``[agent] placement_names = descriptive`` the
17.0.0 names that :func:`cyborg.drivers.cyborg17.retired` lists are gone.
"""

import functools
import json
import pathlib
import subprocess

from cyborg.conf import gpu_devices
from cyborg.conf import nic_devices
from cyborg.drivers import cyborg17
from cyborg.drivers import generic_pci
from cyborg.drivers import huawei_ascend
from cyborg.drivers import inspur_fpga
from cyborg.drivers import intel_fpga
from cyborg.drivers import intel_nic
from cyborg.drivers import intel_qat
from cyborg.drivers import nvidia_gpu
from cyborg.drivers import nvme_ssd
from cyborg.drivers import xilinx_fpga
from cyborg.tests import openstack_fixtures
from cyborg.tests.unit.drivers import driver_case

VENV = openstack_fixtures.VENVS / 'openstack-cyborg-17.0.0'
SCRIPT = pathlib.Path(__file__).with_name('cyborg17_report.py')
HOST = 'compute-17'

T4 = '0000:3b:00.0'
T4_VGPU = '0000:3c:00.0'
NVME = '0000:5d:00.0'
INSPUR = '0000:5f:00.0'
XILINX = '0000:af:00.0'
ASCEND = '0000:0c:00.0'
NIC = '0000:18:00.0'
NIC_VFS = ('0000:18:02.0', '0000:18:02.1')
NIC_NO_VFS = '0000:19:00.0'
QAT = '0000:3d:00.0'
QAT_VFS = ('0000:3d:00.1', '0000:3d:00.2')
PAC = '0000:5e:00.0'
AFU = 'd8424dc4a4a3c413f89e433683f9040b'
INTERFACE = '9926ab6d6c925a68aabca7d84c545738'
TYPE_NAME = 'GRID T4-1B'


def _lspci(address, class_name, class_id, name, vendor, product):
    """A line of ``lspci -nn -D``."""
    return '%s %s [%s]: %s [%s:%s]' % (address, class_name, class_id, name,
                                       vendor, product)


#: The cards, as 17.0.0's drivers read them (see ``cyborg17_report.py``).
CARDS = {
    'nvidia_gpu': {'lspci': [_lspci(T4, '3D controller', '0302',
                                    'NVIDIA Corporation TU104GL [Tesla T4]',
                                    '10de', '1eb8')]},
    'vgpu': {'address': T4_VGPU, 'product_id': '1eb8',
             'mdev_type': 'nvidia-222', 'type_name': TYPE_NAME,
             'instances': 16},
    'pci': {'lspci': [_lspci(T4, '3D controller', '0302',
                             'NVIDIA Corporation TU104GL [Tesla T4]',
                             '10de', '1eb8')],
            'whitelist': ['{"vendor_id": "10de", "product_id": "1eb8"}']},
    'nvme_ssd': {'lspci': [_lspci(
        NVME, 'Non-Volatile memory controller', '0108',
        'Inspur Electronic Information Industry Co., Ltd. Device', '1bd4',
        '1003')]},
    'inspur_fpga': {'lspci': [_lspci(
        INSPUR, 'Processing accelerators', '1200',
        'Inspur Electronic Information Industry Co., Ltd. Device', '1bd4',
        'a115')]},
    'xilinx_fpga': {'lspci': [
        _lspci(XILINX, 'Processing accelerators', '1200',
               'Xilinx Corporation Device', '10ee', '5004'),
        _lspci(XILINX[:-1] + '1', 'Processing accelerators', '1200',
               'Xilinx Corporation Device', '10ee', '5005')]},
    'huawei_ascend': {'lspci': [_lspci(ASCEND, 'Processing accelerators',
                                       '1200', 'Device', '19e5', 'd100')]},
    'nic': {'address': NIC, 'product_id': '1572', 'ifname': 'ens785f0',
            'vfs': list(NIC_VFS), 'physnets': ['physnet1:ens785f0'],
            'functions': ['GTPv1:ens785f0']},
    'nic_no_vfs': {'driver': 'nic', 'address': NIC_NO_VFS,
                   'product_id': '158b', 'ifname': 'ens786f0', 'vfs': []},
    'qat': {'address': QAT, 'vfs': list(QAT_VFS)},
    'intel_fpga': {'address': PAC, 'afu_ids': [AFU],
                   'region_ids': [INTERFACE]},
}


@functools.cache
def cyborg17_reports():
    """{card: the devices 17.0.0's driver reports for it}."""
    cards = [dict({'driver': name}, **card) for name, card in CARDS.items()]
    result = subprocess.run(
        [str(VENV / 'bin' / 'python'), str(SCRIPT)],
        input=json.dumps(cards), capture_output=True, text=True,
        check=False, timeout=120)
    if result.returncode:
        raise AssertionError(result.stderr)
    return dict(zip(CARDS, json.loads(result.stdout)))


class TestCyborg17Names(driver_case.DriverTestCase):

    HOST = [
        ('nvidia_gpu', T4, dict(product='1eb8')),
        ('nvidia_gpu', T4_VGPU, dict(product='1eb8',
                                     mdev_types={'nvidia-222': 16})),
        ('nvme', NVME, dict(vendor='1bd4', product='1003',
                            model='Inspur NVMe SSD')),
        ('add_pci', INSPUR, dict(vendor='1bd4', product='a115',
                                 class_code='120000')),
        ('xilinx_fpga', XILINX, dict(product='5004')),
        ('add_pci', ASCEND, dict(vendor='19e5', product='d100',
                                 class_code='120000')),
        ('intel_nic', NIC, dict(product='1572', ifname='ens785f0', vfs=2)),
        ('intel_nic', NIC_NO_VFS, dict(product='158b', ifname='ens786f0')),
        ('intel_qat', QAT, dict(product='37c8', vfs=2)),
        ('intel_fpga', PAC, dict(layout='intel', interface_id=INTERFACE,
                                 afu_id=AFU)),
    ]

    def setUp(self):
        super().setUp()
        if not (VENV / 'bin' / 'python').exists():
            self.skipTest('%s is missing: run tools/setup-client-venvs.sh'
                          % VENV)
        # The T4 at T4_VGPU offers vGPUs, the other one is whole: the
        # replaced service needs the addresses of each type's GPUs.
        self.conf.config(enabled_vgpu_types=['nvidia-222'],
                         group='gpu_devices')
        gpu_devices.register_type_opts(self.conf.conf)
        self.conf.config(device_addresses=[T4_VGPU],
                         group='vgpu_nvidia-222')
        self.conf.config(device_spec=['{"vendor_id": "10de", '
                                      '"product_id": "1eb8", '
                                      '"address": "%s"}' % T4],
                         group='pci')
        self.conf.config(physical_device_mappings=['physnet1:ens785f0'],
                         group='nic')
        self.conf.config(enabled_nic_types=['x710_static'],
                         group='nic_devices')
        nic_devices.register_type_opts(self.conf.conf)
        self.conf.config(function_device_mappings=['GTPv1:ens785f0'],
                         group='x710_static')

    def _ours(self, driver_class, address):
        """Our driver's device whose control path is at ``address``."""
        (device,) = [d for d in self.discover(driver_class())
                     if '%(domain)s:%(bus)s:%(device)s.%(function)s'
                     % d.controlpath_id.cpid_info == address]
        return device

    def assertCarriedOver(self, card, driver_class, address,
                          same_handles=True):
        """Our report of the card keeps every name 17.0.0's has."""
        (theirs,) = cyborg17_reports()[card]
        ours = self._ours(driver_class, address)
        self.assertEqual((theirs['type'], theirs['vendor']),
                         (ours.type, ours.vendor))
        deployables = self.deployables([ours])
        self.assertEqual(
            sorted(dep['name'].removeprefix(HOST + '_')
                   for dep in theirs['deployables']), sorted(deployables))
        for dep in theirs['deployables']:
            mine = deployables[dep['name'].removeprefix(HOST + '_')]
            self.assertEqual(dep['driver_name'], mine.driver_name)
            self.assertEqual(dep['rc'], self.attributes(mine)['rc'])
            # Cyborg puts OWNER_CYBORG on every provider it manages.
            self.assertLessEqual(set(dep['traits']) - {'OWNER_CYBORG'},
                                 self.traits(mine))
            if same_handles:
                self.assertEqual(dep['handles'], self.addresses(mine))
        return theirs, ours

    def assertRetiredWhenDescriptive(self, card, driver_class, address):
        """With descriptive names, none of 17.0.0's retired names is left."""
        self.conf.config(placement_names=cyborg17.DESCRIPTIVE, group='agent')
        (theirs,) = cyborg17_reports()[card]
        names = {n for dep in theirs['deployables']
                 for n in dep['traits'] + [dep['rc']]}
        retired = {n for n in names if cyborg17.retired(n)[0]}
        self.assertTrue(retired)
        for dep in self.deployables([self._ours(driver_class,
                                                address)]).values():
            reported = self.traits(dep) | {self.attributes(dep)['rc']}
            self.assertEqual(set(), reported & retired)
            for name in retired:
                replacement = cyborg17.retired(name)[1]
                if replacement:
                    self.assertIn(replacement, reported)

    def test_nvidia_whole_gpu(self):
        self.assertCarriedOver('nvidia_gpu', nvidia_gpu.NvidiaGpuDriver, T4)
        self.assertRetiredWhenDescriptive('nvidia_gpu',
                                          nvidia_gpu.NvidiaGpuDriver, T4)

    def test_nvidia_vgpu(self):
        self.tree.write(T4_VGPU, 'mdev_supported_types/nvidia-222/name',
                        TYPE_NAME)
        theirs, ours = self.assertCarriedOver(
            'vgpu', nvidia_gpu.NvidiaGpuDriver, T4_VGPU)
        self.assertIn('CUSTOM_NVIDIA_1EB8_T4_1B',
                      theirs['deployables'][0]['traits'])
        self.assertRetiredWhenDescriptive('vgpu', nvidia_gpu.NvidiaGpuDriver,
                                          T4_VGPU)

    def test_generic_pci(self):
        self.assertCarriedOver('pci', generic_pci.GenericPciDriver, T4)
        self.assertRetiredWhenDescriptive('pci', generic_pci.GenericPciDriver,
                                          T4)

    def test_nvme_ssd(self):
        self.assertCarriedOver('nvme_ssd', nvme_ssd.NvmeSsdDriver, NVME)
        self.assertRetiredWhenDescriptive('nvme_ssd', nvme_ssd.NvmeSsdDriver,
                                          NVME)

    def test_inspur_fpga(self):
        self.assertCarriedOver('inspur_fpga', inspur_fpga.InspurFpgaDriver,
                               INSPUR)

    def test_xilinx_fpga(self):
        # 17.0.0 offered one accelerator with both functions as handles;
        # ours hands out the user function.
        theirs, ours = self.assertCarriedOver(
            'xilinx_fpga', xilinx_fpga.XilinxFpgaDriver, XILINX,
            same_handles=False)
        (dep,) = ours.deployables
        self.assertEqual([XILINX[:-1] + '1'], self.addresses(dep))
        self.assertIn(self.addresses(dep)[0],
                      theirs['deployables'][0]['handles'])

    def test_huawei_ascend(self):
        # 17.0.0 named the deployable after the model and the address, and
        # gave it no resource class: it never reached Placement.
        (theirs,) = cyborg17_reports()['huawei_ascend']
        ours = self._ours(huawei_ascend.HuaweiAscendDriver, ASCEND)
        self.assertEqual((theirs['type'], theirs['vendor']),
                         (ours.type, ours.vendor))
        self.assertEqual([None], [d['rc'] for d in theirs['deployables']])
        self.assertEqual([d['driver_name'] for d in theirs['deployables']],
                         [d.driver_name for d in ours.deployables])

    def test_intel_nic_vfs(self):
        self.assertCarriedOver('nic', intel_nic.IntelNicDriver, NIC)
        self.assertRetiredWhenDescriptive('nic', intel_nic.IntelNicDriver,
                                          NIC)

    def test_intel_nic_without_vfs(self):
        self.assertCarriedOver('nic_no_vfs', intel_nic.IntelNicDriver,
                               NIC_NO_VFS)

    def test_intel_qat(self):
        self.assertCarriedOver('qat', intel_qat.IntelQatDriver, QAT)

    def test_intel_fpga(self):
        self.assertCarriedOver('intel_fpga', intel_fpga.IntelFpgaDriver, PAC)
        self.assertRetiredWhenDescriptive('intel_fpga',
                                          intel_fpga.IntelFpgaDriver, PAC)
