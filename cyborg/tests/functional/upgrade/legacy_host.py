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
"""Simulated hosts that openstack-cyborg 17.0.0's own agent can read.

17.0.0's drivers read the fixed paths ``/sys/bus/pci/devices``,
``/sys/class/fpga`` and ``/sys/class/net``, name deployables after
``socket.gethostname()`` and run ``lspci``. :func:`command` runs its
``cyborg-agent`` in mount and UTS namespaces of its own (``unshare``, as
root): the simulated tree is bound over ``/sys``, the host name is the
simulated host's, and a stand-in ``lspci`` that lists the tree comes first
on ``PATH``. Nothing outside the namespaces changes.
"""

import os
import shlex
import sys

from cyborg.common import pci_address
from cyborg.tests import sysfs

#: Cards of every kind both 17.0.0 and this release drive, but two that
#: 17.0.0 could not have offered: Huawei Ascend (its driver reports
#: deployables without attributes, and its agent then reports nothing at
#: all) and NVMe drives (its SSD driver takes Inspur's only, and its
#: Inspur FPGA driver reports those a second time, as FPGAs): ``(kind,
#: address, options)`` as :func:`cyborg.tests.sysfs.build` takes them. A
#: kind whose card offers one accelerator has two cards, so that a server
#: booted after the switch finds one free.
DESCRIPTION = tuple(
    (kind, address, options) for kind, addresses, options in (
        ('intel_fpga', ('0000:5e:00.0', '0000:5f:00.0'),
         dict(vfs=1, layout='intel',
              interface_id='9926ab6d6c925a68aabca7d84c545738')),
        ('xilinx_fpga', ('0000:af:00.0', '0000:b0:00.0'), {}),
        ('add_pci', ('0000:b1:00.0', '0000:b2:00.0'),
         dict(vendor='1bd4', product='a115', class_code='120000')),
        ('nvidia_gpu', ('0000:3b:00.0', '0000:3c:00.0'), {}),
        ('nvidia_gpu', ('0000:d8:00.0',),
         dict(mdev_types={'nvidia-222': 4})),
        ('nvidia_gpu', ('0000:86:00.0',), dict(product='20b5', vfs=2)),
        ('add_pci', ('0000:17:00.0', '0000:17:00.1'),
         dict(vendor='1d0f', product='efa1', class_code='020000')),
        ('intel_nic', ('0000:18:00.0',), dict(product='1572', vfs=2)),
        ('intel_qat', ('0000:3d:00.0',), dict(vfs=2)),
    ) for address in addresses)
#: What 17.0.0's agent is configured with to offer those cards.
CONFIG = {
    'agent': {'enabled_drivers': ','.join((
        'intel_fpga_driver', 'xilinx_fpga_driver', 'inspur_fpga_driver',
        'nvidia_gpu_driver', 'pci_driver', 'intel_nic_driver',
        'intel_qat_driver', 'fake_driver'))},
    'gpu_devices': {'enabled_vgpu_types': 'nvidia-222'},
    'vgpu_nvidia-222': {'device_addresses': '0000:d8:00.0'},
    'pci': {'passthrough_whitelist':
            '{"vendor_id": "1d0f", "product_id": "efa1"}'},
    'nic_devices': {'enabled_nic_types': 'x710_static'},
    'x710_static': {'physical_device_mappings': 'physnet1:ens785f0',
                    'function_device_mappings': 'GTPv1:ens785f0'},
}

#: What ``lspci -nn`` calls a class and a vendor's device.
_CLASSES = {'0302': '3D controller', '0300': 'VGA compatible controller',
            '1200': 'Processing accelerators', '0b40': 'Co-processor',
            '0200': 'Ethernet controller', '0108':
            'Non-Volatile memory controller', '0580': 'Memory controller'}
_VENDORS = {'10ee': 'Xilinx Corporation Device',
            '1bd4': 'Inspur Electronic Information Industry Co., Ltd. '
                    'Device',
            '10de': 'NVIDIA Corporation Device',
            '8086': 'Intel Corporation Device',
            '19e5': 'Huawei Technologies Co., Ltd. Device',
            '1d0f': 'Amazon.com, Inc. Device'}

#: ``lspci -nn -D`` (or ``-nnn``) and ``lspci -k -s ADDRESS`` of the tree
#: bound over /sys.
_LSPCI = '''#!{python}
import os, sys
classes, vendors = {classes!r}, {vendors!r}
root = '/sys/bus/pci/devices'
only = sys.argv[sys.argv.index('-s') + 1] if '-s' in sys.argv else None
for address in sorted(os.listdir(root)):
    if only and address != only:
        continue
    def read(name):
        with open(os.path.join(root, address, name)) as f:
            return f.read().strip()[2:]
    vendor, device, cls = read('vendor'), read('device'), read('class')[:4]
    print('%s %s [%s]: %s [%s:%s] (rev 01)' % (
        address, classes.get(cls, 'Unclassified device'), cls,
        vendors.get(vendor, 'Device'), vendor, device))
    if '-k' in sys.argv:
        driver = os.path.join(root, address, 'driver')
        if os.path.islink(driver):
            print('\\tKernel driver in use: %s' % os.path.basename(
                os.readlink(driver)))
'''


