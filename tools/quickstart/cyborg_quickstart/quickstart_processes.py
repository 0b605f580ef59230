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
"""The quickstart's services as processes that outlive the command.

A launcher starts each service in a session of its own and exits; its
pid and start time go to ``run/<name>.pid`` under the state directory,
its output to ``logs/<name>.log``, so that a later command finds it,
waits for it to answer or stops it. :class:`ServiceProcesses` is mixed
into :class:`cyborg_quickstart.quickstart.Quickstart`, which sets
``state`` and ``path()``.
"""

import json
import os
import signal
# The quickstart starts its services.
import subprocess  # nosec B404
import sys
import time

from keystoneauth1 import exceptions as ks_exceptions

from cyborg_quickstart import nova_sim
from cyborg_quickstart import quickstart_demo

_LAUNCH = (
    'import subprocess, sys\n'
    'log = open(sys.argv[1], "ab")\n'
    'print(subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, '
    'stdout=log, stderr=subprocess.STDOUT, start_new_session=True).pid)\n')


def _started(pid):
    """When process ``pid`` started (clock ticks since boot), or None.

    None too for a process that ended and waits to be reaped.
    """
    try:
        with open('/proc/%d/stat' % pid) as f:
            # Fields after the command name, which may hold spaces: the
            # state is field 3, the start time field 22.
            fields = f.read().rsplit(')', 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in ('Z', 'X') else int(fields[19])


class ServiceProcesses:
    """Start, find, wait for and stop the services under ``state``."""

    def _pid(self, name):
        """The pid of service ``name`` if it runs, else None."""
        try:
            with open(self.path('run', name + '.pid')) as f:
                pid, started = json.load(f)
        except (OSError, ValueError):
            return None
        # A pid the kernel gave to another program since is not ours. The
        # start time tells (services may retitle their command line).
        return pid if _started(pid) == started else None

    def _spawn(self, name, argv, cwd=None, env=None):
        """Start a service in a session of its own, not as our child.

        A launcher starts it and exits, so the service outlives this
        process and nobody has to reap it. The launcher returns once the
        service's program runs, so its pid file is right at once. It runs
        in ``cwd`` (default: the state directory) with ``env``.
        """
        # Our own commands, from _commands() and NovaServices.commands().
        launched = subprocess.run(  # nosec B603
            [sys.executable, '-c', _LAUNCH,
             self.path('logs', name + '.log')] + argv,
            cwd=cwd or self.state, env=env, check=True,
            capture_output=True, text=True)
        pid = int(launched.stdout)
        with open(self.path('run', name + '.pid'), 'w') as f:
            json.dump([pid, _started(pid)], f)

    def services(self):
        """(name, pid or None) of every service that was started."""
        run = self.path('run')
        names = sorted(e[:-4] for e in os.listdir(run)
                       if e.endswith('.pid')) if os.path.isdir(run) else []
        return [(name, self._pid(name)) for name in names]

    def stop(self):
        # All at once: several take seconds to stop gracefully.
        services = self.services()
        for name, pid in services:
            if pid is not None:
                quickstart_demo.echo('== stopping %s (pid %d)' % (name, pid))
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        for name, pid in services:
            while self._pid(name) is not None and time.monotonic() < deadline:
                time.sleep(0.2)
            if self._pid(name) is not None:
                # Each service leads a session of its own: kill its
                # workers too, which would keep its port.
                os.killpg(pid, signal.SIGKILL)
            os.unlink(self.path('run', name + '.pid'))

    def _wait_http(self, name, url, timeout=120):
        adapter = nova_sim.cyborg_adapter(url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._pid(name) is None:
                raise quickstart_demo.QuickstartError('%s exited; see %s' % (
                    name, self.path('logs', name + '.log')))
            try:
                answered = adapter.get('').status_code < 500
            except ks_exceptions.ConnectionError:
                answered = False  # not listening yet
            if answered:
                return
            time.sleep(0.5)
        raise quickstart_demo.QuickstartError(
            '%s does not answer on %s; see %s' % (
                name, url, self.path('logs', name + '.log')))
