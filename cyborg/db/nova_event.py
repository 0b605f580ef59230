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
"""Events Nova is still to receive, kept until one conductor delivers them.

An event row is added in the transaction that moves its ARQ to Bound or
BindFailed (:func:`record`), so an ARQ is never resolved without Nova
being told, whatever happens to the conductor afterwards. A conductor
takes due events by moving their ``next_try_at`` on with a conditional
UPDATE (:func:`take_due`): of two conductors, one takes each event.
"""

import datetime

from oslo_utils import timeutils
import sqlalchemy as sa

from cyborg.db import api
from cyborg.db.api import main_context_manager
from cyborg.db import models
from cyborg import states

_MODEL = models.NovaEvent


def record(context, instance_uuid, arq_uuid, arq_state, hold=0):
    """Add the event of an ARQ that reached ``arq_state``.

    Runs in the caller's writer transaction, as one INSERT.

    :param hold: seconds the event is held, as :func:`take_due` holds the
        events it takes: the caller sends it once the transaction is
        committed, and no conductor takes it meanwhile. 0: due at once.
    :returns: the row, as inserted.
    """
    now = timeutils.utcnow()
    values = {'instance_uuid': instance_uuid, 'arq_uuid': arq_uuid,
              'status': states.NOVA_EVENT_STATUS[arq_state], 'attempts': 0,
              'next_try_at': now + datetime.timedelta(seconds=hold),
              'created_at': now}
    row_id, = context.session.execute(
        sa.insert(_MODEL.__table__).values(values)).inserted_primary_key
    return _MODEL(id=row_id, **values)


@api.retry_on_deadlock
@main_context_manager.writer
def take_due(context, limit, hold):
    """Take up to ``limit`` due events, oldest first, for ``hold`` seconds.

    Taking moves an event's ``next_try_at`` ``hold`` seconds on, so no
    other conductor takes it meanwhile; one that dies while sending
    leaves it to be taken again then.

    :returns: the rows taken.
    """
    now = timeutils.utcnow()
    due = context.session.query(_MODEL).filter(
        _MODEL.next_try_at <= now).order_by(_MODEL.id).limit(limit).all()
    later = now + datetime.timedelta(seconds=hold)
    taken = []
    for row in due:
        count = context.session.query(_MODEL).filter(
            _MODEL.id == row.id,
            _MODEL.next_try_at == row.next_try_at).update(
                {'next_try_at': later}, synchronize_session=False)
        if count:
            taken.append(row)
    return taken


@main_context_manager.reader
def next_due(context):
    """When the earliest event falls due, or None when there is none."""
    row = context.session.query(_MODEL.next_try_at).order_by(
        _MODEL.next_try_at).first()
    return row and row.next_try_at


@api.retry_on_deadlock
@main_context_manager.writer
def delete_many(context, ids):
    context.session.query(_MODEL).filter(_MODEL.id.in_(ids)).delete(
        synchronize_session=False)


@api.retry_on_deadlock
@main_context_manager.writer
def try_later(context, ids, delay):
    """Count a failed try of events ``ids``; they fall due in ``delay`` s."""
    context.session.query(_MODEL).filter(_MODEL.id.in_(ids)).update({
        'attempts': _MODEL.attempts + 1,
        'next_try_at': timeutils.utcnow() + datetime.timedelta(
            seconds=delay)}, synchronize_session=False)
