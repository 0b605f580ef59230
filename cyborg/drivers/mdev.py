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
"""Creating and removing mediated devices (mdev) through sysfs.

The kernel creates an mdev when its uuid is written to
``<parent>/mdev_supported_types/<type>/create`` and removes it when ``1``
is written to ``bus/mdev/devices/<uuid>/remove``. Both are idempotent
here, so a retried request does no harm. The writes need root: they go
through the ``[privsep_sysfs]`` daemon (:mod:`cyborg.privsep.mdev`).
"""

import os

from oslo_log import log

from cyborg import exception
from cyborg.i18n import _
from cyborg.privsep import mdev as priv_mdev

LOG = log.getLogger(__name__)


def _mdev_dir(sysfs_root, mdev_uuid):
    return os.path.join(sysfs_root, 'bus', 'mdev', 'devices', mdev_uuid)


def create(sysfs_root, parent_address, mdev_type, mdev_uuid):
    """Create mdev ``mdev_uuid`` of ``mdev_type`` on a parent device.

    :raises MdevFailed: the parent does not support the type, has no
        instance left, or another mdev has this uuid.
    """
    existing = _mdev_dir(sysfs_root, mdev_uuid)
    if os.path.exists(existing):
        parent = os.path.basename(os.path.dirname(os.path.realpath(
            existing)))
        current = os.path.basename(os.path.realpath(os.path.join(
            existing, 'mdev_type')))
        if (parent, current) == (parent_address, mdev_type):
            LOG.info('Mediated device %s exists already', mdev_uuid)
            return
        raise exception.MdevFailed(
            action='create', uuid=mdev_uuid,
            reason=_('it exists on %(parent)s as %(type)s') % {
                'parent': parent, 'type': current})
    create_file = os.path.join(sysfs_root, 'bus', 'pci', 'devices',
                               parent_address, 'mdev_supported_types',
                               mdev_type, 'create')
    if not os.path.exists(create_file):
        raise exception.MdevFailed(
            action='create', uuid=mdev_uuid,
            reason=_('device %(parent)s does not offer type %(type)s') % {
                'parent': parent_address, 'type': mdev_type})
    try:
        priv_mdev.create(sysfs_root, parent_address, mdev_type, mdev_uuid)
    except ValueError as e:
        raise exception.MdevFailed(action='create', uuid=mdev_uuid,
                                   reason=e)
    except OSError as e:
        # The kernel refuses with EINVAL or EDQUOT when no instance is left.
        raise exception.MdevFailed(
            action='create', uuid=mdev_uuid,
            reason=_('the kernel refused on %(parent)s: %(error)s') % {
                'parent': parent_address, 'error': e.strerror or e})
    LOG.info('Created mediated device %(uuid)s of type %(type)s on '
             '%(parent)s', {'uuid': mdev_uuid, 'type': mdev_type,
                            'parent': parent_address})


def remove(sysfs_root, mdev_uuid):
    """Remove an mdev; one that does not exist is already removed.

    :raises MdevFailed: the kernel refused, e.g. an instance still uses it.
    """
    try:
        priv_mdev.remove(sysfs_root, mdev_uuid)
    except FileNotFoundError:
        LOG.info('Mediated device %s does not exist; nothing to remove',
                 mdev_uuid)
        return
    except (OSError, ValueError) as e:
        raise exception.MdevFailed(action='remove', uuid=mdev_uuid,
                                   reason=getattr(e, 'strerror', None) or e)
    LOG.info('Removed mediated device %s', mdev_uuid)
