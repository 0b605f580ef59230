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
"""Creating and removing mediated devices: the root part, in sysfs.

The kernel's ``create`` and ``remove`` attributes are root's, mode 0200.
These entrypoints run in the ``[privsep_sysfs]`` daemon and only write;
the checks that reading sysfs allows are the caller's
(:mod:`cyborg.drivers.mdev`). The daemon builds every path itself, below
its own ``[agent] sysfs_root``, from parts it checks, so a caller cannot
make it write anywhere else.
"""

import os
import re
import uuid

from cyborg.common import pci_address
import cyborg.conf
import cyborg.privsep

CONF = cyborg.conf.CONF

# mdev type names as drivers publish them: nvidia-222, i915-GVTg_V5_4.
_MDEV_TYPE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.:-]*$')


def _root(sysfs_root):
    """The daemon's sysfs root, which the caller's must be.

    :raises ValueError: the caller works on another tree.
    """
    root = CONF.agent.sysfs_root
    if os.path.realpath(sysfs_root) != os.path.realpath(root):
        raise ValueError('%s is not [agent] sysfs_root (%s) of the '
                         'privileged daemon' % (sysfs_root, root))
    return root


def _uuid(text):
    """``text`` as a canonical uuid; ValueError if it is none."""
    return str(uuid.UUID(text))


def _write(path, text):
    with open(path, 'w') as f:
        f.write(text)


@cyborg.privsep.sysfs_pctxt.entrypoint
def create(sysfs_root, parent_address, mdev_type, mdev_uuid):
    """Ask the kernel for mdev ``mdev_uuid`` of ``mdev_type``.

    :raises ValueError: an argument is malformed.
    :raises OSError: the write failed (no such type, no instance left).
    """
    pci_address.parse(parent_address)
    if not _MDEV_TYPE.match(mdev_type):
        raise ValueError('%r is not an mdev type name' % mdev_type)
    _write(os.path.join(_root(sysfs_root), 'bus', 'pci', 'devices',
                        parent_address, 'mdev_supported_types', mdev_type,
                        'create'), _uuid(mdev_uuid))


@cyborg.privsep.sysfs_pctxt.entrypoint
def remove(sysfs_root, mdev_uuid):
    """Ask the kernel to remove mdev ``mdev_uuid``.

    :raises ValueError: ``mdev_uuid`` is not a uuid.
    :raises OSError: the write failed; FileNotFoundError: no such mdev.
    """
    _write(os.path.join(_root(sysfs_root), 'bus', 'mdev', 'devices',
                        _uuid(mdev_uuid), 'remove'), '1')
