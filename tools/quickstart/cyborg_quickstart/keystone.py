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
"""The real OpenStack Keystone on SQLite, for demos and tests.

Keystone is the ``keystone`` package itself, installed in a virtualenv of
its own (``tools/setup-client-venvs.sh`` makes ``.venvs/keystone``)
because its requirements differ from Cyborg's. :class:`Keystone` runs it
as a child process from that virtualenv, served by cheroot on loopback,
with everything under one state directory: ``keystone.conf``, the SQLite
database, the fernet and credential keys and ``keystone.log``.

Starting it syncs the schema (a new state directory copies the database
made once from the virtualenv: :mod:`cyborg_quickstart.prebuilt`), makes
the keys, bootstraps (the ``admin`` user and
project, the roles ``admin``, ``manager``, ``member``, ``reader`` and
``service`` with the implications admin > manager > member > reader,
region ``RegionOne``, the identity endpoint), then provisions
:data:`PERSONAS`: a user per persona in projects ``project-a``,
``project-b`` and ``service``. Every user's password is made once per
state directory and kept in it. :meth:`Keystone.register_endpoint` puts
other services (``placement``, ``accelerator``) in the catalog.
:func:`authtoken_options` and :func:`protect` put keystonemiddleware's
``auth_token`` in front of a service, checking tokens with this Keystone.

Run it on its own with ``python -m cyborg_quickstart.keystone --state-dir DIR
--port 5000 --venv .venvs/keystone``; ``--clouds-yaml`` writes a
``clouds.yaml`` with a cloud per persona (:meth:`Keystone.clouds`).
"""

import argparse
import json
import os
import secrets
import signal
import socket
# Keystone runs from its own virtualenv, in processes of its own.
import subprocess  # nosec B404
import sys

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1.identity import v3
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from keystonemiddleware import auth_token
from oslo_config import cfg

from cyborg_quickstart import prebuilt
from cyborg_quickstart import served

REGION = 'RegionOne'
DOMAIN = 'Default'
DOMAIN_ID = 'default'
ADMIN_PROJECT = 'admin'
SERVICE_PROJECT = 'service'
#: A role Cyborg's policies know nothing of: its holder may log in to a
#: project but may do nothing in Cyborg.
OTHER_ROLE = 'other'

#: persona: (user name, project name, roles in that project). ``admin``
#: is the bootstrapped administrator (also system administrator);
#: ``service`` stands for Nova calling Cyborg on a user's behalf (its
#: token goes in ``X-Service-Token``); ``cyborg`` is Cyborg's own service
#: user (``[keystone_authtoken]``, Placement, Nova, Glance), with
#: ``admin`` beside ``service`` for older Nova and Placement policies (a
#: deployment of current releases gives it ``service`` only).
PERSONAS = {
    'admin': ('admin', ADMIN_PROJECT, ('admin',)),
    'manager': ('manager-a', 'project-a', ('manager',)),
    'member': ('member-a', 'project-a', ('member',)),
    'reader': ('reader-a', 'project-a', ('reader',)),
    'other': ('other-a', 'project-a', (OTHER_ROLE,)),
    'member-b': ('member-b', 'project-b', ('member',)),
    'service': ('nova', SERVICE_PROJECT, ('service',)),
    'cyborg': ('cyborg', SERVICE_PROJECT, ('admin', 'service')),
}

#: Cloud names in ``clouds.yaml`` that differ from ``cyborg-<persona>``:
#: ``cyborg-service`` is Cyborg's service user, ``cyborg-nova`` the user
#: Nova calls Cyborg as.
CLOUD_NAMES = {'cyborg': 'cyborg-service', 'service': 'cyborg-nova'}

#: Catalog names of the services :meth:`Keystone.register_endpoint` adds.
SERVICE_NAMES = {'placement': 'placement', 'accelerator': 'cyborg',
                 'compute': 'nova', 'image': 'glance'}

