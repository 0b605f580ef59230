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

import os
import socket
import subprocess
import time

RABBIT_URL = os.environ.get('CYBORG_TEST_RABBIT_URL',
                            'rabbit://guest:guest@127.0.0.1:5672/')


def free_ports(count):
    """``count`` loopback ports that were free a moment ago."""
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(('127.0.0.1', 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def rabbitmqctl(*args):
    """Run ``rabbitmqctl -q`` with ``args``; its exit status (1: none)."""
    try:
        return subprocess.run(('rabbitmqctl', '-q') + args,
                              capture_output=True, timeout=60).returncode
    except (OSError, subprocess.TimeoutExpired):
        return 1


def wait(what, check, timeout=90):
    """Call ``check`` until it returns something true; return that."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError('timed out waiting for %s' % what)
        time.sleep(0.2)
