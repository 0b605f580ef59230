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
"""Servers on the ``fake://`` transport take a message as it is sent.

oslo.messaging's in-process driver has each server look at its queues
every 50 ms, sleeping in between, so every RPC call in
``cyborg-all-in-one`` (and in the fast tests) waited 25 ms on average
before the conductor saw it. :func:`prompt` makes its servers wait on a
condition that every delivery (and a server's stop) notifies instead,
with the same queues, messages and replies.
"""

import threading
import time

from oslo_messaging._drivers import base
from oslo_messaging._drivers import impl_fake

# Notified after each delivery; held while a server looks at its queues
# and until it waits, so that no delivery goes unnoticed in between.
_delivered = threading.Condition()
_prompt = []


def _poll(self, timeout=None):
    """FakeListener.poll: the next message, waiting for deliveries."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while not self._stopped.is_set():
        with _delivered:
            for target in self._targets:
                exchange = self._exchange_manager.get_exchange(
                    target.exchange)
                ctxt, message, reply_q, requeue = exchange.poll(
                    target, self._pool)
                if message is not None:
                    return impl_fake.FakeIncomingMessage(
                        ctxt, message, reply_q, requeue)
            pause = 1.0
            if deadline is not None:
                pause = min(pause, deadline - time.monotonic())
                if pause <= 0:
                    return None
            _delivered.wait(pause)
    return None


def _stop(self):
    """FakeListener.stop, waking its server."""
    self._stopped.set()
    with _delivered:
        _delivered.notify_all()


def _deliver_message(deliver):
    def deliver_message(self, *args, **kwargs):
        deliver(self, *args, **kwargs)
        with _delivered:
            _delivered.notify_all()
    return deliver_message


def prompt():
    """Have ``fake://`` servers wait for deliveries, not poll; idempotent."""
    with _delivered:
        if _prompt:
            return
        impl_fake.FakeExchange.deliver_message = _deliver_message(
            impl_fake.FakeExchange.deliver_message)
        impl_fake.FakeListener.poll = base.batch_poll_helper(_poll)
        impl_fake.FakeListener.stop = _stop
        _prompt.append(True)