#: Serves Keystone's WSGI application with cheroot; run by the python of
#: Keystone's virtualenv as ``-c SERVE host port threads``. Keystone
#: reads ``sys.argv`` as its own command line, so the arguments go first.
SERVE = """
import sys
host, port, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
del sys.argv[1:]
from cheroot import wsgi
from keystone.wsgi import api
wsgi.Server((host, port), api.application, numthreads=threads,
            server_name='keystone').safe_start()
"""

#: Enough threads for a test run's clients and keystonemiddleware; the
#: requests they make are token checks that only read the database.
THREADS = 4

#: The SQLite database in the state directory.
DATABASE = 'keystone.sqlite'
#: What a new state directory gets from :mod:`cyborg_quickstart.prebuilt`:
#: the database and the keys of the credentials it holds.
PREBUILT = (DATABASE, 'credential-keys')

CONF_TEMPLATE = """[DEFAULT]
log_file = {state}/keystone.log

[database]
connection = sqlite:///{state}/{database}

[token]
provider = fernet

[fernet_tokens]
key_repository = {state}/fernet-keys

[fernet_receipts]
key_repository = {state}/fernet-keys

[credential]
key_repository = {state}/credential-keys

[identity]
# The fewest bcrypt rounds: users are made and log in by the dozen.
password_hash_rounds = 4

[cache]
# One process serves: it may keep tokens, roles and catalog in memory.
enabled = true
backend = oslo_cache.dict
"""


