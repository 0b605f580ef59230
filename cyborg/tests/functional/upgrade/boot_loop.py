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
"""Servers booted and deleted through Nova for as long as an upgrade runs.

A :class:`BootLoop` boots one server at a time, of each flavor in turn,
waits for it to settle, deletes it and waits for it to be gone, recording
each attempt under the phase of the upgrade it started in, and the one
it ended in. After a failed attempt it waits :data:`RETRY_SECONDS`, as
someone booting again would: a boot fails within a second while no
Cyborg API answers, and failing boots back to back only loaded Nova.
The upgrade changes :attr:`BootLoop.phase` as it goes, and the flavors
the loop boots where a phase serves more of them.
"""

import collections
import threading
import time
import uuid

#: One boot: the phase it started in, its flavor and node, whether the
#: server became ACTIVE (else its status and fault), when it started and
#: how long it took, deletion included, and the phase it ended in.
Attempt = collections.namedtuple(
    'Attempt', 'phase flavor node ok detail started seconds ended_in')

#: Seconds between a failed attempt and the next.
RETRY_SECONDS = 2


class BootLoop(threading.Thread):
    """Boots, and deletes, servers of each flavor in turn until stopped.

    :param compute: a keystoneauth adapter of Nova's compute API.
    :param image_id: the image servers boot from.
    :param flavors: ``[(name, flavor id, node)]``; change it with
        :meth:`boot_also`.
    """

    def __init__(self, compute, image_id, flavors, phase, timeout):
        super().__init__(daemon=True)
        self.compute = compute
        self.image_id = image_id
        self.flavors = list(flavors)
        self.phase = phase
        self.timeout = timeout
        self.attempts = []
        self._stopping = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._idle = threading.Event()

    def boot_also(self, flavors):
        """Boot ``flavors`` too from the next attempt on."""
        self.flavors = self.flavors + list(flavors)

    def pause(self):
        """Return once the attempt under way is done; boot no more."""
        self._running.clear()
        self._idle.wait()

    def resume(self):
        self._running.set()

    def stop(self):
        self._stopping.set()
        self._running.set()
        self.join(self.timeout * 2)

    def run(self):
        turn = 0
        while not self._stopping.is_set():
            if not self._running.is_set():
                self._idle.set()
                self._running.wait()
                continue
            self._idle.clear()
            name, flavor, node = self.flavors[turn % len(self.flavors)]
            turn += 1
            phase, started = self.phase, time.monotonic()
            try:
                ok, detail = self._boot_and_delete(flavor, node)
            except Exception as e:  # the API down, a timeout: recorded
                ok, detail = False, repr(e)
            self.attempts.append(Attempt(
                phase, name, node, ok, detail, started,
                time.monotonic() - started, self.phase))
            if not ok:
                self._stopping.wait(RETRY_SECONDS)
        self._idle.set()

    def _boot_and_delete(self, flavor, node):
        response = self.compute.post('/servers', json={'server': {
            'name': 'loop-' + uuid.uuid4().hex[:8],
            'imageRef': self.image_id, 'flavorRef': flavor,
            'networks': 'none', 'availability_zone': 'nova::%s' % node}},
            raise_exc=False)
        if response.status_code != 202:
            return False, 'POST %d %s' % (response.status_code,
                                          response.text[:200])
        server_id = response.json()['server']['id']
        server = self._until(server_id, lambda s: s['status'] != 'BUILD')
        ok = server is not None and server['status'] == 'ACTIVE'
        detail = None if ok else (server and (server['status'], server.get(
            'fault', {}).get('message')))
        self.compute.delete('/servers/%s' % server_id, raise_exc=False)
        if self._until(server_id, lambda s: False) is not None:
            return False, 'not deleted: %s' % (detail,)
        return ok, detail

    def _until(self, server_id, settled):
        """The server once ``settled``; None once gone or after timeout.

        It asks Nova's API as :func:`cyborg.tests.functional.wait` asks:
        after 0.2 s, then less and less often, down to once a second, so
        that a boot of several seconds is not asked about every half
        second on a machine the other tests share.
        """
        deadline = time.monotonic() + self.timeout
        server, pause = None, 0.2
        while time.monotonic() < deadline:
            response = self.compute.get('/servers/%s' % server_id,
                                        raise_exc=False)
            if response.status_code == 404:
                return None
            server = response.json()['server']
            if settled(server):
                return server
            time.sleep(pause)
            pause = min(1.0, pause * 1.5)
        return server

    def summary(self):
        """{phase: (attempts, failures)}, in the order phases came."""
        found = {}
        for attempt in self.attempts:
            count, failed = found.get(attempt.phase, (0, 0))
            found[attempt.phase] = (count + 1, failed + (not attempt.ok))
        return found
