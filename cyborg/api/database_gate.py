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
"""503 until the database answers, for an API loaded before its database.

A WSGI server (uWSGI, mod_wsgi, gunicorn) imports ``cyborg.wsgi.api``
when it starts, perhaps a moment before the database does (a Galera node
still joining, a container started first). Opening the engine at import
would then wait ``[database] max_retries`` times ``retry_interval`` and
fail the load. Instead the engine is opened by a thread of the process
that serves (started by its first request, so after a pre-forking
server's fork), which tries again until the database answers; meanwhile
each request is answered ``503`` with a message that says so and a
``Retry-After``. A request that comes in the first seconds of the
thread's life waits for it, so an API whose database answers serves its
first request as before.
"""

import threading
import time

from oslo_log import log
from webob import exc as webob_exc

from cyborg.api import errors
from cyborg.i18n import _

LOG = log.getLogger(__name__)

#: How long the requests that come first wait for the engine (seconds):
#: enough to open it when the database answers.
FIRST_WAIT = 5.0

NOT_YET = _('The database cannot be reached yet: the API serves once it '
            'answers. Try the request again later.')


class DatabaseGate:
    """WSGI middleware: pass requests on once the engine is open.

    :param connect: opens the engine, raising while it cannot
        (:func:`cyborg.startup.open_database`).
    :param retry_interval: seconds between two attempts after oslo.db's
        own have failed, and the ``Retry-After`` of the 503.
    """

    def __init__(self, app, connect, retry_interval):
        self.app = app
        self.retry_interval = retry_interval
        self._connect = connect
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._since = None

    def _open(self):
        while True:
            try:
                self._connect()
            except Exception as exc:
                LOG.warning('The database cannot be reached yet; requests '
                            'are answered 503 until it is (%s: %s)',
                            type(exc).__name__, exc)
                time.sleep(self.retry_interval)
            else:
                LOG.info('The database answers: serving requests')
                self._ready.set()
                return

    def _wait(self):
        """Start the opening thread once; wait as :data:`FIRST_WAIT` says."""
        with self._lock:
            if self._since is None:
                self._since = time.monotonic()
                threading.Thread(target=self._open, daemon=True,
                                 name='database-gate').start()
        return self._ready.wait(max(
            0.0, self._since + FIRST_WAIT - time.monotonic()))

    def __call__(self, environ, start_response):
        if self._ready.is_set() or self._wait():
            return self.app(environ, start_response)
        response = errors.response_for(
            webob_exc.HTTPServiceUnavailable(NOT_YET))
        response.retry_after = int(self.retry_interval) or 1
        return response(environ, start_response)
