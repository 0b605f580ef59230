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
"""Delivers the events that tell Nova ARQs are bound, until Nova takes them.

The state change that binds or fails an ARQ records its event in the same
transaction (:mod:`cyborg.db.nova_event`); the binding code then calls
:func:`due`. A :class:`Sender` thread in each conductor process sends the
due events in batches, removes those Nova took, and sends the others
again with exponential back-off until ``[conductor] nova_event_timeout``
has passed since they were made (Nova has given up waiting by then).
Binding never waits for Nova, and events outlive conductor restarts: a
restarted or another conductor sends what is left.

A bind done in its RPC call records its events held for :data:`HOLD`
seconds, as if its conductor had taken them, and hands them to the
process's sender in memory (``due(events)``): the sender sends them
without taking them from the database first. Should the conductor stop
before Nova took them, they fall due once the hold is over.
"""

import datetime
import threading
import time

from oslo_db import exception as db_exc
from oslo_log import log
from oslo_utils import timeutils

from cyborg.clients import nova
import cyborg.conf
from cyborg import context as cyborg_context
from cyborg.objects import nova_event as event_obj

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)

#: Events sent in one call to Nova.
BATCH = 100
#: Seconds an event is held by the conductor sending it, in which no
#: other conductor takes it; past them, one that died while sending it
#: leaves it to others.
HOLD = 120
#: The first retry waits this many seconds, each next one twice as long,
#: up to MAX_DELAY.
FIRST_DELAY = 1
MAX_DELAY = 30

_senders = set()
_senders_lock = threading.Lock()


def register(sender):
    """Have ``sender.wake()`` called whenever events are recorded."""
    with _senders_lock:
        _senders.add(sender)


def unregister(sender):
    with _senders_lock:
        _senders.discard(sender)


def hold():
    """Seconds to hold the events of a bind done in this process's call.

    :data:`HOLD` when a sender of this process is there to be handed them
    (:func:`due`); 0 when none is, so that they are due at once for any
    conductor's sender instead of waiting out a hold nobody keeps.
    """
    with _senders_lock:
        return HOLD if _senders else 0


def due(events=()):
    """Events were recorded: wake this process's senders.

    :param events: events recorded held for this process (:data:`HOLD`
        seconds): one sender sends them as they are. Without them, the
        senders take the due events from the database.
    """
    with _senders_lock:
        senders = list(_senders)
    if events:
        senders = senders[:1]
    for sender in senders:
        sender.wake(events)


def _delay(attempts):
    return min(FIRST_DELAY * 2 ** attempts, MAX_DELAY)


def deliver(context, client):
    """Send every event due now; return when none is left due."""
    while True:
        events = event_obj.NovaEvent.take_due(context, BATCH, HOLD)
        if not events:
            return
        oldest = timeutils.utcnow() - datetime.timedelta(
            seconds=CONF.conductor.nova_event_timeout)
        late, current = [], []
        for event in events:
            made = event.created_at.replace(tzinfo=None)
            (late if made < oldest else current).append(event)
        if late:
            LOG.error('Gave up telling Nova about accelerator requests %s: '
                      'not delivered within [conductor] nova_event_timeout '
                      '(%d s)', [e.arq_uuid for e in late],
                      CONF.conductor.nova_event_timeout)
            event_obj.NovaEvent.delete_many(context, late)
        if current:
            send(context, client, current)
        if len(events) < BATCH:
            return


def send(context, client, events):
    """Send events taken (or held) for this process, in one call.

    Those Nova took are removed; the others fall due again after a
    back-off.

    :returns: the seconds until those fall due, or None when Nova took
        all.
    """
    done = client.send_arq_events(context, [
        nova.arq_event(e.instance_uuid, e.arq_uuid, e.status)
        for e in events])
    taken = [e for e, ok in zip(events, done) if ok]
    left = [e for e, ok in zip(events, done) if not ok]
    if taken:
        event_obj.NovaEvent.delete_many(context, taken)
    if left:
        delay = _delay(min(e.attempts for e in left))
        LOG.warning('%(count)d accelerator request events are sent to '
                    'Nova again in %(delay)d s',
                    {'count': len(left), 'delay': delay})
        event_obj.NovaEvent.try_later(context, left, delay)
        return delay
    return None


class Sender:
    """Sends due events in a thread of its own; :meth:`wake` hurries it.

    Between wake-ups it sleeps until the next event falls due, at most
    ``[DEFAULT] periodic_interval`` seconds (events another conductor
    recorded wake no thread here). Events handed to it in memory are sent
    as they are; only a wake-up without events, or the time of the next
    due one, makes it look in the database.
    """

    def __init__(self):
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = None
        self._lock = threading.Lock()
        self._handed = []
        self._look = True

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='nova-event-sender')
        self._thread.start()
        register(self)

    def stop(self):
        unregister(self)
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(30)

    def wake(self, events=()):
        """Send ``events`` (held for this process), or look for due ones."""
        with self._lock:
            if events:
                self._handed.extend(events)
            else:
                self._look = True
        self._wake.set()

    def _woken(self):
        """The events handed since the last turn, and whether to look."""
        with self._lock:
            handed, self._handed = self._handed, []
            look, self._look = self._look, False
        return handed, look

    def _run(self):
        context = cyborg_context.get_admin_context()
        client = nova.NovaClient(CONF)
        look_at = time.monotonic()
        while not self._stopping.is_set():
            self._wake.wait(max(look_at - time.monotonic(), 0))
            self._wake.clear()
            handed, look = self._woken()
            look = look or time.monotonic() >= look_at
            try:
                if handed:
                    delay = send(context, client, handed)
                    if delay is not None:
                        look_at = min(look_at, time.monotonic() + delay)
                if look:
                    deliver(context, client)
                    look_at = time.monotonic() + self._until_next(context)
            except db_exc.DBConnectionError as e:
                # The events are in the database: they wait there for it.
                LOG.warning('Cannot reach the database to send events to '
                            'Nova; trying again in %(delay)d s: %(err)s',
                            {'delay': CONF.periodic_interval, 'err': e})
                look_at = time.monotonic() + CONF.periodic_interval
            except Exception:
                LOG.exception('Sending events to Nova failed; trying again '
                              'in %d s', CONF.periodic_interval)
                look_at = time.monotonic() + CONF.periodic_interval

    @staticmethod
    def _until_next(context):
        when = event_obj.NovaEvent.next_due(context)
        if when is None:
            return CONF.periodic_interval
        seconds = (when - timeutils.utcnow()).total_seconds()
        return min(max(seconds, 0), CONF.periodic_interval)
