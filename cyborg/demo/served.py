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
"""A real OpenStack service of its own virtualenv, in a process of its own.

The demo runs Keystone and Glance from their virtualenvs, each WSGI
application served by cheroot from a short program (``-c SERVE host port
threads``); :class:`Served` starts such a process, waits until it
answers, and stops it with whatever it started.
"""

import os
import signal
# The services run from their own virtualenvs.
import subprocess  # nosec B404
import time

from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import session as ks_session


class Served:
    """A service served from ``venv`` on ``host``:``port``, state in ``state``.

    A subclass sets ``label`` (its name in messages) and ``error`` (the
    exception it raises).
    """

    label = None
    error = Exception

    def __init__(self, state, port, venv, host, threads):
        self.state = os.path.abspath(state)
        self.port = port
        self.venv = os.path.abspath(venv)
        self.host = host
        self.threads = threads
        self.proc = None

    @property
    def url(self):
        return 'http://%s:%d' % (self.host, self.port)

    def _bin(self, name):
        return os.path.join(self.venv, 'bin', name)

    def _serve(self, program, env):
        """Run ``program`` with the virtualenv's Python, logging to state."""
        with open(os.path.join(self.state, 'server.log'), 'a') as log:
            self.proc = subprocess.Popen(  # nosec B603
                [self._bin('python'), '-c', program, self.host,
                 str(self.port), str(self.threads)],
                stdout=log, stderr=subprocess.STDOUT, env=env,
                start_new_session=True)

    def _wait(self, url, answered, timeout):
        """Poll ``url`` until ``answered(status code)``; stop on a timeout."""
        session = ks_session.Session()
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise self.error('%s exited with status %s; see %s' % (
                    self.label, self.proc.returncode, self.state))
            try:
                if answered(session.get(url, authenticated=False,
                                        raise_exc=False).status_code):
                    return
            except ks_exceptions.ConnectFailure:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise self.error('%s did not answer on %s within %d '
                                 'seconds' % (self.label, url, timeout))
            time.sleep(0.2)

    def stop(self):
        """Stop the server process (and anything it started)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.proc = None