def free_port(host='127.0.0.1'):
    """A TCP port on ``host`` that nothing listens on just now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class KeystoneError(Exception):
    """Keystone could not be set up or did not start."""


class Keystone(served.Served):
    """Keystone from ``venv`` on ``host``:``port`` with state in ``state``.

    :meth:`start` sets it up and serves it; :meth:`stop` stops it.
    """

    label = 'Keystone'
    error = KeystoneError

    def __init__(self, state, port, venv, host='127.0.0.1',
                 threads=THREADS):
        super().__init__(state, port, venv, host, threads)
        self._sessions = {}

    @property
    def auth_url(self):
        return self.url + '/v3'

    @property
    def conf_file(self):
        return os.path.join(self.state, 'keystone.conf')

    @property
    def log_file(self):
        return os.path.join(self.state, 'keystone.log')

    def _password(self):
        """The password of every persona, made once per state directory."""
        path = os.path.join(self.state, 'password')
        if not os.path.exists(path):
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600),
                      'w') as f:
                f.write(secrets.token_urlsafe(16))
        with open(path) as f:
            return f.read().strip()

    def _manage(self, *args):
        result = subprocess.run(  # nosec B603
            [self._bin('keystone-manage'), '--config-file', self.conf_file]
            + list(args), capture_output=True, text=True, timeout=300)
        if result.returncode:
            raise KeystoneError('keystone-manage %s failed:\n%s' % (
                args[0], result.stderr[-4000:]))

    def setup(self):
        """Write keystone.conf, sync the schema, make keys, bootstrap.

        A new state directory gets a copy of the database and credential
        keys that the schema's and the bootstrap's steps made once from
        the virtualenv (:mod:`cyborg_quickstart.prebuilt`); on an existing
        one those steps run again, as each may. Either way the fernet keys
        are made here (each Keystone signs its own tokens), and the
        bootstrap sets this directory's password and this Keystone's URL.
        """
        if not os.path.exists(self._bin('keystone-manage')):
            raise KeystoneError(
                'Keystone is not installed in %s: run '
                'tools/setup-client-venvs.sh' % self.venv)
        fresh = not os.path.exists(os.path.join(self.state, DATABASE))
        os.makedirs(self.state, exist_ok=True)
        self._write_conf()
        if fresh:
            prebuilt.copy_into(self.state, self.venv, 'keystone',
                               self._build, PREBUILT)
        else:
            self._sync()
        self._fernet_keys()
        self._bootstrap()

    def _build(self, directory):
        keystone = Keystone(directory, self.port, self.venv, self.host)
        keystone._write_conf()
        keystone._sync()
        keystone._fernet_keys()
        keystone._bootstrap()

    def _write_conf(self):
        with open(self.conf_file, 'w') as f:
            f.write(CONF_TEMPLATE.format(state=self.state, database=DATABASE))

    @staticmethod
    def _owner():
        return ['--keystone-user', str(os.getuid()),
                '--keystone-group', str(os.getgid())]

    def _sync(self):
        """The schema and the credential keys."""
        self._manage('db_sync')
        self._manage('credential_setup', *self._owner())

    def _fernet_keys(self):
        """The keys of the tokens: each Keystone its own, not copied."""
        self._manage('fernet_setup', *self._owner())

    def _bootstrap(self):
        """The admin (this directory's password), roles, region, endpoint."""
        # One argument: a password may start with "-".
        self._manage('bootstrap', '--bootstrap-password=' + self._password(),
                     '--bootstrap-username', PERSONAS['admin'][0],
                     '--bootstrap-project-name', ADMIN_PROJECT,
                     '--bootstrap-region-id', REGION,
                     '--bootstrap-admin-url', self.auth_url,
                     '--bootstrap-internal-url', self.auth_url,
                     '--bootstrap-public-url', self.auth_url)

    def start(self, timeout=120):
        """Set up, serve, wait until Keystone answers, add the personas."""
        self.setup()
        self._serve(SERVE, dict(os.environ,
                                OS_KEYSTONE_CONFIG_FILES=self.conf_file))
        self._wait(self.auth_url, lambda status: status == 200, timeout)
        self.provision()
        return self

    # --- the personas and the catalog ------------------------------------

    def credentials(self, persona):
        """keystoneauth ``password`` options of ``persona``."""
        user, project, _roles = PERSONAS[persona]
        return {'auth_url': self.auth_url, 'username': user,
                'password': self._password(), 'project_name': project,
                'user_domain_name': DOMAIN, 'project_domain_name': DOMAIN}

    def authtoken_options(self, persona='cyborg', **extra):
        """``[keystone_authtoken]`` options checking tokens as ``persona``.

        ``extra`` adds or overrides options (``service_token_roles``...).
        """
        return dict(self.credentials(persona), auth_type='password',
                    www_authenticate_uri=self.auth_url, region_name=REGION,
                    **extra)

    def session(self, persona, system_scope=None):
        """A keystoneauth session of ``persona``, scoped to its project.

        ``system_scope='all'`` scopes it to the system instead.
        """
        key = (persona, system_scope)
        if key not in self._sessions:
            options = self.credentials(persona)
            if system_scope:
                del options['project_name'], options['project_domain_name']
                options['system_scope'] = system_scope
            self._sessions[key] = ks_session.Session(
                auth=v3.Password(**options))
        return self._sessions[key]

    def token(self, persona, system_scope=None):
        return self.session(persona, system_scope).get_token()

    def _admin(self):
        return ks_adapter.Adapter(self.session('admin'),
                                  service_type='identity',
                                  interface='public', region_name=REGION)

    def _find_or_create(self, kind, query, body):
        """The id of the ``kind`` that ``query`` finds; made if missing."""
        admin = self._admin()
        found = admin.get('/%ss' % kind, params=query).json()['%ss' % kind]
        if found:
            return found[0]['id']
        return admin.post('/%ss' % kind, json={kind: body}).json()[kind]['id']

    def provision(self):
        """Add the projects, roles and users of :data:`PERSONAS`.

        Existing ones are kept, so it may run again on the same state.
        """
        admin = self._admin()
        password = self._password()
        for persona, (user, project, roles) in PERSONAS.items():
            project_id = self._find_or_create(
                'project', {'name': project, 'domain_id': DOMAIN_ID},
                {'name': project, 'domain_id': DOMAIN_ID})
            user_id = self._find_or_create(
                'user', {'name': user, 'domain_id': DOMAIN_ID},
                {'name': user, 'domain_id': DOMAIN_ID,
                 'default_project_id': project_id, 'password': password})
            for role in roles:
                role_id = self._find_or_create('role', {'name': role},
                                               {'name': role})
                admin.put('/projects/%s/users/%s/roles/%s' % (
                    project_id, user_id, role_id))

    def register_endpoint(self, service_type, url):
        """Put ``url`` in the catalog as ``service_type`` (all interfaces).

        Registering the same type again points it at ``url``.
        """
        admin = self._admin()
        service_id = self._find_or_create(
            'service', {'type': service_type},
            {'type': service_type,
             'name': SERVICE_NAMES.get(service_type, service_type)})
        endpoints = {e['interface']: e for e in admin.get(
            '/endpoints', params={'service_id': service_id}).json()[
                'endpoints']}
        for interface in ('public', 'internal', 'admin'):
            if interface not in endpoints:
                admin.post('/endpoints', json={'endpoint': {
                    'service_id': service_id, 'interface': interface,
                    'url': url, 'region_id': REGION}})
            elif endpoints[interface]['url'] != url:
                admin.patch('/endpoints/%s' % endpoints[interface]['id'],
                            json={'endpoint': {'url': url}})
        # A token holds the catalog it was issued with: the sessions made
        # so far get new ones.
        for session in self._sessions.values():
            session.invalidate()

    def clouds(self):
        """``clouds.yaml`` content: a cloud per persona.

        Each is named ``cyborg-<persona>``, or as :data:`CLOUD_NAMES` says.
        """
        clouds = {}
        for persona in PERSONAS:
            name = CLOUD_NAMES.get(persona, 'cyborg-' + persona)
            clouds[name] = {
                'auth': self.credentials(persona), 'auth_type': 'password',
                'region_name': REGION, 'identity_api_version': 3}
        return {'clouds': clouds}

    def write_clouds_yaml(self, path):
        """Write :meth:`clouds` to ``path``, readable by its owner only.

        It is written as JSON, which YAML readers read as well.
        """
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                          0o600), 'w') as f:
            json.dump(self.clouds(), f, indent=2, sort_keys=True)


