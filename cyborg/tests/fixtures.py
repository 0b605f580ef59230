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

import atexit
import collections
import contextlib
import inspect
import json
import os
import pathlib
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading

import fixtures
import futurist
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
import oslo_messaging as messaging
from oslo_policy import opts as oslo_policy_opts
from oslo_utils import uuidutils
import requests
import sqlalchemy as sa
from testtools import content

from cyborg.agent import rpcapi as agent_rpcapi
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
from cyborg.demo import glance as glance_server
from cyborg.demo import keystone as keystone_server
from cyborg.demo import nova_events
from cyborg.demo import placement as placement_server
from cyborg.demo import server as demo_server
from cyborg import exception
from cyborg.objects import base as objects_base
from cyborg import privsep
from cyborg.tests import functional

CONF = cyborg.conf.CONF

REPO = pathlib.Path(__file__).resolve().parents[2]
#: Where ``tools/setup-client-venvs.sh`` installs the real clients and
#: Keystone.
VENVS = pathlib.Path(os.environ.get('CYBORG_CLIENT_VENVS',
                                    REPO / '.venvs'))


#: Seconds a thread waits for the in-memory database before it goes on
#: all the same (a thread that waits on another holding it would hang).
_MEMORY_DB_WAIT = 30


def _one_thread_at_a_time(engine):
    """Let one thread at a time use an in-memory SQLite database.

    oslo.db gives all threads its one connection, and SQLite refuses a
    thread's ``BEGIN`` while another's transaction is open on it ("cannot
    start a transaction within a transaction"): the in-process conductor's
    servers write while a test's thread reads. A thread checks the
    connection out only when no other holds it; its nested checkouts go
    through.
    """
    lock, held = threading.RLock(), threading.local()

    @sa.event.listens_for(engine.pool, 'checkout')
    def _take(dbapi_connection, record, proxy):
        stack = held.__dict__.setdefault('stack', [])
        stack.append(lock.acquire(timeout=_MEMORY_DB_WAIT))

    @sa.event.listens_for(engine.pool, 'checkin')
    def _give(dbapi_connection, record):
        stack = held.__dict__.get('stack')
        if stack and stack.pop():
            lock.release()


class Database(fixtures.Fixture):
    """A private in-memory SQLite schema, built from the models.

    The migrations are proved equal to the models on every engine by
    ``cyborg.tests.functional.db.test_migrations``, so unit tests may use
    the quicker ``create_all``.
    """

    def _setUp(self):
        facade = enginefacade.transaction_context()
        facade.configure(connection='sqlite://', sqlite_fk=True)
        _one_thread_at_a_time(facade.writer.get_engine())
        models.BASE.metadata.create_all(facade.writer.get_engine())
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_api.main_context_manager, facade))
        self.addCleanup(facade.writer.get_engine().dispose)


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

    Background binds run synchronously, and Nova's events are delivered
    as soon as they are due, so a test sees their outcome as soon as the
    RPC call returns.
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

    def wake(self):
        """Deliver Nova's events at once, in the caller's thread."""
        event_sender.deliver(cyborg_context.get_admin_context(),
                             nova.NovaClient(CONF))


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


def _unregister(opts, group):
    # An auth plugin's option left registered, such as the required
    # auth_url of "password", would fail every later parse of CONF.
    CONF.reset()
    for opt in opts:
        CONF.unregister_opt(opt, group=group)


def use_auth(fixture, group, auth_type, **options):
    """Set keystoneauth options ``[group]`` for a test.

    The overrides go when ``fixture`` is cleaned up.

    :returns: the options set.
    """
    conf = dict(options, auth_type=auth_type)
    added = [opt for opt in ks_loading.get_auth_plugin_conf_options(
        auth_type) if CONF.register_opt(opt, group=group)]
    if added:
        fixture.addCleanup(_unregister, added, group)
    for key, value in conf.items():
        CONF.set_override(key, value, group=group)
        fixture.addCleanup(CONF.clear_override, key, group=group)
    return conf


def use_admin_token(fixture, group, endpoint, token):
    """Point keystoneauth options ``[group]`` at ``endpoint``, for a test.

    keystoneauth's ``admin_token`` plugin sends ``token`` to ``endpoint``
    with no Keystone in between.
    """
    return use_auth(fixture, group, 'admin_token', endpoint=endpoint,
                    token=token)


class NovaEvents(fixtures.Fixture):
    """A receiver of Nova's external events, and ``[nova]`` pointing at it.

    ``receiver`` is the :class:`cyborg.demo.nova_events.EventReceiver`.
    """

    def _setUp(self):
        self.receiver = nova_events.EventReceiver().start()
        self.addCleanup(self.receiver.stop)
        use_admin_token(self, 'nova', self.receiver.url, 'admin')


