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
"""Device profile workflows: store, change and delete profiles."""

from oslo_log import log

from cyborg.conductor import notifications
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import device_profile

LOG = log.getLogger(__name__)


def create(context, profile):
    profile.create(context)
    LOG.info('Created device profile %(name)s (%(uuid)s)',
             {'name': profile.name, 'uuid': profile.uuid})
    notifications.device_profile_created(context, profile)
    return profile


def delete(context, uuids, names):
    profiles = device_profile.DeviceProfile.destroy_many(
        context, uuids=uuids, names=names)
    LOG.info('Deleted device profiles %s', sorted(set(uuids) | set(names)))
    notifications.device_profiles_deleted(context, profiles)


#: What an update may change. The name stays: flavors refer to it.
UPDATABLE = ('description', 'groups', 'enabled')


def update(context, uuid, values):
    """Change a profile's description, groups or enabled flag.

    Accelerator requests made from it keep the group they copied when
    they were created; a disabled profile makes no new ones.

    :raises InvalidParameterValue: ``values`` names another field.
    :raises DeviceProfileNotFound: there is no profile ``uuid``.
    """
    others = sorted(set(values) - set(UPDATABLE))
    if others:
        raise exception.InvalidParameterValue(
            name=', '.join(others),
            reason=_('a device profile update changes only %s') %
            ', '.join(UPDATABLE))
    profile = device_profile.DeviceProfile.get_by_uuid(context, uuid)
    changed = sorted(field for field, value in values.items()
                     if profile[field] != value)
    for field in changed:
        profile[field] = values[field]
    profile.save(context)
    LOG.info('Updated device profile %(name)s (%(uuid)s): %(fields)s',
             {'name': profile.name, 'uuid': profile.uuid,
              'fields': ', '.join(changed) or 'nothing changed'})
    return profile
