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
"""The PCI devices of this host, enumerated once for every driver.

Two backends give the same :class:`PciDevice` records: pyudev on a real
host (``[agent] sysfs_root`` is ``/sys``) and a walk of the sysfs tree under
any other root, which is how simulated hosts are read. Drivers read the
further files they need (FPGA regions, mdev types) through
:meth:`PciDevice.read` and :meth:`PciDevice.glob`, below the device's own
sysfs directory whichever backend found it.
"""

import dataclasses
import glob
import os

import pyudev

REAL_SYSFS = '/sys'


@dataclasses.dataclass(frozen=True)
class PciDevice:
    """One PCI function as the kernel shows it.

    Identifiers are lower-case hexadecimal without ``0x``: ``vendor_id``
    and ``product_id`` have four digits, ``class_code`` six.
    """

    address: str
    vendor_id: str
    product_id: str
    class_code: str
    subsystem_vendor_id: str
    subsystem_product_id: str
    #: Name of the bound kernel driver, or None.
    driver: str | None
    #: Address of the physical function of a virtual function, else None.
    physfn: str | None
    #: Addresses of this physical function's virtual functions, in order.
    virtfns: tuple
    numa_node: int | None
    #: The device's directory in sysfs.
    path: str = dataclasses.field(compare=False)

    def read(self, name, default=None):
        """The stripped text of the device file ``name``, or ``default``."""
        try:
            with open(os.path.join(self.path, name)) as f:
                return f.read().strip()
        except (FileNotFoundError, NotADirectoryError):
            return default

    def glob(self, pattern):
        """Paths below the device directory matching ``pattern``, sorted."""
        return sorted(glob.glob(os.path.join(self.path, pattern)))

    def read_all(self, *patterns):
        """The stripped texts of the files matching each pattern in turn."""
        texts = []
        for pattern in patterns:
            for path in self.glob(pattern):
                with open(path) as f:
                    texts.append(f.read().strip())
        return texts

    def class_is(self, prefix):
        """Whether the class code starts with ``prefix`` (2, 4 or 6 digits)."""
        return self.class_code.startswith(prefix)


def scan(sysfs_root=REAL_SYSFS):
    """Every PCI device of the host, by address, in address order.

    pyudev enumerates the real ``/sys``; any other root is walked as a
    simulated sysfs tree.
    """
    if os.path.realpath(sysfs_root) == REAL_SYSFS:
        return scan_udev()
    return scan_sysfs(sysfs_root)


def _by_address(devices):
    return {dev.address: dev
            for dev in sorted(devices, key=lambda d: d.address)}


def _hex(text, digits):
    return text.lower().removeprefix('0x').zfill(digits)


def _link_name(path):
    try:
        return os.path.basename(os.readlink(path))
    except OSError:
        return None


def _sriov_links(path):
    """The ``physfn`` and ``virtfn<N>`` links of a device directory."""
    virtfns = []
    for name in os.listdir(path):
        if name.startswith('virtfn') and name[6:].isdigit():
            virtfns.append((int(name[6:]),
                            _link_name(os.path.join(path, name))))
    return (_link_name(os.path.join(path, 'physfn')),
            tuple(addr for _, addr in sorted(virtfns)))


def _numa_node(path):
    try:
        with open(os.path.join(path, 'numa_node')) as f:
            node = int(f.read())
    except (FileNotFoundError, ValueError):
        return None
    return node if node >= 0 else None


def _read_id(path, name, digits):
    with open(os.path.join(path, name)) as f:
        return _hex(f.read().strip(), digits)


def scan_sysfs(root):
    """The PCI devices of the sysfs tree under ``root``, by address."""
    base = os.path.join(root, 'bus', 'pci', 'devices')
    try:
        names = os.listdir(base)
    except FileNotFoundError:
        return {}
    devices = []
    for address in names:
        path = os.path.realpath(os.path.join(base, address))
        try:
            physfn, virtfns = _sriov_links(path)
            devices.append(PciDevice(
                address=address,
                vendor_id=_read_id(path, 'vendor', 4),
                product_id=_read_id(path, 'device', 4),
                class_code=_read_id(path, 'class', 6),
                subsystem_vendor_id=_read_id(path, 'subsystem_vendor', 4),
                subsystem_product_id=_read_id(path, 'subsystem_device', 4),
                driver=_link_name(os.path.join(path, 'driver')),
                physfn=physfn, virtfns=virtfns,
                numa_node=_numa_node(path), path=path))
        except FileNotFoundError:
            # Removed while we looked: a hot-unplug event follows.
            continue
    return _by_address(devices)


def scan_udev():
    """The PCI devices that udev knows, by address."""
    devices = []
    for udev in pyudev.Context().list_devices(subsystem='pci'):
        props = udev.properties
        vendor_id, product_id = props['PCI_ID'].split(':')
        sub_vendor, sub_product = props.get('PCI_SUBSYS_ID',
                                            '0000:0000').split(':')
        path = udev.sys_path
        try:
            physfn, virtfns = _sriov_links(path)
        except FileNotFoundError:
            continue
        devices.append(PciDevice(
            address=udev.sys_name,
            vendor_id=_hex(vendor_id, 4), product_id=_hex(product_id, 4),
            class_code=_hex(props['PCI_CLASS'], 6),
            subsystem_vendor_id=_hex(sub_vendor, 4),
            subsystem_product_id=_hex(sub_product, 4),
            driver=udev.driver, physfn=physfn, virtfns=virtfns,
            numa_node=_numa_node(path), path=path))
    return _by_address(devices)
