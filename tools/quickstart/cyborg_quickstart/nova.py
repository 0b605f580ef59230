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
"""The real Nova on loopback, against a running Cyborg and Placement.

:class:`NovaServices` runs the ``nova`` package from its own virtualenv
(``tools/setup-client-venvs.sh`` makes ``.venvs/nova-<version>``): ``nova-api``
(served by :mod:`cyborg_quickstart.nova_venv.nova_runner`), ``nova-conductor``,
``nova-scheduler`` and ``nova-compute`` with the fake virt driver, which
writes down the accelerators each guest gets. Nova keeps its API, cell0
and cell1 databases in SQLite files and talks over RabbitMQ. Neutron is
a stand-in that plugs nothing and gives no addresses (Nova asks it even
for ``networks: none``), or the real one (:mod:`cyborg_quickstart.neutron`),
started by the caller on the ``neutron`` port; a server with a fixed
IPv4 address there gets a simulated guest to log in to over SSH
(:mod:`cyborg_quickstart.nova_venv.nova_guest`).

Without Keystone, a filter makes every request to the compute API an
admin's, and Nova reaches the other services with a token they take as
one. With a :class:`cyborg_quickstart.keystone.Keystone`, Nova is configured as
devstack configures it: its API behind keystonemiddleware (``authtoken
keystonecontext``), and the ``nova`` service user (the ``service``
persona, with the ``service`` role) checking tokens, calling Placement
and Neutron, and sending its token beside the user's to Cyborg and
Glance (``[service_user]``); every service is found in Keystone's
catalog.

Everything lives under one state directory: ``nova.conf``,
``api-paste.ini``, the databases, ``logs/`` and the driver's records.
A new state directory gets a copy of the databases made once from the
virtualenv (:mod:`cyborg_quickstart.prebuilt`); they outlive a restart,
and with them the servers and the compute node. Each service runs in a
session of its own; :meth:`NovaServices.stop` stops them all.
"""

import json
import os
import shutil
import signal
# The harness starts Nova's services.
import subprocess  # nosec B404
import time

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session

from cyborg_quickstart import keystone as keystone_demo
from cyborg_quickstart import prebuilt

#: The Nova release the harness runs; its virtualenv is
#: ``.venvs/nova-<NOVA_VERSION>``.
NOVA_VERSION = '34.0.0'
VENV = os.path.join('.venvs', 'nova-' + NOVA_VERSION)
#: The compute API microversion the harness speaks.
MICROVERSION = '2.95'
#: The token every service sends without Keystone; Nova's filter and
#: Cyborg's noauth and Placement's noauth2 accept it.
TOKEN = 'admin'  # nosec B105
#: What runs in Nova's virtualenv, from the state directory, and the
#: template of its ``api-paste.ini``.
_NOVA_VENV = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          'nova_venv')
_RUNNERS = [os.path.join(_NOVA_VENV, name)
            for name in ('nova_runner.py', 'nova_guest.py')]
_PASTE = os.path.join(_NOVA_VENV, 'api-paste.ini')


class NovaError(Exception):
    """A Nova service did not start; the message says where its log is."""


def compute_adapter(url, microversion=MICROVERSION, session=None):
    """A keystoneauth adapter for the compute API at ``url`` (``/v2.1``).

    It sends the token of ``session`` (a keystoneauth session), or
    :data:`TOKEN`, which the test filter takes. Errors are answered, not
    raised.
    """
    if session is None:
        session = ks_session.Session(
            auth=ks_loading.get_plugin_loader('admin_token')
            .load_from_options(endpoint=url, token=TOKEN))
    return ks_adapter.Adapter(session, service_type='compute',
                              endpoint_override=url,
                              default_microversion=microversion,
                              raise_exc=False)


def _sqlite(path):
    return 'sqlite:///%s' % path


#: The databases in the state directory, and cell1's uuid beside them.
API_DB, CELL0_DB, CELL1_DB, CELL1_UUID = (
    'nova_api.sqlite', 'nova_cell0.sqlite', 'nova_cell1.sqlite', 'cell1-uuid')


