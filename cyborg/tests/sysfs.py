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
"""Simulated sysfs trees of hosts with accelerators: tests, quickstart.

A test fixture: hardware that cannot exist on a test machine, written as
the kernel shows it, for the drivers' unit tests
(:mod:`cyborg.tests.sysfs_tree`), the functional and load tests, the
benchmarks and the repository's quickstart (``tools/quickstart``), which
imports it from here rather than keep a copy.

A host is described in a few lines (see :func:`build`) and written out in
the kernel's layout: ``devices/pci<domain>:<bus>/<address>`` directories
with ``vendor``, ``device``, ``class`` and ``uevent`` files, the
``bus/pci/devices`` links to them, ``driver`` links into
``bus/pci/drivers``, ``physfn``/``virtfn<N>`` links between SR-IOV
functions, and the vendor files each driver reads. A device sits on its
root bus, or behind a PCIe bridge (:meth:`SysfsTree.bridge`) whose
directory holds it, as the kernel nests a card below its root port.
"""

import json
import os
import shutil

from cyborg.common import pci_address


class SysfsTree:
    """A simulated sysfs tree under ``root``."""

    def __init__(self, root):
        self.root = root
        self._counters = {}
        #: Intel FPGA card address -> the file showing its AFU id.
        self.afu_files = {}
        for sub in ('devices', 'bus/pci/devices', 'bus/pci/drivers',
                    'bus/mdev/devices'):
            os.makedirs(os.path.join(root, sub), exist_ok=True)

    # --- generic PCI --------------------------------------------------------

    def path(self, address, *rel):
        """The directory of device ``address``, or a path below it."""
        link = os.path.join(self.root, 'bus/pci/devices', address)
        if os.path.islink(link):
            return os.path.join(os.path.realpath(link), *rel)
        parts = pci_address.parse(address)
        return os.path.join(self.root, 'devices',
                            'pci%(domain)s:%(bus)s' % parts, address, *rel)

    def add_pci(self, address, vendor, product, class_code, driver=None,
                subsystem=None, numa_node=0, files=None, parent=None,
                behind=None, iommu_group=None):
        """Add one PCI function; ``parent`` places it beside that device.

        ``behind`` places it below that bridge (see :meth:`bridge`).
        ``files`` maps paths below the device directory to their text.
        ``numa_node`` -1 is a host without NUMA information (a VM's); an
        ``iommu_group`` number links the function into that group, and
        without one it has no ``iommu_group`` link, as on a host without
        an IOMMU (such a VM has no ``/sys/class/iommu`` either).
        """
        if parent is not None:
            path = os.path.join(os.path.dirname(self.path(parent)), address)
        elif behind is not None:
            path = self.path(behind, address)
        else:
            path = self.path(address)
        os.makedirs(path)
        sub_vendor, sub_product = subsystem or (vendor, product)
        for name, value in (('vendor', '0x' + vendor),
                            ('device', '0x' + product),
                            ('class', '0x' + class_code),
                            ('subsystem_vendor', '0x' + sub_vendor),
                            ('subsystem_device', '0x' + sub_product),
                            ('numa_node', str(numa_node))):
            _write(os.path.join(path, name), value)
        _write(os.path.join(path, 'uevent'), '\n'.join([
            'PCI_CLASS=%s' % class_code.upper().lstrip('0'),
            'PCI_ID=%s:%s' % (vendor.upper(), product.upper()),
            'PCI_SUBSYS_ID=%s:%s' % (sub_vendor.upper(), sub_product.upper()),
            'PCI_SLOT_NAME=%s' % address]))
        os.symlink(os.path.relpath(path, os.path.join(self.root,
                                                      'bus/pci/devices')),
                   os.path.join(self.root, 'bus/pci/devices', address))
        if driver:
            self.bind(address, driver)
        if iommu_group is not None:
            group = os.path.join(self.root, 'kernel/iommu_groups',
                                 str(iommu_group))
            os.makedirs(os.path.join(group, 'devices'), exist_ok=True)
            os.symlink(os.path.relpath(group, path),
                       os.path.join(path, 'iommu_group'))
            os.symlink(os.path.relpath(path, os.path.join(group, 'devices')),
                       os.path.join(group, 'devices', address))
        for rel, text in (files or {}).items():
            self.write(address, rel, text)
        return address

    def bind(self, address, driver):
        """Bind a device to the kernel driver ``driver``."""
        drv_dir = os.path.join(self.root, 'bus/pci/drivers', driver)
        os.makedirs(drv_dir, exist_ok=True)
        link = self.path(address, 'driver')
        if os.path.islink(link):
            os.unlink(link)
        os.symlink(os.path.relpath(drv_dir, self.path(address)), link)

    def add_vfs(self, pf, product, count, driver=None, total=None,
                first_offset=1, stride=1, files=None):
        """Enable ``count`` SR-IOV virtual functions of ``pf``.

        :returns: the addresses of the virtual functions.
        """
        vendor = self.read(pf, 'vendor')[2:]
        class_code = self.read(pf, 'class')[2:]
        self.write(pf, 'sriov_totalvfs', str(total or count))
        self.write(pf, 'sriov_numvfs', str(count))
        vfs = []
        for i in range(count):
            vf = pci_address.offset(pf, first_offset + i * stride)
            self.add_pci(vf, vendor, product, class_code, driver=driver,
                         parent=pf, files=files)
            os.symlink('../' + pf, self.path(vf, 'physfn'))
            os.symlink('../' + vf, self.path(pf, 'virtfn%d' % i))
            vfs.append(vf)
        return vfs

    def bridge(self, address, secondary, subordinate=None, behind=None):
        """A PCIe root or switch port, as the kernel shows it.

        It forwards to buses ``secondary`` to ``subordinate``
        (hexadecimal bus numbers); devices placed ``behind`` it are below
        its directory.
        """
        self.add_pci(address, '8086', '2030', '060400', driver='pcieport',
                     behind=behind, files={
                         'secondary_bus_number': str(int(secondary, 16)),
                         'subordinate_bus_number': str(
                             int(subordinate or secondary, 16))})
        return address

    # --- device kinds -------------------------------------------------------

    def intel_fpga(self, address, product='09c4', vfs=0, layout='dfl',
                   interface_id='9926ab6d-6c92-5a68-aabc-a7d84c545738',
                   afu_id=None, numa_node=0, behind=None):
        """An Intel PAC: FME with the PR interface id, a port with an AFU.

        ``layout`` is ``dfl`` (upstream DFL drivers) or ``intel`` (OPAE's
        intel-fpga driver). With VFs enabled the port moves to the first
        VF, as OPAE does when it assigns the port to a VF.
        """
        vf_product = {'09c4': '09c5', 'bcc0': 'bcc1', '0b2b': '0b2c',
                      '0b30': '0b31'}[product]
        n = self._next('fpga')
        if layout == 'dfl':
            driver = 'dfl-pci'
            fme = ('fpga_region/region%d/dfl-fme.%d/dfl-fme-region.%d/'
                   'fpga_region/region%d/compat_id' % (n, n, n, n + 100))
            afu = 'fpga_region/region%d/dfl-port.%d/afu_id' % (n, n)
            interface_id = interface_id.replace('-', '')
        else:
            driver = 'intel-fpga-pci'
            fme = ('fpga/intel-fpga-dev.%d/intel-fpga-fme.%d/pr/'
                   'interface_id' % (n, n))
            afu = 'fpga/intel-fpga-dev.%d/intel-fpga-port.%d/afu_id' % (n, n)
        self.add_pci(address, '8086', product, '120000', driver=driver,
                     numa_node=numa_node, files={fme: interface_id},
                     behind=behind)
        port = address
        if vfs:
            port = self.add_vfs(address, vf_product, vfs,
                                driver='vfio-pci')[0]
        self.write(port, afu, afu_id or '0' * 32)
        self.afu_files[address] = self.path(port, afu)
        return address

    def xilinx_fpga(self, address, product='5004',
                    logic_uuids=('a7c0f3c1d7ad4e0b9d6f1a2b3c4d5e6f',),
                    interface_uuids=('862c7020a250293e32036f19956669e5',),
                    xclbin_uuid=None,
                    vbnv='xilinx_u250_gen3x16_xdma_shell_3_1'):
        """An Alveo card: management function and the user function."""
        self.add_pci(address, '10ee', product, '058000', driver='xclmgmt',
                     files={'logic_uuids': '\n'.join(logic_uuids),
                            'interface_uuids': '\n'.join(interface_uuids),
                            'rom.m.0/VBNV': vbnv})
        user_product = '%04x' % (int(product, 16) + 1)
        self.add_pci(pci_address.offset(address, 1), '10ee', user_product,
                     '058000', driver='xocl',
                     files={'xclbinuuid': xclbin_uuid or '0' * 32})
        return address

    def nvidia_gpu(self, address, product='1eb8', mdev_types=None, vfs=0,
                   vf_mdev_types=None, class_code='030200', **pci):
        """An NVIDIA GPU; ``mdev_types`` maps vGPU types to instances.

        ``vf_mdev_types`` gives the types of each virtual function; ``pci``
        more options of :meth:`add_pci` (``subsystem``, ``numa_node``,
        ``iommu_group``, ``files``).
        """
        self.add_pci(address, '10de', product, class_code, driver='nvidia',
                     **pci)
        self._mdev_types(address, mdev_types or {})
        for vf in (self.add_vfs(address, product, vfs, driver='nvidia')
                   if vfs else []):
            self._mdev_types(vf, vf_mdev_types or {})
        return address

    def _mdev_types(self, address, types):
        for mdev_type, instances in types.items():
            base = os.path.join('mdev_supported_types', mdev_type)
            self.write(address, os.path.join(base, 'available_instances'),
                       str(instances))
            self.write(address, os.path.join(base, 'device_api'),
                       'vfio-pci')
            self.write(address, os.path.join(base, 'name'),
                       'GRID %s' % mdev_type)
            os.makedirs(self.path(address, base, 'devices'))
            # Writing a uuid here asks the kernel for an mdev.
            self.write(address, os.path.join(base, 'create'), '')

    def mdev(self, uuid, parent, mdev_type):
        """A mediated device that exists, as the kernel shows it."""
        type_dir = self.path(parent, 'mdev_supported_types', mdev_type)
        path = self.path(parent, uuid)
        os.makedirs(path)
        os.symlink(os.path.relpath(type_dir, path),
                   os.path.join(path, 'mdev_type'))
        _write(os.path.join(path, 'remove'), '')
        os.symlink(os.path.relpath(path, os.path.join(type_dir, 'devices')),
                   os.path.join(type_dir, 'devices', uuid))
        os.symlink(os.path.relpath(path, os.path.join(self.root,
                                                      'bus/mdev/devices')),
                   os.path.join(self.root, 'bus/mdev/devices', uuid))
        available = os.path.join(type_dir, 'available_instances')
        with open(available) as f:
            left = int(f.read())
        _write(available, str(left - 1))
        return path

    def intel_qat(self, address, product='37c8', vfs=0, services=None):
        """A QAT physical function; ``services`` like ``sym;asym``."""
        vf_product = {'0435': '0443', '37c8': '37c9', '19e2': '19e3',
                      '18ee': '18ef', '4940': '4941', '4942': '4943',
                      '4944': '4945'}[product]
        driver = {'37c8': 'c6xx', '4940': '4xxx'}.get(product, 'qat')
        self.add_pci(address, '8086', product, '0b4000', driver=driver,
                     files={'qat/cfg_services': services} if services
                     else None)
        if vfs:
            self.add_vfs(address, vf_product, vfs, driver=driver + 'vf')
        return address

    def intel_nic(self, address, product='1572', ifname='ens785f0', vfs=0,
                  vf_offset=16, behind=None):
        """An Intel Ethernet port with its netdev and VFs.

        The VFs of an X710 port start 16 routing ids after it.
        """
        vf_product = {'10fb': '10ed', '1572': '154c', '1583': '154c',
                      '158b': '154c', '37d2': '37cd', '1592': '1889',
                      '1593': '1889', '159b': '1889'}[product]
        self.add_pci(address, '8086', product, '020000', driver='i40e',
                     files={'net/%s/address' % ifname: '3c:fd:fe:00:00:01'},
                     behind=behind)
        if vfs:
            self.add_vfs(address, vf_product, vfs, driver='iavf',
                         first_offset=vf_offset)
        return address

    def nvme(self, address, vendor='144d', product='a808',
             model='Samsung SSD 970 EVO Plus 1TB', driver='nvme',
             partitions=0, holders=()):
        """An NVMe drive with one namespace (partitions, holders)."""
        ctrl = 'nvme%d' % self._next('nvme')
        ns = 'nvme/%s/%sn1' % (ctrl, ctrl)
        files = {'nvme/%s/model' % ctrl: model, ns + '/size': '1953525168'}
        for i in range(1, partitions + 1):
            files['%s/%sn1p%d/partition' % (ns, ctrl, i)] = str(i)
        for holder in holders:
            files['%s/holders/%s' % (ns, holder)] = ''
        self.add_pci(address, vendor, product, '010802', driver=driver,
                     files=files)
        return address

    def _next(self, kind):
        """The next instance number of a kind of kernel device."""
        self._counters[kind] = self._counters.get(kind, -1) + 1
        return self._counters[kind]

    def remove_pci(self, address):
        """Remove a device, as a hot-unplug does."""
        path = self.path(address)
        os.unlink(os.path.join(self.root, 'bus/pci/devices', address))
        shutil.rmtree(path)

    def aer_errors(self, address, fatal=0, nonfatal=0):
        """Set a device's uncorrectable AER counters as the kernel shows them.

        An agent takes a rise for a failing device.
        """
        for name, key, count in (('aer_dev_fatal', 'TOTAL_ERR_FATAL', fatal),
                                 ('aer_dev_nonfatal', 'TOTAL_ERR_NONFATAL',
                                  nonfatal)):
            self.write(address, name, 'Undefined 0\nDLP %d\n%s %d'
                       % (count, key, count))

    def write(self, address, rel, text):
        """Write a file below a device's directory."""
        _write(self.path(address, rel), text)

    def read(self, address, rel):
        with open(self.path(address, rel)) as f:
            return f.read().strip()


