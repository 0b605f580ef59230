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
"""The servers of a production control plane, on loopback.

A three-node MariaDB Galera cluster, HAProxy in front of it and of the
API processes as kolla-ansible configures it (one active database
backend, the others backups; the APIs round robin), and a three-node
RabbitMQ cluster. Each server runs from the Debian packages with ports
and data directories of its own, so that the machine's own MariaDB and
RabbitMQ are left alone; each node can be killed with ``SIGKILL`` and
started again, and rejoins its cluster.
"""

import http.server
import os
import pwd
import shutil
import signal
import subprocess
import threading

import fixtures
import pymysql

from cyborg.tests import functional

GALERA_PROVIDER = '/usr/lib/galera/libgalera_smm.so'
RABBITMQ_BIN = '/usr/lib/rabbitmq/bin'
#: The user the test connects as, and the services: every privilege, as
#: kolla's database user has on the service's database.
DB_USER = 'cyborg'
DB_PASSWORD = 'topology'


def missing():
    """Why the clusters cannot run here, or None."""
    for path in (GALERA_PROVIDER, '/usr/sbin/mariadbd',
                 '/usr/bin/mariadb-install-db', '/usr/bin/rsync',
                 os.path.join(RABBITMQ_BIN, 'rabbitmq-server')):
        if not os.path.exists(path):
            return '%s is missing (Debian: galera-4, mariadb-server, ' \
                   'rsync, rabbitmq-server)' % path
    if not shutil.which('haproxy'):
        return 'haproxy is missing (Debian: haproxy)'
    if os.geteuid() != 0:
        return 'the clusters start their servers as root'
    return None


def _kill(pid_file):
    try:
        with open(pid_file) as f:
            pid = int(f.read().split()[0])
        os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError, IndexError):
        return
    functional.wait('process %d to die' % pid, lambda: not os.path.exists(
        '/proc/%d' % pid) or _zombie(pid), 30)