class Placement(fixtures.Fixture):
    """The real Placement service, and ``[placement]`` pointing at it.

    Placement keeps one database engine per process, so every test of a
    process shares one application on one SQLite file: tests keep apart
    by using host names of their own (:attr:`hostname`). Each fixture
    serves it on a port of its own, stopped at cleanup (a server left
    running would keep the test process from exiting). ``url`` is where
    it listens; ``conf`` is the keystoneauth configuration to reach it.
    :meth:`stop` and :meth:`start` take it away and bring it back.

    Given ``keystone`` (a :class:`cyborg.demo.keystone.Keystone`), the
    same database is served behind keystonemiddleware instead of noauth2,
    found in Keystone's catalog, and reached as the ``cyborg`` service
    user with its password.
    """

    _db_url = None
    _apps = {}

    def __init__(self, keystone=None):
        super().__init__()
        self.keystone = keystone

    @classmethod
    def app(cls, keystone=None):
        if cls._db_url is None:
            cls._db_url = 'sqlite:///' + os.path.join(
                tempfile.mkdtemp(prefix='placement-'), 'placement.sqlite')
        if keystone not in cls._apps:
            cls._apps[keystone] = placement_server.make_app(
                cls._db_url, keystone and keystone.authtoken_options())
        return cls._apps[keystone]

    def _setUp(self):
        self._server = None
        # A port of its own from the start: cheroot allows the address to
        # be reused, after stop(), only on a port that was asked for.
        self._serve(functional.free_ports(1)[0])
        self.addCleanup(self.stop)
        self.url = self._server.url
        self.hostname = 'host-' + uuidutils.generate_uuid()
        if self.keystone is None:
            self.conf = use_admin_token(self, 'placement', self.url,
                                        placement_server.TOKEN)
        else:
            self.keystone.register_endpoint('placement', self.url)
            self.conf = use_auth(self, 'placement', 'password',
                                 region_name=keystone_server.REGION,
                                 **self.keystone.credentials('cyborg'))

    def _serve(self, port):
        self._server = demo_server.LoopbackServer(
            self.app(self.keystone), port=port,
            threads=placement_server.THREADS, name='placement').start()

    def stop(self):
        """Stop serving, as when Placement goes down; its data stays."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    def start(self):
        """Serve again, on the port of :attr:`url`."""
        self._serve(int(self.url.rsplit(':', 1)[1]))

    def adapter(self):
        """A keystoneauth adapter for checking Placement directly.

        With Keystone, it acts as the administrator.
        """
        if self.keystone is None:
            return placement_server.adapter(self.url, '1.39')
        return ks_adapter.Adapter(
            self.keystone.session('admin'), service_type='placement',
            endpoint_override=self.url,
            default_microversion='1.39', raise_exc=False)


class Keystone(fixtures.Fixture):
    """The real Keystone of :mod:`cyborg.demo.keystone`, one per process.

    It takes seconds to start, so the first test that uses it starts it on
    a free port and it serves every later test of the process; it stops
    when the process exits. Tests keep apart by the objects they make,
    as with :class:`Placement`. :attr:`keystone` is the
    :class:`cyborg.demo.keystone.Keystone`. Tests check :meth:`missing`
    first and skip, saying why, when Keystone's virtualenv is missing.
    """

    VENV = VENVS / 'keystone'
    _keystone = None

    @classmethod
    def missing(cls):
        """Why Keystone cannot start here, or None."""
        if not (cls.VENV / 'bin' / 'keystone-manage').exists():
            return ('%s is missing: run tools/setup-client-venvs.sh '
                    '(tools/run-tests.sh does)' % cls.VENV)
        return None

    @classmethod
    def _start(cls):
        if cls._keystone is None:
            state = tempfile.mkdtemp(prefix='keystone-')
            keystone = keystone_server.Keystone(
                state, keystone_server.free_port(), cls.VENV)
            atexit.register(shutil.rmtree, state, ignore_errors=True)
            atexit.register(keystone.stop)
            cls._keystone = keystone.start()
        return cls._keystone

    def _setUp(self):
        self.keystone = self._start()

    def use_for_api(self, fixture):
        """Make the API authenticate against it, until ``fixture`` ends.

        keystonemiddleware checks tokens as Cyborg's service user, the
        ``cyborg`` persona.
        """
        CONF.set_override('auth_strategy', 'keystone', group='api')
        fixture.addCleanup(CONF.clear_override, 'auth_strategy',
                           group='api')
        options = self.keystone.authtoken_options()
        use_auth(fixture, 'keystone_authtoken', options.pop('auth_type'),
                 **options)


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
    with keystonemiddleware against ``keystone`` (a :class:`Keystone`
    fixture) when one is given. ``enforce_new_defaults`` goes to
    :class:`Policy`.
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


class Glance(fixtures.Fixture):
    """The real Glance of :mod:`cyborg.demo.glance`, one per process.

    It takes seconds to start, so the first test that uses it starts it on
    a free port and it serves every later test of the process (one
    unauthenticated, and one behind each Keystone it is given); it stops
    when the process exits. Each fixture deletes the images it added.
    It lists at most :data:`PAGE_LIMIT` images a page, so that a few
    images make clients turn pages. Tests check :meth:`missing` first and
    skip, saying why, when Glance's virtualenv is missing.

    ``conf``, a test's config fixture, gets ``[glance] endpoint_override``
    pointing at it. Given ``keystone`` (a
    :class:`cyborg.demo.keystone.Keystone`), Glance checks tokens with it,
    is in its catalog, and images are added by the administrator, public.
    :attr:`glance` is the :class:`cyborg.demo.glance.Glance`.

    Images are added owned by :attr:`owner`, whose images Cyborg trusts:
    the ``service`` project of Cyborg's own user with Keystone, else
    :data:`TRUSTED_OWNER`, which ``conf`` gets as ``[fpga]
    trusted_image_owners``.
    """

    VENV = VENVS / 'glance'
    PAGE_LIMIT = 20
    #: The trusted owner of images without Keystone, where Glance takes
    #: any owner an image is given.
    TRUSTED_OWNER = 'cyborg-trusted-project'
    _glances = {}

    def __init__(self, conf=None, keystone=None):
        super().__init__()
        self.conf = conf
        self.keystone = keystone

    @classmethod
    def missing(cls):
        """Why Glance cannot start here, or None."""
        if not (cls.VENV / 'bin' / 'glance-manage').exists():
            return ('%s is missing: run tools/setup-client-venvs.sh '
                    '(tools/run-tests.sh does)' % cls.VENV)
        return None

    @classmethod
    def _start(cls, keystone):
        if keystone not in cls._glances:
            state = tempfile.mkdtemp(prefix='glance-')
            glance = glance_server.Glance(
                state, keystone_server.free_port(), cls.VENV,
                authtoken=keystone and keystone.authtoken_options(),
                page_limit=cls.PAGE_LIMIT)
            atexit.register(shutil.rmtree, state, ignore_errors=True)
            atexit.register(glance.stop)
            cls._glances[keystone] = glance.start()
            if keystone is not None:
                keystone.register_endpoint('image', glance.url)
        return cls._glances[keystone]

    def _setUp(self):
        self.glance = self._start(self.keystone)
        self.url = self.glance.url
        self.client = self.glance.client(
            self.keystone and self.keystone.session('admin'))
        if self.keystone is None:
            self.owner = self.TRUSTED_OWNER
        else:
            self.owner = self.keystone.session('cyborg').get_project_id()
        if self.conf is not None:
            self.conf.config(endpoint_override=self.url, group='glance')
            if self.keystone is None:
                self.conf.config(trusted_image_owners=[self.owner],
                                 group='fpga')

    def add_image(self, data=b'bitstream', name='bitstream', tags=('FPGA',),
                  **properties):
        """Upload an image with ``properties``; deleted at cleanup.

        :returns: the active image as Glance shows it, a dict.
        """
        properties.setdefault('owner', self.owner)
        if self.keystone is not None:
            properties.setdefault('visibility', 'public')
        image = glance_server.upload(self.client, data, name, tags,
                                     **properties)
        self.addCleanup(self.client.images.delete, image['id'])
        return dict(image)

    def add_record(self, name='bitstream', tags=('FPGA',), **properties):
        """An image without data (``queued``); deleted at cleanup."""
        properties.setdefault('owner', self.owner)
        image = self.client.images.create(name=name, tags=list(tags),
                                          **properties)
        self.addCleanup(self.client.images.delete, image['id'])
        return dict(image)

    def replace_data(self, image_id, data):
        """Change an image's data in the file store, behind Glance's back.

        Glance serves it as it is, as with data damaged on its disk.
        """
        with open(os.path.join(self.glance.state, 'images', image_id),
                  'wb') as f:
            f.write(data)

    def forget_hash(self, image_id):
        """Drop an image's ``os_hash_algo`` and ``os_hash_value``.

        Images uploaded before Glance's Rocky release have none. No API
        removes them, so this changes Glance's database.
        """
        with contextlib.closing(sqlite3.connect(os.path.join(
                self.glance.state, 'glance.sqlite'))) as db, db:
            db.execute('UPDATE images SET os_hash_algo = NULL, '
                       'os_hash_value = NULL WHERE id = ?', (image_id,))


class SentRequests(fixtures.Fixture):
    """Records every HTTP request this process sends, then sends it.

    keystoneauth and python-glanceclient send through ``requests``;
    :meth:`to` gives what went to one service, headers included, as the
    service received them.
    """

    def _setUp(self):
        self.sent = []
        send = requests.Session.request
        signature = inspect.signature(send)

        def record(*args, **kwargs):
            call = signature.bind(*args, **kwargs).arguments
            self.sent.append((call['method'], call['url'],
                              call.get('headers') or {}))
            return send(*args, **kwargs)

        self.useFixture(fixtures.MockPatchObject(
            requests.Session, 'request', autospec=True, side_effect=record))

    def to(self, url):
        """``(method, url, headers)`` of each request sent under ``url``."""
        return [sent for sent in self.sent if sent[1].startswith(url + '/')]


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
