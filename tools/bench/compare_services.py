#!/usr/bin/env python3
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
"""The services tools/bench/compare.py starts, and how it talks to them.

The existing openstack-cyborg 17.0.0 (its own virtualenv, its own config,
its WSGI application under gunicorn), Cyborg as the quickstart runs it, and
the bare WSGI limit; a kept-alive HTTP client for their noauth APIs.
"""

import http.client
import json
import os
import shutil
import subprocess  # nosec B404
import sys
import time

import compare_report
from keystoneauth1 import exceptions as ks_exceptions

from cyborg_quickstart import nova_sim
from cyborg_quickstart import placement
from cyborg_quickstart import quickstart_demo

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HOST = 'bench-host'
CONSTRAINTS = os.path.join(ROOT, 'tools',
                           'openstack-cyborg-17.0.0-constraints.txt')
HEADERS = {'Accept': 'application/json',
           'Content-Type': 'application/json',
           'X-Roles': 'admin,member,reader', 'X-Service-Roles': 'service',
           # The existing service wants UUIDs.
           'X-Project-Id': '0b1e7a6d5c4f4e3d9a8b7c6d5e4f3a2b',
           'X-User-Id': '5f4e3d2c1b0a49f88e7d6c5b4a392817'}
#: gunicorn as the existing service's API runs: 2 workers × 4 threads.
GUNICORN = ['--workers', '2', '--threads', '4', '--worker-class', 'gthread']


def log(message):
    print('%s %s' % (time.strftime('%H:%M:%S'), message), flush=True)


# --- HTTP -------------------------------------------------------------------

class Client:
    """A kept-alive connection to a noauth API, reopened when dropped."""

    def __init__(self, url):
        self.url = url
        host, port = url.split('//')[1].split('/')[0].split(':')
        self.prefix = '/' + url.split('//')[1].split('/', 1)[1]
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)

    def call(self, method, path, body=None):
        data = json.dumps(body) if body is not None else None
        for attempt in (1, 2):
            try:
                self.conn.request(method, self.prefix + path, body=data,
                                  headers=HEADERS)
                response = self.conn.getresponse()
                payload = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                if attempt == 2:
                    raise
        return response.status, payload


def expect(client, method, path, body, status):
    got, payload = client.call(method, path, body)
    if got != status:
        raise RuntimeError('%s %s answered %d: %s' % (
            method, path, got, payload[:300]))
    return json.loads(payload) if payload else None


