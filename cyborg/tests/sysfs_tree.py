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
"""Simulated sysfs trees of hosts with accelerators, for tests and benches.

A host is described in a few lines (see :func:`build`) and written out in
the kernel's layout: ``devices/pci<domain>:<bus>/<address>`` directories
with ``vendor``, ``device``, ``class`` and ``uevent`` files, the
``bus/pci/devices`` links to them, ``driver`` links into
``bus/pci/drivers``, ``physfn``/``virtfn<N>`` links between SR-IOV
functions, and the vendor files each driver reads.
"""

import os
import shutil

import fixtures

from cyborg.drivers import pci


class SysfsTree:
    """A simulated sysfs tree under ``root``."""

    def __init__(self, root):
        self.root = root
        for sub in ('devices', 'bus/pci/devices', 'bus/pci/drivers',
                    'bus/mdev/devices'):
            os.makedirs(os.path.join(root, sub), exist_ok=True)

    # --- generic PCI --------------------------------------------------------

    def path(self, address, *rel):
        """The directory of device ``address``, or a path below it."""
        link = os.path.join(self.root, 'bus/pci/devices', address)
        if os.path.islink(link):
            return os.path.join(os.path.realpath(link), *rel)
        parts = pci.parse_address(address)
        return os.path.join(self.root, 'devices',
                            'pci%(domain)s:%(bus)s' % parts, address, *rel)

    def add_pci(self, address, vendor, product, class_code, driver=None,
                subsystem=None, numa_node=0, files=None, parent=None):
        """Add one PCI function; ``parent`` places it beside that device.

        ``files`` maps paths below the device directory to their text.
        """
        if parent is None:
            path = self.path(address)
        else:
            path = os.path.join(os.path.dirname(self.path(parent)), address)
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
            vf = pci.offset_address(pf, first_offset + i * stride)
            self.add_pci(vf, vendor, product, class_code, driver=driver,
                         parent=pf, files=files)
            os.symlink('../' + pf, self.path(vf, 'physfn'))
            os.symlink('../' + vf, self.path(pf, 'virtfn%d' % i))
            vfs.append(vf)
        return vfs

    def remove_pci(self, address):
        """Remove a device, as a hot-unplug does."""
        path = self.path(address)
        os.unlink(os.path.join(self.root, 'bus/pci/devices', address))
        shutil.rmtree(path)

    def write(self, address, rel, text):
        """Write a file below a device's directory."""
        _write(self.path(address, rel), text)

    def read(self, address, rel):
        with open(self.path(address, rel)) as f:
            return f.read().strip()


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


class SimulatedHost(fixtures.Fixture):
    """A simulated sysfs tree in a temporary directory, as the agent's root.

    Sets ``[agent] sysfs_root`` of ``conf`` to it.
    """

    def __init__(self, conf, description=()):
        super().__init__()
        self.conf = conf
        self.description = description

    def _setUp(self):
        root = self.useFixture(fixtures.TempDir()).path
        self.tree = build(root, self.description)
        self.conf.config(sysfs_root=root, group='agent')