def _zombie(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().split(') ', 1)[1].startswith('Z')
    except OSError:
        return True


class NodeDown(Exception):
    """A Galera node did not answer."""


class Galera(fixtures.Fixture):
    """Three MariaDB nodes replicating with Galera (rsync SST, IST).

    :attr:`ports` are the nodes' SQL ports, :attr:`check_ports` those of
    their ``clustercheck``: HTTP 200 while the node is synced, 503 while
    it is not (joining, donor, down), as kolla-ansible runs it beside each
    node for HAProxy. The first node bootstraps the cluster; the others
    join it by state transfer.
    """

    NODES = 3
    #: SQL, clustercheck, group communication, IST and SST of each node.
    PORTS = 5 * NODES

    def __init__(self, root, ports):
        super().__init__()
        self.root = root
        self.ports, self.check_ports, self._gcomm, self._ist, self._sst = (
            ports[i * self.NODES:(i + 1) * self.NODES] for i in range(5))
        self._procs = {}

    def _setUp(self):
        mysql = pwd.getpwnam('mysql')
        os.chmod(self.root, 0o755)
        for node in range(self.NODES):
            path = self._dir(node)
            os.makedirs(os.path.join(path, 'data'))
            os.chown(path, mysql.pw_uid, mysql.pw_gid)
            os.chown(os.path.join(path, 'data'), mysql.pw_uid, mysql.pw_gid)
            self._write_cnf(node)
        subprocess.run(
            ['mariadb-install-db', '--defaults-file=' + self._cnf(0),
             '--user=mysql', '--skip-test-db',
             '--auth-root-authentication-method=socket'],
            check=True, capture_output=True, timeout=120)
        self.addCleanup(self._stop_all)
        self.start(0, bootstrap=True)
        self._sql(0, "CREATE USER '%s'@'%%' IDENTIFIED BY '%s'" % (
            DB_USER, DB_PASSWORD),
            "GRANT ALL PRIVILEGES ON *.* TO '%s'@'%%'" % DB_USER)
        for node in range(1, self.NODES):
            self.start(node)
        for node in range(self.NODES):
            self.wait_synced(node)
            self._clustercheck(node)

    def _clustercheck(self, node):
        galera = self

        class Check(http.server.BaseHTTPRequestHandler):
            def do_OPTIONS(self):
                synced = galera._procs[node].poll() is None and galera._synced(
                    node, alone=True)
                self.send_response(200 if synced else 503)
                self.send_header('Content-Length', '0')
                self.end_headers()

            do_GET = do_OPTIONS

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(
            ('127.0.0.1', self.check_ports[node]), Check)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)

    def _dir(self, node):
        return os.path.join(self.root, 'galera-%d' % node)

    def _cnf(self, node):
        return os.path.join(self._dir(node), 'my.cnf')

    def _socket(self, node):
        return os.path.join(self._dir(node), 'mysqld.sock')

    def log(self, node):
        return os.path.join(self._dir(node), 'error.log')

    def _write_cnf(self, node):
        cluster = ','.join('127.0.0.1:%d' % p for p in self._gcomm)
        options = {
            'datadir': os.path.join(self._dir(node), 'data'),
            'socket': self._socket(node),
            'pid-file': os.path.join(self._dir(node), 'mysqld.pid'),
            'log-error': self.log(node),
            'port': self.ports[node],
            'bind-address': '127.0.0.1',
            'skip-name-resolve': 'ON',
            'performance_schema': 'OFF',
            'innodb_buffer_pool_size': '64M',
            'innodb_log_file_size': '32M',
            'innodb_flush_log_at_trx_commit': 0,
            'innodb_autoinc_lock_mode': 2,
            'binlog_format': 'ROW',
            'default_storage_engine': 'InnoDB',
            'max_connections': 500,
            'wsrep_on': 'ON',
            'wsrep_provider': GALERA_PROVIDER,
            'wsrep_cluster_name': 'cyborg-topology',
            'wsrep_cluster_address': 'gcomm://' + cluster,
            'wsrep_node_name': 'node%d' % node,
            'wsrep_node_address': '127.0.0.1:%d' % self._gcomm[node],
            'wsrep_provider_options': '"gmcast.listen_addr=tcp://127.0.0.1:'
                                      '%d;ist.recv_addr=127.0.0.1:%d;'
                                      'gcache.size=64M;'
                                      'cert.log_conflicts=yes"' % (
                                          self._gcomm[node], self._ist[node]),
            'wsrep_sst_method': 'rsync',
            'wsrep_sst_receive_address': '127.0.0.1:%d' % self._sst[node],
            # Each certification failure is written to the error log.
            'wsrep_log_conflicts': 'ON',
        }
        with open(self._cnf(node), 'w') as f:
            f.write('[mysqld]\n')
            f.writelines('%s = %s\n' % item for item in options.items())

    def start(self, node, bootstrap=False):
        """Start a node; it joins the others (or, bootstrapping, is one)."""
        argv = ['mariadbd', '--defaults-file=' + self._cnf(node),
                '--user=mysql']
        if bootstrap:
            argv.append('--wsrep-new-cluster')
        self._procs[node] = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        functional.wait('Galera node %d to serve' % node,
                        lambda: self._serving(node), 120)

    def _serving(self, node):
        if self._procs[node].poll() is not None:
            raise RuntimeError('Galera node %d exited:\n%s' % (
                node, self._tail(node)))
        try:
            return self.status(node, 'wsrep_ready') == 'ON'
        except NodeDown:
            return False

    def _tail(self, node, lines=40):
        with open(self.log(node), errors='replace') as f:
            return ''.join(f.readlines()[-lines:])

    def kill(self, node):
        """``SIGKILL`` the node, as when its host dies."""
        self._procs[node].kill()
        self._procs[node].wait()

    def wait_synced(self, node, timeout=120):
        functional.wait('Galera node %d to be synced' % node,
                        lambda: self._synced(node), timeout)

    def _synced(self, node, alone=False):
        """Whether the node is synced (and sees all nodes, unless alone)."""
        try:
            return (self.status(node, 'wsrep_local_state_comment') ==
                    'Synced' and (alone or self.status(
                        node, 'wsrep_cluster_size') == str(self.NODES)))
        except NodeDown:
            return False

    def status(self, node, name):
        """A ``SHOW STATUS`` variable of the node, as a string."""
        (row,) = self._sql(node, "SHOW STATUS LIKE '%s'" % name)
        return row[1]

    def conflicts(self):
        """Certification failures and brute-force aborts of all nodes."""
        return sum(int(self.status(node, name))
                   for node in range(self.NODES) if self._running(node)
                   for name in ('wsrep_local_cert_failures',
                                'wsrep_local_bf_aborts'))

    def logged_conflicts(self):
        """The conflicts the nodes' error logs tell of.

        A transaction that lost to one certified before it (a brute-force
        abort, "cluster conflict"), or failed certification itself.
        """
        count = 0
        for node in range(self.NODES):
            with open(self.log(node), errors='replace') as f:
                count += sum('cluster conflict' in line or
                             'trx conflict' in line for line in f)
        return count

    def _running(self, node):
        return self._procs[node].poll() is None

    def _sql(self, node, *statements):
        """Run ``statements`` as root on the node; the rows of the last.

        With the ``mariadb`` client, over the node's socket.

        :raises NodeDown: the node did not answer.
        """
        result = subprocess.run(
            ['mariadb', '--socket=' + self._socket(node), '--batch',
             '--skip-column-names', '--connect-timeout=5', '-e',
             ';'.join(statements)], capture_output=True, text=True,
            timeout=60)
        if result.returncode:
            raise NodeDown(result.stderr)
        return [line.split('\t') for line in result.stdout.splitlines()]

    def url(self, port, database='cyborg'):
        """A URL of ``database`` through ``port`` (a node's or HAProxy's)."""
        return 'mysql+pymysql://%s:%s@127.0.0.1:%d/%s?charset=utf8' % (
            DB_USER, DB_PASSWORD, port, database)

    def _stop_all(self):
        for proc in self._procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self._procs.values():
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class HAProxy(fixtures.Fixture):
    """HAProxy in front of the Galera nodes and of the API processes.

    As kolla-ansible writes it: the database's listener sends every
    connection to the first node while its health check passes, the
    other nodes being ``backup``; the API's listener balances its
    servers round robin, checking each with ``GET /``.
    """

    def __init__(self, root, db_port, galera, api_port, api_servers):
        super().__init__()
        self.path = os.path.join(root, 'haproxy.cfg')
        self.db_port, self.galera = db_port, galera
        self.api_port, self.api_servers = api_port, api_servers

    def _setUp(self):
        # Checked every second, down after two failures: kolla checks
        # every 2 s and needs 5, the same behaviour, sooner.
        check = 'check inter 1000 rise 2 fall 2'
        lines = [
            'global', '    maxconn 4000',
            # A connection refused is tried again on another server.
            'defaults', '    retries 3', '    option redispatch',
            '    timeout connect 2s', '    timeout client 1h',
            '    timeout server 1h', '    timeout check 2s',
            'listen mariadb', '    mode tcp',
            '    bind 127.0.0.1:%d' % self.db_port, '    option httpchk',
        ]
        for index, (port, check_port) in enumerate(zip(
                self.galera.ports, self.galera.check_ports)):
            lines.append('    server node%d 127.0.0.1:%d %s port %d%s' % (
                index, port, check, check_port, ' backup' if index else ''))
        lines += ['listen cyborg_api', '    mode http',
                  '    bind 127.0.0.1:%d' % self.api_port,
                  '    balance roundrobin', '    option httpchk GET /',
                  '    timeout client 2m', '    timeout server 2m']
        for index, port in enumerate(self.api_servers):
            lines.append('    server api%d 127.0.0.1:%d %s' % (
                index, port, check))
        with open(self.path, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        self.proc = subprocess.Popen(
            ['haproxy', '-f', self.path, '-db'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(self._stop)

    def _stop(self):
        self.proc.terminate()
        self.proc.wait(30)


class RabbitMQ(fixtures.Fixture):
    """Three RabbitMQ nodes in one cluster, ``guest`` allowed on loopback.

    Each node is ``rmqN@localhost`` with its own AMQP and distribution
    ports and Mnesia directory; the nodes share an Erlang cookie (the
    ``HOME`` of this fixture). The CLI tools are called from
    ``/usr/lib/rabbitmq/bin``: Debian's wrappers in ``/usr/sbin`` switch
    to the ``rabbitmq`` user and its cookie.
    """

    NODES = 3
    PORTS = 2 * NODES

    def __init__(self, root, ports):
        super().__init__()
        self.root = os.path.join(root, 'rabbitmq')
        self.ports = ports[:self.NODES]
        self._dist = ports[self.NODES:2 * self.NODES]

    def _setUp(self):
        os.makedirs(self.root)
        cookie = os.path.join(self.root, '.erlang.cookie')
        with open(cookie, 'w') as f:
            f.write(os.urandom(10).hex())
        os.chmod(cookie, 0o400)
        with open(os.path.join(self.root, 'plugins'), 'w') as f:
            f.write('[].\n')
        with open(os.path.join(self.root, 'rabbitmq.conf'), 'w') as f:
            f.write('loopback_users = none\n')
        self.addCleanup(self._stop_all)
        for node in range(self.NODES):
            self._launch(node)
        for node in range(self.NODES):
            self._wait_started(node)
        for node in range(1, self.NODES):
            for command in (['stop_app'], ['join_cluster', self.name(0)],
                            ['start_app']):
                self.ctl(node, *command)

    def name(self, node):
        return 'rmq%d@localhost' % node

    def _env(self, node):
        base = os.path.join(self.root, 'node%d' % node)
        return dict(
            os.environ, HOME=self.root, RABBITMQ_NODENAME=self.name(node),
            # Where a node or a CLI call that crashes writes its dump.
            ERL_CRASH_DUMP=os.path.join(self.root, 'erl_crash.dump'),
            RABBITMQ_NODE_IP_ADDRESS='127.0.0.1',
            RABBITMQ_NODE_PORT=str(self.ports[node]),
            RABBITMQ_DIST_PORT=str(self._dist[node]),
            RABBITMQ_MNESIA_BASE=os.path.join(base, 'mnesia'),
            RABBITMQ_LOG_BASE=os.path.join(base, 'log'),
            RABBITMQ_PID_FILE=self._pid_file(node),
            RABBITMQ_ENABLED_PLUGINS_FILE=os.path.join(self.root, 'plugins'),
            RABBITMQ_CONFIG_FILE=os.path.join(self.root, 'rabbitmq.conf'))

    def _pid_file(self, node):
        return os.path.join(self.root, 'node%d.pid' % node)

    def ctl(self, node, *args, timeout=60):
        """``rabbitmqctl -n`` the node; its output."""
        return subprocess.run(
            [os.path.join(RABBITMQ_BIN, 'rabbitmqctl'), '-q', '-n',
             self.name(node)] + list(args), env=self._env(node), check=True,
            capture_output=True, text=True, timeout=timeout).stdout

    def start(self, node):
        """Start a node and wait until it serves (it rejoins its cluster)."""
        self._launch(node)
        self._wait_started(node)

    def _launch(self, node):
        subprocess.run(
            [os.path.join(RABBITMQ_BIN, 'rabbitmq-server'), '-detached'],
            env=self._env(node), check=True, capture_output=True, timeout=60)

    def _wait_started(self, node):
        self.ctl(node, 'wait', self._pid_file(node), timeout=120)

    def kill(self, node):
        """``SIGKILL`` the node's Erlang VM, as when its host dies."""
        _kill(self._pid_file(node))

    def leader(self, queue):
        """The node leading quorum queue ``queue``."""
        for line in self.ctl(0, 'list_queues', 'name', 'type',
                             'leader').splitlines():
            fields = line.split()
            if fields and fields[0] == queue:
                return [self.name(n) for n in range(self.NODES)].index(
                    fields[2])
        raise LookupError('no queue %s' % queue)

    def url(self, vhost=''):
        """A transport URL of all three nodes."""
        return 'rabbit://%s/%s' % (','.join(
            'guest:guest@127.0.0.1:%d' % port for port in self.ports), vhost)

    def _stop_all(self):
        for node in range(self.NODES):
            self.kill(node)


def database_created(port):
    """Whether HAProxy let us create the database ``cyborg``."""
    try:
        conn = pymysql.connect(host='127.0.0.1', port=port,
                               user=DB_USER, password=DB_PASSWORD,
                               connect_timeout=2)
    except pymysql.Error:
        return False
    with conn.cursor() as cursor:
        cursor.execute('CREATE DATABASE IF NOT EXISTS cyborg')
    conn.close()
    return True