class NovaServices:
    """Nova's services under ``state``, on loopback.

    :param venv: Nova's virtualenv.
    :param ports: ``{'api': port, 'neutron': port}``.
    :param placement_url: the Placement API (``noauth2``, token ``admin``).
    :param cyborg_url: Cyborg's API with its version (``.../v2``).
    :param glance_url: the image service.
    :param rabbit_url: Nova's RabbitMQ transport URL.
    :param host: ``[DEFAULT] host`` of every Nova service: the name Cyborg's
        agent serves as.
    :param nodename: the compute node's name, and its resource provider's,
        when it is not ``host`` (an FQDN, say).
    :param keystone: the :class:`cyborg_quickstart.keystone.Keystone` whose
        tokens the API checks, and whose catalog lists the other services,
        Neutron as ``network`` (the URLs above are then
        unused); None for the test filter.
    :param neutron_stand_in: start the Neutron stand-in of
        :mod:`cyborg_quickstart.nova_venv.nova_runner` on the ``neutron``
        port; false where the real Neutron serves there.
    :param sysfs: the host's (simulated) sysfs, where the guests find
        the ids of the PCI functions passed through to them; None for
        ``/sys``.
    :param provider_refresh: ``[compute]
        resource_provider_association_refresh``, the seconds nova-compute
        keeps its node's provider tree before reading it again (Nova's
        default, 300): a provider Cyborg deletes (a device gone from the
        host) fails every build there until then.
    """

    def __init__(self, state, venv, ports, placement_url, cyborg_url,
                 glance_url, rabbit_url, host, nodename=None, keystone=None,
                 neutron_stand_in=True, sysfs=None, provider_refresh=300):
        self.state = os.path.abspath(state)
        self.venv = os.path.abspath(venv)
        self.ports = ports
        self.placement_url = placement_url
        self.cyborg_url = cyborg_url
        self.glance_url = glance_url
        self.rabbit_url = rabbit_url
        self.host = host
        self.nodename = nodename or host
        self.keystone = keystone
        self.neutron_stand_in = neutron_stand_in
        self.sysfs = sysfs
        self.provider_refresh = provider_refresh
        self.conf = self.path('nova.conf')
        self.processes = {}

    def path(self, *parts):
        return os.path.join(self.state, *parts)

    @property
    def url(self):
        """The compute API, as Cyborg's ``[nova] endpoint`` names it."""
        return 'http://127.0.0.1:%d/v2.1' % self.ports['api']

    def adapter(self, microversion=MICROVERSION):
        """A compute adapter as an administrator."""
        return compute_adapter(self.url, microversion, self.keystone and
                               self.keystone.session('admin'))

    # --- files ------------------------------------------------------------

    def _auth(self):
        """``{section: lines}``: how Nova authenticates, finds services.

        Without Keystone, Placement and Neutron take the test token, and
        each service is at the URL given. With Keystone, as devstack
        writes them: the ``nova`` service user checks tokens and calls
        Placement and Neutron; Cyborg and Glance get the user's token with
        the service user's beside it; each is found in the catalog.
        """
        urls = {'placement': self.placement_url, 'cyborg': self.cyborg_url,
                'glance': self.glance_url,
                'neutron': 'http://127.0.0.1:%d' % self.ports['neutron']}
        if self.keystone is None:
            sections = {section: ['endpoint_override = %s' % url]
                        for section, url in urls.items()}
            for section in ('placement', 'neutron'):
                sections[section] += ['auth_type = admin_token',
                                      'endpoint = %s' % urls[section],
                                      'token = %s' % TOKEN]
            return sections
        region = 'region_name = %s' % keystone_demo.REGION
        nova = ['auth_type = password', region] + [
            '%s = %s' % item for item in sorted(
                self.keystone.credentials('service').items())]
        return {'placement': nova, 'neutron': nova, 'cyborg': [region],
                'glance': [region],
                'keystone_authtoken': nova + [
                    'www_authenticate_uri = %s' % self.keystone.auth_url],
                'service_user': ['send_service_user_token = true'] + nova}

    def _config(self):
        auth = []
        for section, lines in self._auth().items():
            auth += ['', '[%s]' % section] + lines
        return '\n'.join([
            '[DEFAULT]',
            'host = %s' % self.host,
            'transport_url = %s' % self.rabbit_url,
            'compute_driver = cyborg_recording.RecordingDriver',
            'state_path = %s' % self.state,
            'instances_path = %s' % self.path('instances'),
            'debug = true',
            # Nova's bind wait; Cyborg's own bind_timeout is shorter.
            'arq_binding_timeout = 120',
            'heal_instance_info_cache_interval = -1',
            # Periodic tasks start at once, not up to a minute later: the
            # scheduler's below maps a new compute node within a second.
            'periodic_fuzzy_delay = 0',
            '', '[api_database]',
            'connection = %s' % _sqlite(self.path(API_DB)),
            '', '[database]',
            'connection = %s' % _sqlite(self.path(CELL1_DB)),
            '', '[compute]', 'resource_provider_association_refresh = %d' %
            self.provider_refresh,
            '', '[conductor]', 'workers = 1',
            '', '[scheduler]', 'workers = 1',
            # New compute nodes are mapped to cell1 by the scheduler.
            'discover_hosts_in_cells_interval = 1'] + auth + [
            '', '[oslo_concurrency]', 'lock_path = %s' % self.path('locks'),
            '', '[os_vif_linux_bridge]', 'use_ipv6 = false',
            '', '[vnc]', 'enabled = false',
            '', '[wsgi]', 'api_paste_config = %s' % self.path(
                'api-paste.ini'),
            ''])

    def prepare(self):
        """Write the configuration and the runner."""
        for sub in ('logs', 'instances', 'locks'):
            os.makedirs(self.path(sub), exist_ok=True)
        # Run from the state directory: the paste filter imports it as
        # ``nova_runner`` from there, the driver ``nova_guest``.
        for runner in _RUNNERS:
            shutil.copy(runner, self.state)
        with open(_PASTE) as f:
            paste = f.read()
        with open(self.path('api-paste.ini'), 'w') as f:
            f.write(paste % {'auth': 'testauth' if self.keystone is None
                             else 'authtoken'})
        with open(self.conf, 'w') as f:
            f.write(self._config())

    # --- processes --------------------------------------------------------

    def env(self):
        """The environment Nova's services and commands run in."""
        return dict(os.environ,
                    OS_NOVA_CONFIG_DIR=self.state,
                    OS_NOVA_CONFIG_FILES='api-paste.ini;nova.conf',
                    CYBORG_NOVA_RECORDS=self.path('driver-records.jsonl'),
                    CYBORG_NOVA_NODENAME=self.nodename,
                    **({'CYBORG_NOVA_SYSFS': self.sysfs} if self.sysfs
                       else {}))

    def _bin(self, name):
        return os.path.join(self.venv, 'bin', name)

    def _runner(self, *args):
        return [self._bin('python'), self.path('nova_runner.py')] + list(
            args)

    def _manage(self, *args):
        """Run ``nova-manage``; what it printed, also added to its log."""
        # Nova's own command from its virtualenv.
        done = subprocess.run(  # nosec B603
            [self._bin('nova-manage'), '--config-file', self.conf] +
            list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, cwd=self.state, env=self.env())
        with open(self.path('logs', 'nova-manage.log'), 'a') as log:
            log.write(done.stdout)
        if done.returncode:
            raise NovaError('nova-manage %s failed; see %s' % (
                ' '.join(args), self.path('logs', 'nova-manage.log')))
        return done.stdout

    def _cell_uuid(self, name):
        """The uuid of cell ``name``, or None before it is created."""
        # A table: | Name | UUID | Transport URL | Database Connection | ...
        for line in self._manage('cell_v2', 'list_cells').splitlines():
            columns = [column.strip() for column in line.split('|')]
            if len(columns) > 2 and columns[1] == name:
                return columns[2]
        return None

    def _spawn(self, name, argv, **env):
        with open(self.path('logs', name + '.log'), 'w') as log:
            # Nova's commands from its virtualenv, or the runner.
            self.processes[name] = subprocess.Popen(  # nosec B603
                argv, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, cwd=self.state,
                env=dict(self.env(), **env), start_new_session=True)

    def _check_running(self):
        for name, proc in self.processes.items():
            if proc.poll() is not None:
                raise NovaError('%s exited with %d; see %s' % (
                    name, proc.returncode, self.path('logs', name + '.log')))

    def _wait(self, what, check, timeout):
        deadline = time.monotonic() + timeout
        while True:
            self._check_running()
            try:
                result = check()
            except ks_exceptions.ConnectionError:
                result = None  # not listening yet
            if result:
                return result
            if time.monotonic() > deadline:
                raise NovaError('timed out waiting for %s; see the logs in '
                                '%s' % (what, self.path('logs')))
            time.sleep(0.5)

    def setup(self):
        """Write the files; build or upgrade the API, cell0 and cell1 DBs.

        A new state directory gets a copy of the databases that
        :meth:`_steps` made once from the virtualenv
        (:mod:`cyborg_quickstart.prebuilt`); on an existing one, those of
        an earlier start, with their servers, are upgraded. Either way
        ``update_cell`` gives cell1 this start's RabbitMQ URL and its
        ``[database] connection``. It needs no other service,
        so a caller may do it while the ones Nova needs start.
        """
        fresh = not os.path.exists(self.path(API_DB))
        self.prepare()
        if fresh:
            prebuilt.copy_into(self.state, self.venv, 'nova', self._build,
                               (API_DB, CELL0_DB, CELL1_DB, CELL1_UUID))
            with open(self.path(CELL1_UUID)) as f:
                cell1 = f.read()
        else:
            cell1 = self._steps()
        self._manage('cell_v2', 'update_cell', '--cell_uuid', cell1,
                     '--transport-url', self.rabbit_url)
        return self

    def _build(self, directory):
        nova = NovaServices(directory, self.venv, self.ports,
                            self.placement_url, self.cyborg_url,
                            self.glance_url, self.rabbit_url, self.host)
        nova.prepare()
        with open(nova.path(CELL1_UUID), 'w') as f:
            f.write(nova._steps())

    def _steps(self):
        """Sync the API DB, map cell0 and cell1, sync the cells' DBs.

        The cell mappings name the cells' databases relative to the state
        directory, where every Nova process runs: a copy of the databases
        elsewhere finds its own cell0 (cell1 is then updated by
        :meth:`setup`). Each step may run again.

        :returns: cell1's uuid.
        """
        self._manage('api_db', 'sync')
        self._manage('cell_v2', 'map_cell0', '--database_connection',
                     _sqlite(CELL0_DB))
        cell1 = self._cell_uuid('cell1') or self._manage(
            'cell_v2', 'create_cell', '--name', 'cell1', '--verbose',
            '--database_connection', _sqlite(CELL1_DB)).split()[-1]
        self._manage('db', 'sync')
        return cell1

    def commands(self):
        """(name, command line) of each service, in the order to start.

        They run from :attr:`state` in the environment of :meth:`env`.
        """
        stand_in = [('neutron', self._runner(
            'neutron', str(self.ports['neutron'])))]
        return (stand_in if self.neutron_stand_in else []) + [
            ('nova-api', self._runner('api', str(self.ports['api'])))] + [
            ('nova-' + service, self._runner(service, '--config-file',
                                             self.conf))
            for service in ('conductor', 'scheduler', 'compute')]

    def start(self, timeout=180):
        """Start the services (after :meth:`setup`).

        Placement must answer. It returns once the compute node is mapped
        to its cell (:meth:`wait_for_compute`).
        """
        for name, argv in self.commands():
            self._spawn(name, argv)
        self.wait_for_compute(timeout)
        return self

    def wait_for_compute(self, timeout=180):
        """Wait for the compute node, mapped to its cell, and its report.

        The scheduler maps a new node to its cell (``[scheduler]
        discover_hosts_in_cells_interval``), so it can place servers on it;
        the compute API lists a node only once it is mapped. After a
        restart the node is known at once, but the scheduler takes the
        service for down until nova-compute reports again: a report newer
        than those the API first shows is waited for.
        """
        api = self.adapter()
        # The first reports, and the nodes and reports of the last look.
        seen = {}

        def reporting():
            reports = {s['id']: s['updated_at'] for s in api.get(
                '/os-services', params={'binary': 'nova-compute'}).json()[
                    'services']}
            seen.setdefault('first', reports)
            nodes = api.get('/os-hypervisors').json().get('hypervisors') or []
            seen.update(nodes=len(nodes), last=reports)
            return bool(nodes) and any(
                seen['first'].get(service) != updated
                for service, updated in reports.items())

        try:
            self._wait('the compute node %s in Nova, reporting' %
                       self.nodename, reporting, timeout)
        except NovaError as e:
            # What was missing, on the message's first line: the node, the
            # service, or a report newer than the first.
            raise NovaError('%s (last seen: %s compute nodes, nova-compute '
                            'reports %s, first %s)' % (
                                e, seen.get('nodes'), seen.get('last'),
                                seen.get('first'))) from None

    def start_compute(self, host, nodename, timeout=180):
        """Start one more ``nova-compute``, on ``host``, named ``nodename``.

        It returns once the node is mapped to its cell (listed by the
        compute API).
        """
        name = 'nova-compute-' + host
        path = self.path(name + '.conf')
        with open(path, 'w') as f:
            f.write('[DEFAULT]\nhost = %s\n' % host)
        self._spawn(name, self._runner('compute', '--config-file', self.conf,
                                       '--config-file', path),
                    CYBORG_NOVA_NODENAME=nodename)
        api = self.adapter()
        self._wait('the compute node %s in Nova' % nodename,
                   lambda: nodename in [
                       h['hypervisor_hostname'] for h in api.get(
                           '/os-hypervisors').json().get('hypervisors', [])],
                   timeout)

    def stop(self):
        """Stop every service: SIGTERM, then SIGKILL to its session."""
        for proc in self.processes.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.processes.values():
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        self.processes = {}

    def records(self):
        """What the virt driver was asked, oldest first.

        Each record is ``{'call': spawn, reboot, power_on or destroy,
        'instance': uuid, 'accel_info': the ARQs Nova passed}``.
        """
        try:
            with open(self.path('driver-records.jsonl')) as f:
                return [json.loads(line) for line in f]
        except FileNotFoundError:
            return []
