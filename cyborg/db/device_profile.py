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
"""Device profiles in the database: found by name, deleted all or none."""

import sqlalchemy as sa

from cyborg.db import api as db_api
from cyborg.db import models
from cyborg import exception


@db_api.main_context_manager.reader
def get_by_name(context, name):
    row = context.session.query(models.DeviceProfile).filter_by(
        name=name).first()
    if row is None:
        raise exception.DeviceProfileNotFound(name=name)
    return row


def _check_unused(context, profile):
    count = context.session.query(models.AcceleratorRequest).filter_by(
        device_profile_id=profile.id).count()
    if count:
        raise exception.DeviceProfileInUse(name=profile.name, count=count)


@db_api.retry_on_deadlock
@db_api.main_context_manager.writer
def delete_many(context, uuids=(), names=()):
    """Delete profiles by uuid and by name: all of them, or none.

    :returns: the deleted rows, as they were.
    :raises DeviceProfileNotFound: one of them does not exist.
    :raises DeviceProfileInUse: accelerator requests still use one.
    """
    model = models.DeviceProfile
    wanted = {('uuid', u) for u in uuids} | {('name', n) for n in names}
    rows = context.session.query(model).filter(sa.or_(
        model.uuid.in_(list(uuids)), model.name.in_(list(names)))).all()
    found = ({('uuid', r.uuid) for r in rows} |
             {('name', r.name) for r in rows})
    missing = sorted(v for k, v in wanted - found)
    if missing:
        raise exception.DeviceProfileNotFound(name=', '.join(missing))
    for row in rows:
        _check_unused(context, row)
    context.session.query(model).filter(
        model.id.in_([r.id for r in rows])).delete(
            synchronize_session=False)
    return rows
