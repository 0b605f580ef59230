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
"""Cyborg's own parts in a test.

A database of its own, the RPC transport, a conductor and the API in the
test's process, the policy enforcer, privileged calls made in process,
and services run as child processes. The other OpenStack services are in
:mod:`cyborg.tests.openstack_fixtures`; stand-ins for the agent, the
conductor and vendor tools in :mod:`cyborg.tests.stand_ins`.
"""

import atexit
import collections
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import fixtures
import futurist
from oslo_config import cfg
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
from oslo_policy import opts as oslo_policy_opts
import sqlalchemy as sa
from testtools import content

from cyborg.clients import nova
from cyborg.common import rpc
from cyborg.common import service
from cyborg.conductor import agent_topics
from cyborg.conductor import manager
from cyborg.conductor import nova_events as event_sender
from cyborg.conductor import rpcapi
import cyborg.conf
from cyborg import context as cyborg_context
from cyborg.db import api as db_api
from cyborg.db import models
from cyborg.objects import base as objects_base
from cyborg import privsep

CONF = cyborg.conf.CONF


#: Where the tests' SQLite files go: memory-backed where the system has it.
_SCRATCH = '/dev/shm' if os.access('/dev/shm', os.W_OK) else None


class Database(fixtures.Fixture):
    """A private SQLite file, built from the models, used as Cyborg uses one.

    The engine facade is configured as ``cyborg-all-in-one`` configures
    it (:func:`cyborg.db.api.facade_options`, :func:`cyborg.db.api.
    tune_sqlite_files`): threads write one at a time and read on read-only
    connections, so the in-process conductor's servers and a test's thread
    work at once as they do there. The file is memory-backed where the
    system allows, and not synced: a copy of an empty schema that each
    process makes once with ``create_all``. The migrations are proved equal
    to the models on every engine by
    ``cyborg.tests.functional.db.test_migrations``, so tests may use it.
    """

    #: The file with the empty schema, made once per process.
    _template = None

    @classmethod
    def _empty_schema(cls):
        if cls._template is None:
            directory = tempfile.mkdtemp(prefix='cyborg-schema-',
                                         dir=_SCRATCH)
            atexit.register(shutil.rmtree, directory, ignore_errors=True)
            template = os.path.join(directory, 'cyborg.db')
            engine = sa.create_engine('sqlite:///' + template)
            models.BASE.metadata.create_all(engine)
            engine.dispose()
            cls._template = template
        return cls._template

    def _setUp(self):
        directory = self.useFixture(fixtures.TempDir(rootdir=_SCRATCH)).path
        path = os.path.join(directory, 'cyborg.db')
        shutil.copyfile(self._empty_schema(), path)
        facade = enginefacade.transaction_context()
        facade.configure(sqlite_fk=True, **db_api.facade_options({
            'connection': 'sqlite:///' + path, 'sqlite_synchronous': False}))
        facade.append_on_engine_create(db_api.tune_sqlite_files)
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_api.main_context_manager, facade))
        self.addCleanup(facade.dispose_pool)


class RPC(fixtures.Fixture):
    """oslo.messaging on the in-process fake:// transport, or on ``url``."""

    def __init__(self, url='fake://'):
        super().__init__()
        self.url = url

    def _setUp(self):
        self.useFixture(fixtures.MonkeyPatch(
            'cyborg.common.rpc.TRANSPORT', None))
        rpc.init(CONF, url=self.url)
        self.addCleanup(rpc.cleanup)


class Conductor(fixtures.Fixture):
    """A conductor serving on fake:// in this process.

    Background binds run synchronously (unless ``executor`` runs them),
    and Nova's events are delivered as soon as they are due, so a test
    sees their outcome as soon as the RPC call returns.
    """

    def __init__(self, host='conductor-test', executor=None):
        super().__init__()
        self.host = host
        self.executor = executor

    def _setUp(self):
        self.manager = manager.ConductorManager(
            self.host,
            executor=self.executor or futurist.SynchronousExecutor())
        self.service = service.RPCService(
            self.manager, rpcapi.TOPIC,
            objects_base.CyborgObjectSerializer(), host=self.host)
        self.service.start()
        self.addCleanup(self.service.stop)
        self.agent_topics = agent_topics.AgentTopics(self.manager)
        self.manager.agent_topics = self.agent_topics
        self.addCleanup(self.agent_topics.stop)
        event_sender.register(self)
        self.addCleanup(event_sender.unregister, self)

    def serve_agent(self, host):
        """Hear ``host``'s agent on its topic.

        As a conductor's periodic pass does once Placement knows the host.
        """
        self.agent_topics.serve(host)

    def wake(self, events=()):
        """Deliver Nova's events at once, in the caller's thread.

        As :class:`cyborg.conductor.nova_events.Sender` does: the events
        handed over, or else those due in the database.
        """
        context = cyborg_context.get_admin_context()
        client = nova.NovaClient(CONF)
        if events:
            event_sender.send(context, client, events)
        else:
            event_sender.deliver(context, client)


