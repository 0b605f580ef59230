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
"""The ``fake://`` transport, with servers woken as messages arrive.

oslo.messaging's fake driver passes messages through in-process queues,
but its servers look at their queues every 50 ms: each call waited 25 ms
on average for a server that has nothing else to do, which bounded the
all-in-one process (``cyborg-all-in-one``, ``cyborg-api`` on
``fake://``) to a few dozen writes a second. Here a server waits on a
condition that every delivery signals, and so takes a message as soon
as it is queued. Messages are still serialised as the fake driver does,
so what works here works on RabbitMQ. As RabbitMQ does with its
mandatory flag, a message sent ``at_least_once`` to a server that no
server of the process listens as fails at once with
``MessageUndeliverable`` (the agents' reports, see
:class:`cyborg.conductor.rpcapi.AgentConductorAPI`).

oslo.messaging loads :class:`Driver` through its public driver entry
points (``cyborg-local://``, see :func:`transport_url`). The classes
build on oslo.messaging's private fake driver (its ``_drivers``
package): ``cyborg/tests/unit/common/test_local_rpc.py`` fails the day
it renames what they use. A fake
driver that wakes its listeners on delivery lets this module go.
"""

import collections
import threading
import time

import oslo_messaging as messaging
from oslo_messaging._drivers import base
from oslo_messaging._drivers import impl_fake

# Signalled whenever a message is queued on any exchange of the process.
_ARRIVED = threading.Condition()

# The longest a server sleeps between looks at its queues: a safety net,
# every delivery wakes it earlier.
_NAP = 1.0


class _Exchange(impl_fake.FakeExchange):

    def deliver_message(self, *args, **kwargs):
        super().deliver_message(*args, **kwargs)
        with _ARRIVED:
            _ARRIVED.notify_all()


class _ExchangeManager(impl_fake.FakeExchangeManager):
    # The process's exchanges, apart from those of the plain fake driver.
    _exchanges_lock = threading.Lock()
    _exchanges = {}
    # (exchange, topic, server): how many listeners serve it.
    _servers = collections.Counter()

    def listening(self, key, count):
        with self._exchanges_lock:
            self._servers[key] += count
            if self._servers[key] <= 0:
                del self._servers[key]

    def listened(self, key):
        with self._exchanges_lock:
            return key in self._servers

    def get_exchange(self, name):
        if name is None:
            name = self._default_exchange
        with self._exchanges_lock:
            return self._exchanges.setdefault(name, _Exchange(name))


class _Listener(impl_fake.FakeListener):

    def __init__(self, exchange_manager, targets, served):
        super().__init__(exchange_manager, targets)
        self._served = served
        exchange_manager.listening(served, 1)

    @base.batch_poll_helper
    def poll(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        with _ARRIVED:
            while not self._stopped.is_set():
                for target in self._targets:
                    exchange = self._exchange_manager.get_exchange(
                        target.exchange)
                    ctxt, message, reply_q, requeue = exchange.poll(
                        target, self._pool)
                    if message is not None:
                        return impl_fake.FakeIncomingMessage(
                            ctxt, message, reply_q, requeue)
                nap = _NAP
                if deadline is not None:
                    nap = min(nap, deadline - time.monotonic())
                    if nap <= 0:
                        return None
                _ARRIVED.wait(nap)
        return None

    def stop(self):
        if not self._stopped.is_set():
            self._exchange_manager.listening(self._served, -1)
        super().stop()
        with _ARRIVED:
            _ARRIVED.notify_all()


class Driver(impl_fake.FakeDriver):
    """The fake driver, its servers woken as messages are delivered."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._exchange_manager = _ExchangeManager(self._default_exchange)

    def listen(self, target, batch_size, batch_timeout):
        # A server listens on its own queue and on its topic's.
        exchange = target.exchange or self._default_exchange
        targets = [
            messaging.Target(topic=target.topic, server=server,
                             exchange=exchange)
            for server in (target.server, None)]
        served = (exchange, target.topic, target.server)
        return base.PollStyleListenerAdapter(
            _Listener(self._exchange_manager, targets, served), batch_size,
            batch_timeout)

    def send(self, target, ctxt, message, *args, transport_options=None,
             **kwargs):
        exchange = target.exchange or self._default_exchange
        if (transport_options is not None and
                transport_options.at_least_once and target.server and
                not self._exchange_manager.listened(
                    (exchange, target.topic, target.server))):
            raise messaging.MessageUndeliverable(
                None, exchange, '%s.%s' % (target.topic, target.server),
                message)
        return super().send(target, ctxt, message, *args,
                            transport_options=transport_options, **kwargs)


#: The transport name under which setup.cfg registers :class:`Driver` in
#: oslo.messaging's driver namespace (``oslo.messaging.drivers``).
SCHEME = 'cyborg-local'


def transport_url(conf, url):
    """``url``, a ``fake://`` transport URL, as one of this driver.

    oslo.messaging loads the driver named by the URL's scheme from its
    public entry points.
    """
    parsed = messaging.TransportURL.parse(conf, url)
    return messaging.TransportURL(conf, transport=SCHEME,
                                  virtual_host=parsed.virtual_host,
                                  hosts=parsed.hosts, query=parsed.query)
