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
"""The other OpenStack services a test meets, and how Cyborg reaches them.

The real Placement, Keystone and Glance, a receiver of Nova's external
events, keystoneauth options pointing at them, and a recorder of the HTTP
requests a test's process sends. Keystone and Glance run from the
virtualenvs under :data:`VENVS`, where the real clients are too.
"""

import atexit
import contextlib
import inspect
import os
import pathlib
import shutil
import sqlite3
import tempfile

import fixtures
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import loading as ks_loading
from oslo_utils import uuidutils
import requests

import cyborg.conf
from cyborg.tests import functional
from cyborg_quickstart import glance as glance_server
from cyborg_quickstart import keystone as keystone_server
from cyborg_quickstart import nova_events
from cyborg_quickstart import placement as placement_server
from cyborg_quickstart import server as demo_server

CONF = cyborg.conf.CONF

REPO = pathlib.Path(__file__).resolve().parents[2]
#: Where ``tools/setup-client-venvs.sh`` installs the real clients and
#: Keystone.
VENVS = pathlib.Path(os.environ.get('CYBORG_CLIENT_VENVS',
                                    REPO / '.venvs'))


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

    ``receiver`` is the :class:`cyborg_quickstart.nova_events.EventReceiver`.
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

    Given ``keystone`` (a :class:`cyborg_quickstart.keystone.Keystone`), the
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
            state = tempfile.mkdtemp(prefix='placement-')
            atexit.register(shutil.rmtree, state, ignore_errors=True)
            cls._db_url = 'sqlite:///' + os.path.join(state,
                                                      'placement.sqlite')
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
    """The real Keystone of :mod:`cyborg_quickstart.keystone`, one per process.

    It takes seconds to start, so the first test that uses it starts it on
    a free port and it serves every later test of the process; it stops
    when the process exits. Tests keep apart by the objects they make,
    as with :class:`Placement`. :attr:`keystone` is the
    :class:`cyborg_quickstart.keystone.Keystone`. Tests check :meth:`missing`
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


class Glance(fixtures.Fixture):
    """The real Glance of :mod:`cyborg_quickstart.glance`, one per process.

    It takes seconds to start, so the first test that uses it starts it on
    a free port and it serves every later test of the process (one
    unauthenticated, and one behind each Keystone it is given); it stops
    when the process exits. Each fixture deletes the images it added.
    It lists at most :data:`PAGE_LIMIT` images a page, so that a few
    images make clients turn pages. Tests check :meth:`missing` first and
    skip, saying why, when Glance's virtualenv is missing.

    ``conf``, a test's config fixture, gets ``[glance] endpoint_override``
    pointing at it. Given ``keystone`` (a
    :class:`cyborg_quickstart.keystone.Keystone`), Glance checks tokens with
    it, is in its catalog, and images are added by the administrator,
    public.
    :attr:`glance` is the :class:`cyborg_quickstart.glance.Glance`.

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
