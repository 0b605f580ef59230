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
"""The part of Nova's API that receives external events, on loopback.

Cyborg's conductor tells Nova that an instance's accelerator requests
are bound with ``POST /os-server-external-events``. This receiver answers
that call as Nova does and keeps what it received, for the boot simulator
and for tests. Per event it answers ``200``, ``422`` for an instance it
was told is not on a host yet (:meth:`EventReceiver.not_on_host`) or
``404`` for one it was told is gone (:meth:`EventReceiver.gone`), and the
whole call ``200`` when every event was accepted, ``207`` when some were
not and ``404`` when none was.

Cyborg reaches it with keystoneauth's ``admin_token`` plugin and
``endpoint`` set to :attr:`EventReceiver.url`.
"""

import collections
import json
import threading

from cyborg_quickstart import server

PATH = '/os-server-external-events'


class EventReceiver(server.LoopbackServer):
    """Records ``accelerator-request-bound`` and other external events."""

    def __init__(self, host='127.0.0.1', port=0):
        self.events = []
        # The same events by instance, so that many waiters stay cheap.
        self._by_instance = collections.defaultdict(list)
        self._waiting = set()
        self._gone = set()
        self._cond = threading.Condition()
        super().__init__(self, host, port, threads=4,
                         name='nova-events')

    def not_on_host(self, instance_uuid):
        """Answer 422 for the instance's events: it has no host yet."""
        with self._cond:
            self._waiting.add(instance_uuid)

    def gone(self, instance_uuid):
        """Answer 404 for the instance's events: it was deleted."""
        with self._cond:
            self._gone.add(instance_uuid)

    def for_instance(self, instance_uuid):
        """The events received for one instance, oldest first."""
        with self._cond:
            return list(self._by_instance.get(instance_uuid, ()))

    def wait_for(self, instance_uuid, count, timeout):
        """Wait until ``count`` events arrived for the instance.

        :returns: the instance's events (fewer than ``count`` on timeout).
        """
        with self._cond:
            self._cond.wait_for(
                lambda: len(self.for_instance(instance_uuid)) >= count,
                timeout)
            return self.for_instance(instance_uuid)

    def __call__(self, environ, start_response):
        if (environ['REQUEST_METHOD'] != 'POST' or
                not environ['PATH_INFO'].rstrip('/').endswith(PATH)):
            return _reply(start_response, '404 Not Found',
                          {'itemNotFound': {'code': 404,
                                            'message': 'not found'}})
        size = int(environ.get('CONTENT_LENGTH') or 0)
        body = json.loads(environ['wsgi.input'].read(size) or b'{}')
        answered = []
        with self._cond:
            for event in body.get('events', []):
                server = event.get('server_uuid')
                code = (404 if server in self._gone else
                        422 if server in self._waiting else 200)
                answered.append(dict(event, code=code))
                if code == 200:
                    self.events.append(dict(event))
                    self._by_instance[event.get('server_uuid')].append(
                        self.events[-1])
            self._cond.notify_all()
        codes = {e['code'] for e in answered}
        if codes == {200}:
            status = '200 OK'
        elif 200 in codes:
            status = '207 Multi-Status'
        else:
            status = '404 Not Found'
        return _reply(start_response, status, {'events': answered})


def _reply(start_response, status, body):
    data = json.dumps(body).encode()
    start_response(status, [('Content-Type', 'application/json'),
                            ('Content-Length', str(len(data)))])
    return [data]