def authtoken_options(conf, options):
    """Set ``[keystone_authtoken]`` of ``conf`` to ``options``.

    keystonemiddleware's options and those of the auth plugin that
    ``options['auth_type']`` names are registered first.
    """
    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)
    conf.register_opts(ks_loading.get_auth_plugin_conf_options(
        options['auth_type']), group='keystone_authtoken')
    for key, value in options.items():
        conf.set_override(key, value, group='keystone_authtoken')
    return conf


def protect(app, options):
    """``app`` behind ``auth_token`` configured with ``options``.

    The options are those of ``[keystone_authtoken]``
    (:meth:`Keystone.authtoken_options` gives them for a persona); they
    live in a configuration of their own.
    """
    conf = cfg.ConfigOpts()
    conf([], project='keystone-demo', default_config_files=[],
         default_config_dirs=[])
    return auth_token.AuthProtocol(
        app, {'oslo_config_config': authtoken_options(conf, options)})


def main(argv=None):
    parser = argparse.ArgumentParser(
        description='Serve the real Keystone on SQLite with the Cyborg '
                    'test personas.')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=5000)
    parser.add_argument('--state-dir', required=True)
    parser.add_argument('--venv', default='.venvs/keystone',
                        help='the virtualenv Keystone is installed in')
    parser.add_argument('--endpoint', action='append', default=[],
                        metavar='TYPE=URL',
                        help='add a service to the catalog (repeatable)')
    parser.add_argument('--clouds-yaml', help='write clouds.yaml here')
    args = parser.parse_args(argv)
    keystone = Keystone(args.state_dir, args.port, args.venv, args.host)
    # Keystone runs in a session of its own: stopped with this process,
    # whether interrupted or terminated.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        keystone.start()
        for endpoint in args.endpoint:
            service_type, _, url = endpoint.partition('=')
            keystone.register_endpoint(service_type, url)
        if args.clouds_yaml:
            keystone.write_clouds_yaml(args.clouds_yaml)
        print('Keystone serving on %s' % keystone.url, flush=True)
        keystone.proc.wait()
    except KeystoneError as e:
        parser.exit(2, 'error: %s\n' % e)
    except KeyboardInterrupt:
        pass
    finally:
        keystone.stop()


if __name__ == '__main__':
    main()