def wait(what, check, timeout, alive=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if alive is not None:
            alive()
        try:
            found = check()
        except (OSError, http.client.HTTPException, RuntimeError):
            found = None
        if found:
            return found
        time.sleep(0.5)
    raise SystemExit('%s within %d s: no' % (what, timeout))


# --- the services -----------------------------------------------------------

class _Processes:
    """Processes we start, each in a session of its own, with a log.

    They run in the log directory, so that no package of this tree is
    imported by the existing service.
    """

    def __init__(self, logs):
        self.logs = logs
        self.procs = {}

    def start(self, name, argv, **kwargs):
        os.makedirs(self.logs, exist_ok=True)
        with open(os.path.join(self.logs, name + '.log'), 'ab') as log:
            # Our own commands: the services under test.
            self.procs[name] = subprocess.Popen(  # nosec B603
                argv, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
                cwd=self.logs, **kwargs)

    def alive(self):
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise SystemExit('%s exited (%s); see %s' % (
                    name, proc.returncode,
                    os.path.join(self.logs, name + '.log')))

    def stop(self):
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
        self.procs = {}


def _wait_placement(url, timeout=120, alive=None):
    def answers():
        try:
            return placement.adapter(url, '1.0').get('/').status_code == 200
        except ks_exceptions.ConnectionError:
            return False  # not listening yet
    wait('Placement on %s' % url, answers, timeout, alive)


def _register_host(placement_url):
    nova_sim.NovaSim(None, placement.adapter(
        placement_url, nova_sim.PLACEMENT_VERSION), None, None
    ).register_host(HOST)


def fresh_mysql_database(server, name):
    """An empty database ``name`` on the MySQL/MariaDB server ``server``.

    :param server: an SQLAlchemy URL of the server, without database.
    :returns: the database's URL, in UTF-8 as devstack's.
    """
    import sqlalchemy as sa  # only with --mysql

    url = sa.engine.make_url(server)
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.exec_driver_sql('DROP DATABASE IF EXISTS %s' % name)
        connection.exec_driver_sql('CREATE DATABASE %s CHARACTER SET utf8'
                                   % name)
    engine.dispose()
    return url.set(database=name, query={'charset': 'utf8'}).render_as_string(
        hide_password=False)


def ensure_existing_venv(venv):
    if os.path.exists(os.path.join(venv, 'bin', 'gunicorn')):
        return
    log('== installing openstack-cyborg 17.0.0 and gunicorn into %s' % venv)
    subprocess.run([sys.executable, '-m', 'venv', venv],  # nosec B603
                   check=True)
    subprocess.run([os.path.join(venv, 'bin', 'pip'), 'install',  # nosec
                    '-q', 'openstack-cyborg==17.0.0', 'PyMySQL', 'gunicorn',
                    '-c', CONSTRAINTS], check=True)


class Existing:
    """openstack-cyborg 17.0.0: db sync, conductor, agent and gunicorn.

    Configured as its devstack plugin does (one conductor and one agent
    process, the WSGI application under a WSGI server, RabbitMQ; no
    executor, pool or timeout options; MySQL when ``db`` names a
    database), but for what the comparison needs of both services: no
    Keystone, no debug logging, SQLite when ``db`` is None.
    """

    name = 'existing'
    host = HOST

    def __init__(self, state, ports, rabbit, venv, db=None):
        self.state = state
        self.ports = ports
        self.rabbit = rabbit
        self.db = db
        self.venv = os.path.abspath(venv)
        self.api = 'http://127.0.0.1:%d/v2' % ports['api']
        self.processes = _Processes(os.path.join(state, 'logs'))

    def _config(self):
        placement_url = 'http://127.0.0.1:%d' % self.ports['placement']
        nova_url = 'http://127.0.0.1:%d/v2.1' % self.ports['nova']
        paste = os.path.join(self.venv, 'etc', 'cyborg', 'api-paste.ini')
        with open(paste) as f:
            # noauth: the pipeline without Keystone's middleware; the
            # load generator says who it is with the X-Roles headers.
            text = f.read().replace(' authtoken api_v2', ' api_v2')
        with open(os.path.join(self.state, 'api-paste.ini'), 'w') as f:
            f.write(text)
        # noauth2's fixed token of the demo Placement, and the stub Nova.
        token = 'auth_type = admin_token\nendpoint = %s\ntoken = %s\n'  # nosec
        with open(os.path.join(self.state, 'cyborg.conf'), 'w') as f:
            f.write('\n'.join([
                '[DEFAULT]', 'host = %s' % HOST,
                'transport_url = %s' % self.rabbit,
                'state_path = %s' % self.state,
                '[database]', 'connection = %s' % (
                    self.db or 'sqlite:///%s' % os.path.join(
                        self.state, 'cyborg.sqlite')),
                '[api]', 'api_paste_config = %s' % os.path.join(
                    self.state, 'api-paste.ini'),
                '[agent]', 'enabled_drivers = fake_driver',
                '[oslo_concurrency]', 'lock_path = %s' % self.state,
                '[placement]', token % (placement_url, placement.TOKEN),
                '[nova]', token % (nova_url, placement.TOKEN)]))

    def prepare(self):
        """A fresh state directory and configuration file.

        :returns: the services' ``--config-file`` arguments.
        """
        shutil.rmtree(self.state, ignore_errors=True)
        os.makedirs(self.state)
        self._config()
        return ['--config-file', os.path.join(self.state, 'cyborg.conf')]

    def create_schema(self, conf):
        """The database, by the existing service's own program.

        Its migrations on MySQL, as devstack runs them; they use ALTER
        COLUMN, which SQLite lacks: there its schema comes from its
        models.
        """
        subprocess.run([os.path.join(self.venv, 'bin', 'cyborg-dbsync')]
                       + conf + ['upgrade' if self.db else 'create_schema'],
                       check=True, capture_output=True)  # nosec B603

    def start(self):
        # Fresh databases: the figures are those of 200 profiles.
        conf = self.prepare()
        bin_ = os.path.join(self.venv, 'bin')
        placement_url = 'http://127.0.0.1:%d' % self.ports['placement']
        self.processes.start('placement', [
            sys.executable, '-m', 'cyborg_quickstart.placement', '--port',
            str(self.ports['placement']), '--db', 'sqlite:///%s' %
            os.path.join(self.state, 'placement.sqlite')])
        _wait_placement(placement_url, alive=self.processes.alive)
        _register_host(placement_url)
        self.create_schema(conf)
        self.processes.start('conductor',
                             [os.path.join(bin_, 'cyborg-conductor')] + conf)
        self.processes.start('agent',
                             [os.path.join(bin_, 'cyborg-agent')] + conf)
        self.processes.start('api', [
            os.path.join(bin_, 'gunicorn')] + GUNICORN + [
            '--bind', '127.0.0.1:%d' % self.ports['api'],
            # Not this tree: its cyborg package is the other one.
            '--chdir', self.state, '--pythonpath', HERE,
            'legacy_wsgi:application'],
            env=dict(os.environ, CYBORG_BENCH_CONFIG=conf[1]))

    def alive(self):
        self.processes.alive()

    def services(self):
        return {name: [self.processes.procs[name].pid]
                for name in compare_report.SERVICES}

    def stop(self):
        self.processes.stop()


class Ours:
    """Cyborg as the quickstart runs it: --rabbit or all-in-one."""

    def __init__(self, state, ports, rabbit=None, db=None):
        self.name = 'rabbit' if rabbit else 'all_in_one'
        self.host = quickstart_demo.HOST
        self.state = state
        self.ports = ports
        self.rabbit = rabbit
        self.db = db
        self.api = 'http://127.0.0.1:%d/v2' % ports['api']

    def _quickstart(self, *args):
        ports = []
        for service in ('api', 'placement', 'glance', 'nova', 'keystone',
                        'neutron'):
            ports += ['--%s-port' % service, str(self.ports[service])]
        # The quickstart of this tree, in this virtualenv.
        subprocess.run(  # nosec B603
            [sys.executable, '-m', 'cyborg_quickstart.quickstart', '--state',
             self.state] + list(args) + ports, check=True, cwd=ROOT,
            stdout=subprocess.DEVNULL)

    def start(self):
        if os.path.isdir(os.path.join(self.state, 'run')):
            self.stop()
        # Fresh databases: the figures are those of 200 profiles.
        shutil.rmtree(self.state, ignore_errors=True)
        os.makedirs(self.state)
        self._quickstart('start', '--no-demo', *(
            ['--rabbit', self.rabbit] if self.rabbit else []), *(
            ['--db', self.db] if self.db else []))

    def _pids(self):
        pids = {}
        run = os.path.join(self.state, 'run')
        for entry in os.listdir(run):
            if entry.endswith('.pid'):
                with open(os.path.join(run, entry)) as f:
                    pids[entry[:-4]] = json.load(f)[0]
        return pids

    def alive(self):
        for name, pid in self._pids().items():
            if not os.path.exists('/proc/%d' % pid):
                raise SystemExit('%s exited; see %s/logs' % (name,
                                                             self.state))

    def services(self):
        pids = self._pids()
        if 'all_in_one' in pids:
            return {'all_in_one': [pids['all_in_one']]}
        return {name: [pids[name]] for name in compare_report.SERVICES}

    def stop(self):
        self._quickstart('stop')


class Bare:
    """The limit: gunicorn answering the list of profiles from memory."""

    name = 'bare'

    def __init__(self, state, port, venv, body):
        self.state = state
        self.api = 'http://127.0.0.1:%d/v2' % port
        self.port = port
        self.venv = venv
        self.body = body
        self.processes = _Processes(os.path.join(state, 'logs'))

    def start(self):
        os.makedirs(self.state, exist_ok=True)
        body = os.path.join(self.state, 'device_profiles.json')
        with open(body, 'wb') as f:
            f.write(self.body)
        self.processes.start('bare', [
            os.path.join(self.venv, 'bin', 'gunicorn')] + GUNICORN + [
            '--bind', '127.0.0.1:%d' % self.port, '--chdir', self.state,
            '--pythonpath', HERE, 'bare_wsgi:application'],
            env=dict(os.environ, CYBORG_BENCH_BODY=body))

    def alive(self):
        self.processes.alive()

    def services(self):
        return {}

    def stop(self):
        self.processes.stop()
