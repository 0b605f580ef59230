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
"""A WSGI application served on loopback by cheroot, in a thread.

The demo services (Placement, the Nova event receiver, the image service)
and the tests that talk to real clients over real sockets all serve this
way.
"""

import socket
import threading

from cheroot import wsgi


class LoopbackServer:
    """``app`` served on ``host``:``port``; port 0 picks a free one.

    :param server: a cheroot server to run instead of a new one (such as
        the one ``cyborg-api`` makes); the other arguments are then
        ignored.
    """

    def __init__(self, app, host='127.0.0.1', port=0, threads=8,
                 name='cyborg-demo', server=None):
        self._server = server or wsgi.Server(
            (host, port), app, numthreads=threads, server_name=name,
            request_queue_size=socket.SOMAXCONN)
        self._name = name
        self._thread = None

    @property
    def url(self):
        host, port = self._server.bind_addr[:2]
        return 'http://%s:%d' % (host, port)

    def start(self):
        """Listen (so :attr:`url` is final), then serve in a thread."""
        self._server.prepare()
        self._thread = threading.Thread(target=self._server.serve,
                                        name=self._name, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._server.stop()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def serve_forever(self):
        """Serve in this thread until interrupted."""
        self._server.safe_start()