class ServiceProcess(fixtures.Fixture):
    """A Cyborg console script run as a child process with one config file.

    ``command`` is the console script's name, or a whole command line (a
    list) to which ``--config-file`` is added when ``config_file`` is not
    None.

    The service runs in a process group of its own (oslo.service forks its
    workers from a parent process). Its output goes to :attr:`log_path`;
    it gets ``SIGTERM`` at cleanup, and the whole group ``SIGKILL`` if it
    does not stop within a minute.
    """

    def __init__(self, command, config_file, log_path):
        super().__init__()
        if isinstance(command, str):
            self.argv = [os.path.join(os.path.dirname(sys.executable),
                                      command)]
        else:
            self.argv = list(command)
        if config_file is not None:
            self.argv += ['--config-file', config_file]
        self.log_path = log_path
        self.proc = None

    def _setUp(self):
        with open(self.log_path, 'w') as log:
            self.proc = subprocess.Popen(self.argv, stdout=log,
                                         stderr=subprocess.STDOUT,
                                         start_new_session=True)
        self.addCleanup(self.stop)

    def stop(self, sig=signal.SIGTERM):
        """Signal the service and wait for it; returns its exit status.

        ``SIGKILL`` goes to every process of the service, as when its host
        dies; other signals go to the parent, which stops its workers.
        """
        if self.proc.poll() is None:
            if sig == signal.SIGKILL:
                self._kill_group()
            else:
                self.proc.send_signal(sig)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                pass
        self._kill_group()
        self.proc.wait()
        return self.proc.returncode

    def _kill_group(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def log_tail(self, lines=400):
        """The last ``lines`` of the log, as a testtools detail.

        The options the service logs as it starts are left out.
        """
        with open(self.log_path, errors='replace') as f:
            return content.text_content(''.join(collections.deque(
                (line for line in f if 'log_opt_values' not in line),
                lines)))


def service_process(test, command, config_file, log_path):
    """Start a :class:`ServiceProcess` for ``test``.

    The end of its log joins the details of a failing test, so that a
    failure in CI shows what the service did.
    """
    process = test.useFixture(ServiceProcess(command, config_file, log_path))
    test.addOnException(lambda exc_info: test.addDetail(
        os.path.basename(log_path), process.log_tail()))
    return process


class Policy(fixtures.Fixture):
    """A fresh policy enforcer on its own parsed configuration.

    The enforcer needs a parsed configuration to look for policy files;
    a private one keeps tests independent of the global CONF. ``conf``
    takes [oslo_policy] overrides (call ``policy.reset()`` after them).

    :param policy_file: a ``policy.yaml`` to load, if any.
    :param enforce_new_defaults: ``[oslo_policy] enforce_new_defaults``;
        None leaves the default (False: 17.0.0's decisions).
    """

    def __init__(self, policy_file=None, enforce_new_defaults=None):
        super().__init__()
        self.policy_file = policy_file
        self.enforce_new_defaults = enforce_new_defaults

    def _setUp(self):
        from cyborg import policy

        self.conf = cfg.ConfigOpts()
        self.conf([], project='cyborg', default_config_files=[])
        policy.reset()
        if self.enforce_new_defaults is not None:
            oslo_policy_opts.set_defaults(self.conf)
            self.conf.set_override('enforce_new_defaults',
                                   self.enforce_new_defaults, 'oslo_policy')
        policy.init(self.conf, policy_file=self.policy_file)
        self.addCleanup(policy.reset)


class API(fixtures.Fixture):
    """The cyborg-api WSGI application, with a fresh policy.

    It needs the Database, RPC and Conductor fixtures (in that order)
    first. ``app`` is the application. It authenticates with noauth, or
    with keystonemiddleware against ``keystone`` (a
    :class:`cyborg.tests.openstack_fixtures.Keystone` fixture) when one is
    given. ``enforce_new_defaults`` goes to :class:`Policy`.
    """

    def __init__(self, keystone=None, enforce_new_defaults=None):
        super().__init__()
        self.keystone = keystone
        self.enforce_new_defaults = enforce_new_defaults

    def _setUp(self):
        # Imported here: only API tests need pecan and the controllers.
        from cyborg.api import app

        self.useFixture(Policy(
            enforce_new_defaults=self.enforce_new_defaults))
        if self.keystone is None:
            CONF.set_override('auth_strategy', 'noauth', group='api')
            self.addCleanup(CONF.clear_override, 'auth_strategy',
                            group='api')
        else:
            self.keystone.use_for_api(self)
        self.app = app.setup_app()


class PrivsepInProcess(fixtures.Fixture):
    """Privileged entrypoints run in the test's process, as its user.

    oslo.privsep calls the functions directly instead of asking a daemon,
    so the code under test takes the same path to them as the agent does;
    the daemons themselves are tested in
    ``cyborg/tests/functional/test_privsep.py``.
    """

    def _setUp(self):
        for context, _caps in privsep.CONTEXTS:
            context.set_client_mode(False)
            self.addCleanup(context.set_client_mode, True)