#: An API's WSGI application (``cyborg.wsgi.api``) served on loopback
#: under ``/accelerator``, as devstack and the upgrade guide mount it, by
#: the standard library's threaded server: 17.0.0's ``cyborg-api``
#: command needs the eventlet backend of oslo.service, which the versions
#: it installs with no longer default to. 17.0.0's application reads
#: ``--config-file`` from the command line, ours ``CYBORG_CONFIG_FILE``.
_API = '''
import os, socketserver, sys
from wsgiref import simple_server, util
port = int(sys.argv.pop(1))
os.environ['CYBORG_CONFIG_FILE'] = sys.argv[sys.argv.index('--config-file')
                                            + 1]
from cyborg.wsgi import api
def mounted(environ, start_response):
    if util.shift_path_info(environ) != 'accelerator':
        start_response('404 Not Found', [('Content-Length', '0')])
        return [b'']
    if environ.get('CONTENT_LENGTH', '0') in ('', '0'):
        # wsgiref says text/plain for a request without a Content-Type.
        environ.pop('CONTENT_TYPE', None)
    return api.application(environ, start_response)
class Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True
simple_server.make_server('127.0.0.1', port, mounted,
                          server_class=Server).serve_forever()
'''
#: Where :func:`api_command` serves the API.
PREFIX = '/accelerator'


def api_command(python, port):
    """The API with ``python`` on ``port``; add ``--config-file``."""
    # -P: not the working directory, where this release's cyborg may be.
    return [str(python), '-P', '-c', _API, str(port)]


def addresses():
    """The PCI address of each device 17.0.0 records for such a host.

    A device for each card (the card's first function), one for each VF
    of an NVIDIA GPU, and one for the fake driver's card.
    """
    found = {'0000:0c:00.0'}
    for kind, address, options in DESCRIPTION:
        found.add(address)
        if kind == 'nvidia_gpu':
            found.update(pci_address.offset(address, n + 1)
                         for n in range(options.get('vfs', 0)))
    return found


def build(root):
    """The simulated host under ``root``, with its class links."""
    tree = sysfs.build(root, DESCRIPTION)
    for kind, address, options in DESCRIPTION:
        if kind == 'xilinx_fpga':
            # Alveo functions are processing accelerators to lspci.
            for function in (address, pci_address.offset(address, 1)):
                tree.write(function, 'class', '0x120000')
        elif kind == 'intel_fpga':
            fpga = tree.path(address, 'fpga')
            _link(tree, 'class/fpga', fpga, os.listdir(fpga)[0])
        elif kind == 'intel_nic':
            net = tree.path(address, 'net')
            _link(tree, 'class/net', net, os.listdir(net)[0])
        elif options.get('mdev_types'):
            # 17.0.0 makes mediated devices through the mdev_bus class.
            _link(tree, 'class/mdev_bus', os.path.dirname(
                tree.path(address)), address)
    return tree


def _link(tree, where, directory, name):
    os.makedirs(os.path.join(tree.root, where), exist_ok=True)
    link = os.path.join(tree.root, where, name)
    os.symlink(os.path.relpath(os.path.join(directory, name),
                               os.path.dirname(link)), link)


def write_tools(bin_dir):
    """Write the stand-ins ``lspci`` and ``fpgaconf`` into ``bin_dir``.

    ``fpgaconf`` notes its arguments in ``fpgaconf.log`` there.
    """
    os.makedirs(bin_dir, exist_ok=True)
    for name, text in (
            ('lspci', _LSPCI.format(python=sys.executable, classes=_CLASSES,
                                    vendors=_VENDORS)),
            ('fpgaconf', '#!/bin/sh\necho "$@" >> %s\n' % shlex.quote(
                os.path.join(bin_dir, 'fpgaconf.log')))):
        path = os.path.join(bin_dir, name)
        with open(path, 'w') as f:
            f.write(text)
        os.chmod(path, 0o755)


def programmed(bin_dir):
    """The argument lists ``fpgaconf`` was run with, as lines."""
    try:
        with open(os.path.join(bin_dir, 'fpgaconf.log')) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def command(argv, root, hostname, bin_dir):
    """``argv`` run on the simulated host under ``root`` named ``hostname``.

    ``bin_dir`` (see :func:`write_tools`) comes first on ``PATH``, and
    its files show in ``/usr/bin`` too (an overlay), where 17.0.0's Intel
    FPGA driver runs ``/usr/bin/fpgaconf``.
    """
    script = ('mount --bind {root} /sys && hostname {host} && '
              'mount -t overlay overlay -o lowerdir={bin}:/usr/bin /usr/bin '
              '&& PATH={bin}:$PATH exec "$@"').format(
        root=shlex.quote(root), host=shlex.quote(hostname),
        bin=shlex.quote(bin_dir))
    return ['unshare', '--mount', '--uts', '--propagation', 'private',
            'sh', '-c', script, 'sh'] + list(argv)
