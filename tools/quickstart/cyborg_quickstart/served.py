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

The demo runs Keystone, Glance and Neutron from their virtualenvs, each
WSGI application served by cheroot from a short program (``-c SERVE host
port threads``); :class:`Served` checks the virtualenv, writes the
service's configuration, runs its management command, starts such a
process, waits until it answers, and stops it with whatever it started.
:func:`parser` and :func:`run` make the command line that serves one on
its own.
"""

import argparse
import json
import os
import signal
# The services run from their own virtualenvs.
import subprocess  # nosec B404
import sys
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

    def _require(self, command):
        """Raise :attr:`error` unless the virtualenv has ``command``."""
        if not os.path.exists(self._bin(command)):
            raise self.error('%s is not installed in %s: run '
                             'tools/setup-client-venvs.sh' % (self.label,
                                                              self.venv))

    def _write_config(self, text):
        """Write ``conf_file``, for its owner only: it may hold passwords."""
        with open(os.open(self.conf_file,
                          os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                  'w') as f:
            f.write(text)

    def _manage(self, command, *args, env=None):
        """Run ``command --config-file conf_file args`` of the virtualenv.

        A failure raises :attr:`error` with the end of what it printed.
        """
        result = subprocess.run(  # nosec B603
            [self._bin(command), '--config-file', self.conf_file] +
            list(args), capture_output=True, text=True, timeout=600,
            env=env)
        if result.returncode:
            raise self.error('%s %s failed:\n%s' % (
                command, ' '.join(args), result.stderr[-4000:]))

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


def parser(description, port, venv):
    """The command line of a served service: where, and whose tokens.

    :param port: the default port; ``venv`` the default virtualenv.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=port)
    parser.add_argument('--state-dir', required=True)
    parser.add_argument('--venv', default=venv,
                        help='the virtualenv the service is installed in')
    parser.add_argument('--authtoken-file', metavar='JSON',
                        help='a JSON object of [keystone_authtoken] '
                             'options: check tokens with that Keystone')
    return parser


def run(parser, make, argv=None):
    """Serve the service of :func:`parser`'s command line until stopped.

    :param make: ``make(args, authtoken)``: the :class:`Served` of the
        parsed arguments; ``authtoken`` holds the options of
        ``--authtoken-file``, or is None.
    """
    args = parser.parse_args(argv)
    authtoken = None
    if args.authtoken_file:
        with open(args.authtoken_file) as f:
            authtoken = json.load(f)
    service = make(args, authtoken)
    # The service runs in a session of its own: stopped with this
    # process, whether interrupted or terminated.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        service.start()
        print('%s serving on %s' % (service.label, service.url), flush=True)
        service.proc.wait()
    except service.error as e:
        parser.exit(2, 'error: %s\n' % e)
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()
