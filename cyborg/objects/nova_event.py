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
"""NovaEvent: an ``accelerator-request-bound`` event not yet delivered.

Events are made by the ARQ state changes that resolve a bind; the
conductor's sender (:mod:`cyborg.conductor.nova_events`) takes the due
ones, sends them and removes those that Nova took.
"""

from cyborg.db import nova_event as nova_event_db
from cyborg.objects import base
from cyborg.objects import fields
from cyborg.objects import stored


@base.CyborgObjectRegistry.register
class NovaEvent(stored.StoredObject):
    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = dict(stored.StoredObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'instance_uuid': fields.UUIDField(),
        'arq_uuid': fields.UUIDField(),
        'status': fields.StringField(),
        'attempts': fields.IntegerField(),
        'next_try_at': fields.DateTimeField(),
    })

    @classmethod
    def take_due(cls, context, limit, hold):
        """Take up to ``limit`` due events for ``hold`` seconds."""
        return cls._from_db_objects(
            context, nova_event_db.take_due(context, limit, hold))

    @staticmethod
    def next_due(context):
        """When the earliest event falls due, or None."""
        return nova_event_db.next_due(context)

    @staticmethod
    def delete_many(context, events):
        nova_event_db.delete_many(context, [e.id for e in events])

    @staticmethod
    def try_later(context, events, delay):
        """Count a failed try; the events fall due again in ``delay`` s."""
        nova_event_db.try_later(context, [e.id for e in events], delay)
