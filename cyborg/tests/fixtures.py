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

import fixtures
import futurist
from oslo_config import cfg
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures

from cyborg.common import rpc
from cyborg.common import service
from cyborg.conductor import manager
from cyborg.conductor import rpcapi
import cyborg.conf
from cyborg.db import api as db_api
from cyborg.db import models
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