#: A host as a real one showed itself: a VM given a whole NVIDIA H200
#: (10de:2335, subsystem 10de:18bf, a 3D controller bound to the nvidia
#: driver) beside virtio functions. It has no NUMA information
#: (numa_node -1), no IOMMU (no iommu_group link), no AER counters, no
#: SR-IOV and no mdev types; resets are by FLR. The addresses are
#: illustrative.
H200_VM = [
    ('add_pci', '0000:00:02.0', dict(vendor='1af4', product='1000',
                                     class_code='020000',
                                     driver='virtio-pci', numa_node=-1)),
    ('add_pci', '0000:00:03.0', dict(vendor='1af4', product='1001',
                                     class_code='010000',
                                     driver='virtio-pci', numa_node=-1)),
    ('nvidia_gpu', '0000:00:05.0', dict(
        product='2335', subsystem=('10de', '18bf'), numa_node=-1,
        files={'reset_method': 'flr'})),
]


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write('%s\n' % text)


def build(root, description):
    """Write a simulated host under ``root``.

    ``description`` is a list of ``(kind, address, options)``: ``kind`` is
    a builder method of :class:`SysfsTree` (``add_pci``, or a device kind
    such as ``intel_fpga``), called with the address and the options.
    """
    tree = SysfsTree(root)
    for kind, address, options in description:
        getattr(tree, kind)(address, **options)
    return tree


def keep_or_build(root, description):
    """The simulated host ``description`` at ``root``, kept if it is there.

    A simulated host outlives the services that read it, as a real one
    does: the bitstreams loaded and the mdevs made for the instances that
    still run stay. It is built afresh (see :func:`build`) where ``root``
    holds none, or another host.

    :returns: the host's :attr:`SysfsTree.afu_files`.
    """
    record = os.path.join(root, 'host.json')
    try:
        with open(record) as f:
            kept = json.load(f)
        if kept['description'] == json.loads(json.dumps(description)):
            return kept['afu_files']
    except (OSError, ValueError, KeyError):
        pass
    shutil.rmtree(root, ignore_errors=True)
    tree = build(root, description)
    with open(record, 'w') as f:
        json.dump({'description': description,
                   'afu_files': tree.afu_files}, f)
    return tree.afu_files
