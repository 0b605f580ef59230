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
"""Test fixtures shared by unit and functional tests."""

import json
import os
import sys
import threading

import fixtures
import futurist
from oslo_config import cfg
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
import oslo_messaging as messaging

from cyborg.common import rpc
from cyborg.common import service
from cyborg.conductor import manager
from cyborg.conductor import rpcapi
import cyborg.conf
from cyborg.db import api as db_api
from cyborg.db import models
from cyborg import exception
from cyborg.objects import base as objects_base

CONF = cyborg.conf.CONF


class Database(fixtures.Fixture):
    """A private in-memory SQLite schema, built from the models.

    The migrations are proved equal to the models on every engine by
    ``cyborg.tests.functional.db.test_migrations``, so unit tests may use
    the quicker ``create_all``.
    """

    def _setUp(self):
        facade = enginefacade.transaction_context()
        facade.configure(connection='sqlite://', sqlite_fk=True)
        models.BASE.metadata.create_all(facade.writer.get_engine())
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_api.main_context_manager, facade))
        self.addCleanup(facade.writer.get_engine().dispose)


class RPC(fixtures.Fixture):
    """oslo.messaging on the in-process fake:// transport."""

    def _setUp(self):
        self.useFixture(fixtures.MonkeyPatch(
            'cyborg.common.rpc.TRANSPORT', None))
        rpc.init(CONF, url='fake://')
        self.addCleanup(rpc.cleanup)


class Conductor(fixtures.Fixture):
    """A conductor serving on fake:// in this process.

    Background binds run synchronously, so a test sees their outcome as
    soon as the RPC call returns.
    """

    def __init__(self, host='conductor-test'):
        super().__init__()
        self.host = host

    def _setUp(self):
        self.manager = manager.ConductorManager(
            self.host, executor=futurist.SynchronousExecutor())
        self.service = service.RPCService(
            self.manager, rpcapi.TOPIC,
            objects_base.CyborgObjectSerializer(), host=self.host)
        self.service.start()
        self.addCleanup(self.service.stop)


class Policy(fixtures.Fixture):
    """A fresh policy enforcer on its own parsed configuration.

    The enforcer needs a parsed configuration to look for policy files;
    a private one keeps tests independent of the global CONF. ``conf``
    takes [oslo_policy] overrides (call ``policy.reset()`` after them).
    """

    def _setUp(self):
        from cyborg import policy

        self.conf = cfg.ConfigOpts()
        self.conf([], project='cyborg', default_config_files=[])
        policy.reset()
        policy.init(self.conf)
        self.addCleanup(policy.reset)


class API(fixtures.Fixture):
    """The cyborg-api WSGI application, with noauth and a fresh policy.

    It needs the Database, RPC and Conductor fixtures (in that order)
    first. ``app`` is the application.
    """

    def _setUp(self):
        # Imported here: only API tests need pecan and the controllers.
        from cyborg.api import app

        self.useFixture(Policy())
        CONF.set_override('auth_strategy', 'noauth', group='api')
        self.addCleanup(CONF.clear_override, 'auth_strategy', group='api')
        self.app = app.setup_app()


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
    first ``not_found`` calls) and records every ``report_host``; tests
    wait for reports with :meth:`wait_for_reports`. It stands in for the
    real conductor until that one accepts reports.
    """

    RPC_API_VERSION = rpcapi.ConductorAPI.RPC_API_VERSION
    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, rp_uuid, not_found=0):
        self.rp_uuid = rp_uuid
        self.not_found = not_found
        self.lookups = []
        self.reports = []
        self._changed = threading.Condition()

    @rpc.expected_exceptions(exception.ResourceProviderNotFound)
    def compute_node_rp(self, context, hostname, rp_name):
        self.lookups.append((hostname, rp_name))
        if len(self.lookups) <= self.not_found:
            raise exception.ResourceProviderNotFound(name=rp_name)
        return self.rp_uuid

    def report_host(self, context, host_report):
        with self._changed:
            self.reports.append(host_report)
            self._changed.notify_all()

    def wait_for_reports(self, count, timeout=30):
        """Wait until ``count`` reports arrived; return them all."""
        with self._changed:
            if not self._changed.wait_for(
                    lambda: len(self.reports) >= count, timeout):
                raise AssertionError('%d report(s) after %d seconds, '
                                     'expected %d' % (len(self.reports),
                                                      timeout, count))
            return list(self.reports)


class StandInConductor(fixtures.Fixture):
    """A :class:`ConductorStandIn` serving on the current transport."""

    def __init__(self, rp_uuid='4b9e6f3e-9d0c-4c8f-8c3b-0d7e6a5f4c3b',
                 not_found=0, host='conductor-test'):
        super().__init__()
        self.endpoint = ConductorStandIn(rp_uuid, not_found)
        self.host = host

    def _setUp(self):
        server = service.RPCService(
            self.endpoint, rpcapi.TOPIC,
            objects_base.CyborgObjectSerializer(), host=self.host)
        server.start()
        self.addCleanup(server.stop)
