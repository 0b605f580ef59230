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
"""Stand-ins that record what they are asked.

A conductor and an agent serving RPC on the current transport, for tests
of the other side, and executables in place of vendor tools such as
``fpgaconf``.
"""

import json
import os
import sys
import threading

import fixtures
import oslo_messaging as messaging

from cyborg.agent import rpcapi as agent_rpcapi
from cyborg.common import rpc
from cyborg.common import service
from cyborg.conductor import rpcapi
from cyborg import exception
from cyborg.objects import base as objects_base


class StandInTool(fixtures.Fixture):
    """An executable standing in for a vendor tool such as ``fpgaconf``.

    It records each call's arguments (see :attr:`calls`), then runs
    ``effect``: Python source with ``args`` (the argument list) in scope,
    which may write files, print, exit with a status or hang.
    """

    def __init__(self, name, effect=''):
        super().__init__()
        self.name = name
        self.effect = effect

    def _setUp(self):
        directory = self.useFixture(fixtures.TempDir()).path
        self.path = os.path.join(directory, self.name)
        self._calls = self.path + '.calls'
        with open(self.path, 'w') as f:
            f.write('#!%s\n' % sys.executable)
            f.write('import json, sys\n'
                    'args = sys.argv[1:]\n'
                    'with open(%r, "a") as f:\n'
                    '    f.write(json.dumps(args) + "\\n")\n' % self._calls)
            f.write(self.effect + '\n')
        os.chmod(self.path, 0o755)

    @property
    def calls(self):
        if not os.path.exists(self._calls):
            return []
        with open(self._calls) as f:
            return [json.loads(line) for line in f]


class ConductorStandIn:
    """A ConductorManager-shaped RPC endpoint for agent tests.

    It answers ``compute_node_rp`` (``ResourceProviderNotFound`` for the
    first ``not_found`` calls, and for a name not in ``known`` when that is
    given) and records every ``report_host``; tests
    wait for reports with :meth:`wait_for_reports`. Agent tests use it to
    see exactly what an agent sends; the real conductor meets the agent
    in ``functional/conductor/test_processes.py``.
    """

    RPC_API_VERSION = rpcapi.ConductorAPI.RPC_API_VERSION
    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, rp_uuid, not_found=0, known=None):
        self.rp_uuid = rp_uuid
        self.not_found = not_found
        self.known = known
        self.lookups = []
        self.reports = []
        self._changed = threading.Condition()

    @rpc.expected_exceptions(exception.ResourceProviderNotFound)
    def compute_node_rp(self, context, hostname, rp_name):
        self.lookups.append((hostname, rp_name))
        if len(self.lookups) <= self.not_found or (
                self.known is not None and rp_name not in self.known):
            raise exception.ResourceProviderNotFound(name=rp_name)
        return self.rp_uuid

    def report_host(self, context, host_report):
        with self._changed:
            self.reports.append(host_report)
            self._changed.notify_all()

    def wait_for_reports(self, count, timeout=30, where=None):
        """Wait until ``count`` reports arrived; return them all.

        :param where: count only the reports this predicate accepts.
        """
        def arrived():
            return sum(1 for r in self.reports if where is None or where(r))

        with self._changed:
            if not self._changed.wait_for(lambda: arrived() >= count,
                                          timeout):
                raise AssertionError('%d report(s) after %d seconds, '
                                     'expected %d' % (arrived(), timeout,
                                                      count))
            return list(self.reports)


class StandInConductor(fixtures.Fixture):
    """A :class:`ConductorStandIn` serving on the current transport.

    It serves the shared topic, and the agents' topic of each of
    ``hosts`` (where this release's agents report; ``host1`` is the host
    of most agent tests).
    """

    def __init__(self, rp_uuid='4b9e6f3e-9d0c-4c8f-8c3b-0d7e6a5f4c3b',
                 not_found=0, host='conductor-test', known=None,
                 hosts=('host1',)):
        super().__init__()
        self.endpoint = ConductorStandIn(rp_uuid, not_found, known)
        self.host = host
        self.hosts = hosts

    def _setUp(self):
        servers = [(rpcapi.TOPIC, self.host)] + [
            (rpcapi.AGENT_TOPIC, host) for host in self.hosts]
        for topic, host in servers:
            server = service.RPCService(
                self.endpoint, topic, objects_base.CyborgObjectSerializer(),
                host=host)
            server.start()
            self.addCleanup(server.stop)


class AgentStandIn:
    """An AgentManager-shaped RPC endpoint for conductor tests.

    It records every call as ``(method, host, kwargs)`` in :attr:`calls`.
    ``failures`` maps a method name to the exception it raises (once per
    entry of a list, or every time for a single exception); ``hooks`` maps
    a method name to a callable run with the call's kwargs before it
    answers, where a test can act in the middle of a bind.
    ``program`` answers the asked bitstream id (or ``loaded`` when asked
    by function).
    """

    RPC_API_VERSION = agent_rpcapi.AgentAPI.RPC_API_VERSION
    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, host, loaded):
        self.host = host
        self.loaded = loaded
        self.calls = []
        self.failures = {}
        self.hooks = {}

    def _record(self, method, **kwargs):
        self.calls.append((method, self.host, kwargs))
        hook = self.hooks.get(method)
        if hook is not None:
            hook(**kwargs)
        failure = self.failures.get(method)
        if isinstance(failure, list):
            failure = failure.pop(0) if failure else None
        if failure is not None:
            raise failure

    def called(self, method):
        """The kwargs of each call of ``method``, oldest first."""
        return [kwargs for name, _host, kwargs in self.calls
                if name == method]

    @rpc.expected_exceptions(exception.CyborgException)
    def program(self, context, deployable_name, bitstream_id=None,
                function_id=None, function_name=None, allow_shell=False):
        self._record('program', deployable_name=deployable_name,
                     bitstream_id=bitstream_id, function_id=function_id,
                     function_name=function_name, allow_shell=allow_shell)
        return bitstream_id or self.loaded

    @rpc.expected_exceptions(exception.CyborgException)
    def create_mdev(self, context, mdev_uuid, mdev_type, parent_address):
        self._record('create_mdev', mdev_uuid=mdev_uuid, mdev_type=mdev_type,
                     parent_address=parent_address)

    @rpc.expected_exceptions(exception.CyborgException)
    def remove_mdev(self, context, mdev_uuid):
        self._record('remove_mdev', mdev_uuid=mdev_uuid)


class StandInAgent(fixtures.Fixture):
    """An :class:`AgentStandIn` serving ``host`` on the current transport."""

    def __init__(self, host='host1',
                 loaded='6e1c1d0a-3b39-4a4e-9a1c-6c0b1f0e2f11'):
        super().__init__()
        self.endpoint = AgentStandIn(host, loaded)

    def _setUp(self):
        server = service.RPCService(
            self.endpoint, agent_rpcapi.TOPIC,
            objects_base.CyborgObjectSerializer(), host=self.endpoint.host)
        server.start()
        self.addCleanup(server.stop)
