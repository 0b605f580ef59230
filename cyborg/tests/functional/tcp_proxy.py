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
"""A TCP proxy on loopback that a test can cut, as a server going away.

The shared database servers must keep running for everyone else; a
service under test reaches its server through this proxy instead, and the
test cuts it (every open connection dropped, new ones refused) and
restores it on the same port.
"""

import socket
import threading

import fixtures


class TCPProxy(fixtures.Fixture):
    """Forwards ``127.0.0.1:port`` to ``target`` (host, port)."""

    def __init__(self, target):
        super().__init__()
        self.target = target
        self.port = 0
        self._lock = threading.Lock()
        self._open = set()
        self._listener = None
        self._thread = None

    def _setUp(self):
        self.restore()
        self.addCleanup(self.cut)

    def restore(self):
        """Listen again (on the same port once one was chosen)."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(('127.0.0.1', self.port))
        listener.listen(64)
        listener.settimeout(0.1)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._thread = threading.Thread(target=self._accept,
                                        args=(listener,), daemon=True,
                                        name='tcp-proxy')
        self._thread.start()

    def cut(self):
        """Refuse new connections and drop the open ones."""
        listener, self._listener = self._listener, None
        if listener is None:
            return
        self._thread.join()
        listener.close()
        with self._lock:
            dropped, self._open = self._open, set()
        for sock in dropped:
            _close(sock)

    def _accept(self, listener):
        while self._listener is listener:
            try:
                client, _ = listener.accept()
            except socket.timeout:
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            server.settimeout(None)
            with self._lock:
                self._open.update((client, server))
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, sink),
                                 daemon=True, name='tcp-proxy-pipe').start()

    def _pipe(self, source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            with self._lock:
                self._open.discard(sock)
            _close(sock)


def _close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
