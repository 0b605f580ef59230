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
"""Functional tests: real databases, real Placement, real messaging.

The database servers are chosen in :mod:`cyborg.tests`. RabbitMQ is found
through ``CYBORG_TEST_RABBIT_URL``.
"""

import itertools
import os
import socket
import subprocess
import time
import urllib.parse

import requests
import testtools
from testtools import content

RABBIT_URL = os.environ.get('CYBORG_TEST_RABBIT_URL',
                            'rabbit://guest:guest@127.0.0.1:5672/')


def tunable(name, default):
    """An outage length or load size: ``CYBORG_TEST_<NAME>`` or ``default``.

    The defaults are as small as still proves the property (the services
    meet the outage, retry through it and recover after it; more instances
    than devices bind at once); the larger values the guides quote are
    set in the environment (``doc/source/contributor/testing.rst``).
    """
    return type(default)(os.environ.get('CYBORG_TEST_' + name, default))


#: Where the servers of the tests listen: below Linux's range of ports for
#: outgoing connections (32768-60999), so that no connection takes the port
#: of a server that a test stops and starts again, in a block of its own
#: for each pytest-xdist worker, so that workers never pick the same one.
PORTS_START = 20000
PORTS_PER_WORKER = 2000
_ports = itertools.count()


def free_ports(count):
    """``count`` loopback ports of this test process, free a moment ago."""
    worker = int(os.environ.get('PYTEST_XDIST_WORKER', 'gw0')[len('gw'):])
    first = PORTS_START + worker * PORTS_PER_WORKER
    ports = []
    for _ in range(PORTS_PER_WORKER):
        port = first + next(_ports) % PORTS_PER_WORKER
        with socket.socket() as sock:
            try:
                sock.bind(('127.0.0.1', port))
            except OSError:
                continue
        ports.append(port)
        if len(ports) == count:
            return ports
    raise RuntimeError('no free port left in %d-%d' % (
        first, first + PORTS_PER_WORKER - 1))


def rabbitmqctl(*args):
    """Run ``rabbitmqctl -q`` with ``args``; its exit status (1: none)."""
    try:
        return subprocess.run(('rabbitmqctl', '-q') + args,
                              capture_output=True, timeout=60).returncode
    except (OSError, subprocess.TimeoutExpired):
        return 1


def vhost(name):
    """Make RabbitMQ virtual host ``name`` for ``guest``; its URL.

    None when ``rabbitmqctl`` cannot make it.
    """
    if rabbitmqctl('add_vhost', name) or rabbitmqctl(
            'set_permissions', '-p', name, 'guest', '.*', '.*', '.*'):
        return None
    return urllib.parse.urlsplit(RABBIT_URL)._replace(
        path='/' + name).geturl()


def wait(what, check, timeout=90):
    """Call ``check`` until it returns something true; return that.

    It asks again after 0.2 s, then less and less often, down to once a
    second: what holds at once is seen at once, and what takes minutes
    (servers booted through Nova) is not asked of the services hundreds
    of times, on a machine the other tests share.
    """
    deadline = time.monotonic() + timeout
    pause = 0.2
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError('timed out waiting for %s' % what)
        time.sleep(pause)
        pause = min(1.0, pause * 1.5)


def serves(url, status=None):
    """Whether ``url`` answers a GET: with ``status``, or any success."""
    try:
        response = requests.get(url, timeout=5)
    except requests.ConnectionError:
        return False
    return response.ok if status is None else response.status_code == status


def log_tails(directories, lines=150):
    """The last ``lines`` of each ``.log`` file in ``directories``.

    Without oslo.config's dump of the options a service starts with.
    """
    text = []
    for directory in directories:
        names = os.listdir(directory) if os.path.isdir(directory) else []
        for name in sorted(n for n in names if n.endswith('.log')):
            with open(os.path.join(directory, name), errors='replace') as f:
                kept = [line for line in f if 'log_opt_values' not in line]
            text.append('==== %s\n%s' % (name, ''.join(kept[-lines:])))
    return '\n'.join(text)


class ServicesTestCase(testtools.TestCase):
    """A test of services its class starts once, in ``setUpClass``.

    The class sets :attr:`skip_reason` where they cannot run, and
    :meth:`logs` gives what a failing test shows of them.
    """

    skip_reason = None

    def setUp(self):
        super().setUp()
        if self.skip_reason:
            self.skipTest(self.skip_reason)
        self.addOnException(lambda exc_info: self.addDetail(
            'service logs', content.text_content(self.logs())))

    def logs(self):
        """The end of the services' logs."""
        raise NotImplementedError
