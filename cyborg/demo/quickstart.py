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
"""The quickstart: a whole Cyborg on loopback, and three simulated boots.

``tools/quickstart.sh`` installs Cyborg, then runs this module. Everything
lives under one state directory: ``cyborg.conf``, the SQLite databases,
the simulated host's sysfs tree (:mod:`cyborg.demo.quickstart_host`),
Glance's state (``glance/``), the process ids (``run/``) and logs.

``start`` starts the real Placement, the real Glance
(:mod:`cyborg.demo.glance`, which gets the demo bitstream's image, with
its seed-002 metadata as image properties, on first use) and Cyborg
(one all-in-one process on ``fake://``, or ``cyborg-api``,
``cyborg-conductor`` and ``cyborg-agent`` on RabbitMQ), registers the
compute node as nova-compute would, waits until the devices are in
Placement and runs ``demo`` (:mod:`cyborg.demo.quickstart_demo`): boot
an FPGA instance (programmed with the demo bitstream), a vGPU instance and
an instance with the fake driver's device with :mod:`cyborg.demo.nova_sim`,
print their ``<hostdev>`` elements, delete them. ``status`` and ``stop``
look after the services. Starting again stops what runs first, and keeps
what the user made.

With a Keystone virtualenv, the real Keystone runs first
(:mod:`cyborg.demo.keystone`), Cyborg, Placement and Glance check its
tokens, ``clouds.yaml`` holds a cloud per user and ``tempest.conf``
(:mod:`cyborg.demo.tempest_conf`) describes the services to Tempest. With
a Nova virtualenv, the real Nova's services (:mod:`cyborg.demo.nova`) run
instead of the simulator, behind Keystone too when it runs: nova-compute
registers the compute node, and the demo boots servers with ``openstack
server create`` and prints what the fake virt driver got. Given a MySQL
database for it, the real Neutron (:mod:`cyborg.demo.neutron`) runs
before Nova instead of Nova's stand-in, with the shared network
``demo-net``, and the host has an Intel NIC whose VFs ports may ask for.
"""

import argparse
import json
import os
import signal
# The quickstart starts its services.
import subprocess  # nosec B404
import sys
import time

from keystoneauth1 import exceptions as ks_exceptions

from cyborg.demo import glance
from cyborg.demo import keystone
from cyborg.demo import neutron
from cyborg.demo import nova
from cyborg.demo import nova_runner
from cyborg.demo import nova_sim
from cyborg.demo import placement
from cyborg.demo import privsep
from cyborg.demo import quickstart_demo
from cyborg.demo import quickstart_host
from cyborg.demo import sysfs
from cyborg.demo import tempest_conf

PORTS = {'api': 6666, 'placement': 8778, 'glance': 9292, 'nova': 8774,
         'keystone': 5000, 'neutron': 9696}
#: Keystone's virtualenv (tools/setup-client-venvs.sh makes it).
KEYSTONE_VENV = os.path.join('.venvs', 'keystone')
#: Glance's virtualenv (tools/setup-client-venvs.sh makes it).
GLANCE_VENV = os.path.join('.venvs', 'glance')
#: The openstack CLI (tools/setup-client-venvs.sh installs it).
OSC = os.path.join('.venvs', 'osc-10.5.0', 'bin', 'openstack')

_LAUNCH = (
    'import subprocess, sys\n'
    'log = open(sys.argv[1], "ab")\n'
    'print(subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, '
    'stdout=log, stderr=subprocess.STDOUT, start_new_session=True).pid)\n')


def _started(pid):
    """When process ``pid`` started (clock ticks since boot), or None.

    None too for a process that ended and waits to be reaped.
    """
    try:
        with open('/proc/%d/stat' % pid) as f:
            # Fields after the command name, which may hold spaces: the
            # state is field 3, the start time field 22.
            fields = f.read().rsplit(')', 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in ('Z', 'X') else int(fields[19])


class Quickstart:
    """The quickstart's services and files under ``state``."""

    def __init__(self, state, ports=None, nodename=quickstart_demo.HOST,
                 keystone_venv=None, nova_venv=None, osc=OSC,
                 glance_venv=GLANCE_VENV, neutron_db=None,
                 neutron_venv=neutron.VENV):
        """The services under ``state`` on ``ports``.

        :param keystone_venv: Keystone's virtualenv: run the real Keystone
            and make Cyborg, Placement and Glance check its tokens; None
            for noauth.
        :param nova_venv: Nova's virtualenv: run the real Nova (its API on
            the ``nova`` port) instead of the boot simulator.
        :param osc: the openstack CLI the real Nova's demo boots with.
        :param glance_venv: Glance's virtualenv.
        :param neutron_db: with Nova, a MySQL database's URL: run the real
            Neutron (from ``neutron_venv``) on it instead of Nova's
            stand-in, and give the host an Intel NIC with VFs.
        """
        self.state = os.path.abspath(state)
        #: The compute node's name, and its resource provider's.
        self.nodename = nodename
        self.ports = dict(PORTS, **(ports or {}))
        self.custom_ports = self.ports != PORTS
        self.conf = os.path.join(self.state, 'cyborg.conf')
        self.keystone = keystone.Keystone(
            self.path('keystone'), self.ports['keystone'],
            keystone_venv) if keystone_venv else None
        # Started by start() as a service of its own; this one names its
        # state and makes clients.
        self.glance = glance.Glance(self.path('glance'), self.ports['glance'],
                                    glance_venv)
        # Their RabbitMQ URL is Cyborg's, set by start().
        self.neutron = neutron.Neutron(
            self.path('neutron'), self.ports['neutron'], neutron_venv,
            neutron_db, None, placement=None if self.keystone else self.url(
                'placement')) if nova_venv and neutron_db else None
        self.nova = nova.NovaServices(
            self.path('nova'), nova_venv,
            {'api': self.ports['nova'], 'neutron': self.ports['neutron']},
            self.url('placement'), self.url('api') + '/v2',
            self.url('glance'), None, quickstart_demo.HOST, nodename=nodename,
            keystone=self.keystone, sysfs=self.path('sysfs'),
            neutron_stand_in=not self.neutron) if nova_venv else None
        self.osc = os.path.abspath(osc)
        #: What boots on the services and says where they are.
        self.demo = quickstart_demo.Demo(self)

    def path(self, *parts):
        return os.path.join(self.state, *parts)

    def url(self, service):
        return 'http://127.0.0.1:%d' % self.ports[service]

    # --- files ------------------------------------------------------------

    def prepare(self, rabbit=None, db=None):
        """Write the config, the simulated host and the demo bitstream."""
        for sub in ('run', 'logs', 'bin', 'downloads') + (
                ('keystone',) if self.keystone else ()):
            os.makedirs(self.path(sub), exist_ok=True)
        with open(self.path('quickstart.json'), 'w') as f:
            json.dump({'ports': self.ports, 'rabbit': rabbit,
                       'keystone': self.keystone and self.keystone.venv,
                       'nova': self.nova and self.nova.venv,
                       'glance': self.glance.venv, 'osc': self.osc,
                       'neutron_db': self.neutron and self.neutron.db}, f)
        afu_files = sysfs.keep_or_build(
            self.path('sysfs'), quickstart_host.devices(self.neutron))
        with open(self.path('bin', 'afu_files.json'), 'w') as f:
            json.dump(afu_files, f)
        fpgaconf = self.path('bin', 'fpgaconf')
        with open(fpgaconf, 'w') as f:
            f.write(quickstart_host.FPGACONF.format(
                python=sys.executable,
                afu_files=self.path('bin', 'afu_files.json')))
        # A program: the stand-in runs as fpgaconf.
        os.chmod(fpgaconf, 0o755)  # nosec B103
        with open(self.conf, 'w') as f:
            f.write(self._config(rabbit, db))
        if self.keystone:
            with open(self.path('placement.conf'), 'w') as f:
                f.write('\n'.join(
                    ['[api]', 'auth_strategy = keystone', '',
                     '[keystone_authtoken]'] + self._credentials() + ['']))
            with open(os.open(self.path('authtoken.json'),
                              os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                              0o600), 'w') as f:
                json.dump(self.keystone.authtoken_options(), f)

    def _credentials(self):
        """Config lines: password auth as Cyborg's service user."""
        return ['auth_type = password',
                'region_name = %s' % keystone.REGION] + [
            '%s = %s' % item for item in sorted(
                self.keystone.credentials('cyborg').items())]

    def _config(self, rabbit, db):
        def token(url):
            if self.keystone:
                # The service's URL comes from Keystone's catalog.
                return '\n'.join(self._credentials())
            return 'auth_type = admin_token\nendpoint = %s\ntoken = %s' % (
                url, placement.TOKEN)
        auth = []
        if self.keystone:
            auth = [
                '', '[keystone_authtoken]',
                'www_authenticate_uri = %s' % self.keystone.auth_url,
            ] + self._credentials() + [
                # Cyborg's token goes with a user's to Glance and Nova.
                '', '[service_user]', 'send_service_user_token = true',
            ] + self._credentials()
        return '\n'.join([
            '[DEFAULT]',
            'host = %s' % quickstart_demo.HOST, 'periodic_interval = 10',
            'state_path = %s' % self.state,
            'transport_url = %s' % (rabbit or 'fake://'),
            '', '[database]',
            'connection = %s' % (
                db or 'sqlite:///%s' % self.path('cyborg.sqlite')),
            '', '[api]',
            'auth_strategy = %s' % ('keystone' if self.keystone
                                    else 'noauth'),
            'host_ip = 127.0.0.1',
            'port = %d' % self.ports['api'],
            '', '[conductor]', 'workers = 1',
            '', '[agent]',
            'enabled_drivers = %s' % quickstart_host.drivers(self.neutron),
            'sysfs_root = %s' % self.path('sysfs'),
            'resource_provider_name = %s' % self.nodename,
            'enable_hotplug_monitor = false',
            'placement_wait_interval = 2',
            '', '[gpu_devices]',
            'enabled_vgpu_types = %s' % quickstart_host.VGPU_TYPE,
            '', '[pci]', 'device_spec = %s' % json.dumps(
                quickstart_demo.pci_device_spec()),
            '', '[fpga]', 'fpgaconf_path = %s' % self.path('bin', 'fpgaconf')
        ] + quickstart_demo.trust_lines(self.keystone) + [
            '', '[glance]'] + (
                self._credentials() if self.keystone else []) + [
            'endpoint_override = %s' % self.url('glance'),
            'download_dir = %s' % self.path('downloads'),
            '', '[placement]', token(self.url('placement')),
            # Nova's compute API is under /v2.1, as its catalog entry says.
            '', '[nova]', token(self.url('nova') + '/v2.1'),
            '', '[oslo_concurrency]',
            'lock_path = %s' % self.path('run'), '', '[oslo_policy]',
            'enforce_new_defaults = true'] + auth +
            quickstart_host.nic_config(self.neutron) + [
            ''] + privsep.config_lines(self.conf))

    # --- processes --------------------------------------------------------

    def _commands(self, rabbit):
        python = sys.executable

        def console(module):
            # The console scripts' code, run by this interpreter, so the
            # services run from the same tree wherever it is installed.
            return [python, '-c', 'import sys; from cyborg.cmd.%s import '
                    'main; sys.exit(main())' % module,
                    '--config-file', self.conf]

        commands = []
        if self.keystone:
            commands.append(('keystone', [
                python, '-m', 'cyborg.demo.keystone',
                '--port', str(self.ports['keystone']),
                '--state-dir', self.keystone.state,
                '--venv', self.keystone.venv,
                '--clouds-yaml', self.path('clouds.yaml')] + [
                    '--endpoint=%s=%s' % endpoint
                    for endpoint in self.endpoints().items()]))
        commands += [
            ('placement', [python, '-m', 'cyborg.demo.placement',
                           '--port', str(self.ports['placement']), '--db',
                           'sqlite:///' + self.path('placement.sqlite')] + (
                               ['--config-file', self.path('placement.conf')]
                               if self.keystone else [])),
            ('glance', [python, '-m', 'cyborg.demo.glance', '--port',
                        str(self.ports['glance']), '--state-dir',
                        self.glance.state, '--venv', self.glance.venv] + (
                            ['--authtoken-file', self.path('authtoken.json')]
                            if self.keystone else [])),
        ]
        if self.neutron:
            self.neutron.rabbit = rabbit
            commands.append(('neutron', self.neutron.command(
                self.path('authtoken.json') if self.keystone else None)))
        if rabbit:
            commands += [(name, console(name))
                         for name in ('conductor', 'api', 'agent')]
        else:
            commands.append(('all_in_one', console('all_in_one')))
        return commands

    def endpoints(self):
        """Keystone's catalog: service type: URL."""
        # Compute is under /v2.1; Neutron runs with the real Nova.
        return {'placement': self.url('placement'),
                'accelerator': self.url('api') + '/v2',
                'compute': self.url('nova') + '/v2.1',
                'image': self.url('glance'),
                **({'network': self.url('neutron')} if self.nova else {})}

    def _pid(self, name):
        """The pid of service ``name`` if it runs, else None."""
        try:
            with open(self.path('run', name + '.pid')) as f:
                pid, started = json.load(f)
        except (OSError, ValueError):
            return None
        # A pid the kernel gave to another program since is not ours. The
        # start time tells (services may retitle their command line).
        return pid if _started(pid) == started else None

    def _spawn(self, name, argv, cwd=None, env=None):
        """Start a service in a session of its own, not as our child.

        A launcher starts it and exits, so the service outlives this
        process and nobody has to reap it. The launcher returns once the
        service's program runs, so its pid file is right at once. It runs
        in ``cwd`` (default: the state directory) with ``env``.
        """
        # Our own commands, from _commands() and NovaServices.commands().
        launched = subprocess.run(  # nosec B603
            [sys.executable, '-c', _LAUNCH,
             self.path('logs', name + '.log')] + argv,
            cwd=cwd or self.state, env=env, check=True,
            capture_output=True, text=True)
        pid = int(launched.stdout)
        with open(self.path('run', name + '.pid'), 'w') as f:
            json.dump([pid, _started(pid)], f)

    def services(self):
        """(name, pid or None) of every service that was started."""
        run = self.path('run')
        names = sorted(e[:-4] for e in os.listdir(run)
                       if e.endswith('.pid')) if os.path.isdir(run) else []
        return [(name, self._pid(name)) for name in names]

    def stop(self):
        # All at once: several take seconds to stop gracefully.
        services = self.services()
        for name, pid in services:
            if pid is not None:
                quickstart_demo.echo('== stopping %s (pid %d)' % (name, pid))
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        for name, pid in services:
            while self._pid(name) is not None and time.monotonic() < deadline:
                time.sleep(0.2)
            if self._pid(name) is not None:
                # Each service leads a session of its own: kill its
                # workers too, which would keep its port.
                os.killpg(pid, signal.SIGKILL)
            os.unlink(self.path('run', name + '.pid'))

    def _wait_http(self, name, url, timeout=120):
        adapter = nova_sim.cyborg_adapter(url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._pid(name) is None:
                raise quickstart_demo.QuickstartError('%s exited; see %s' % (
                    name, self.path('logs', name + '.log')))
            try:
                answered = adapter.get('').status_code < 500
            except ks_exceptions.ConnectionError:
                answered = False  # not listening yet
            if answered:
                return
            time.sleep(0.5)
        raise quickstart_demo.QuickstartError(
            '%s does not answer on %s; see %s' % (
                name, url, self.path('logs', name + '.log')))

    def _wait_keystone(self, timeout=300):
        """Wait until Keystone is bootstrapped: clouds.yaml is written."""
        log = self.path('logs', 'keystone.log')
        deadline = time.monotonic() + timeout
        while not os.path.exists(self.path('clouds.yaml')):
            if self._pid('keystone') is None:
                raise quickstart_demo.QuickstartError(
                    'keystone exited; see %s and %s' % (
                        log, self.keystone.state))
            if time.monotonic() > deadline:
                raise quickstart_demo.QuickstartError(
                    'Keystone was not ready within %d s; see %s' % (
                        timeout, log))
            time.sleep(0.5)

    def start(self, rabbit=None, db=None, register_host=True):
        """(Re)start Placement, the image service and Cyborg.

        :param register_host: create the compute node's resource provider
            as the simulated nova-compute does; leave it False when a real
            nova-compute runs, which creates it and would be refused the
            name.
        """
        self.stop()
        self.prepare(rabbit, db)
        if self.nova:
            register_host = False
            quickstart_demo.echo('== setting up Nova %s in %s' % (
                nova.NOVA_VERSION, self.nova.state))
            os.makedirs(self.nova.state, exist_ok=True)
            self.nova.rabbit_url = rabbit
            # Nova keeps its databases, servers and compute node from one
            # start to the next. On its first start here its compute node
            # is new: Placement would refuse it the name of the one the
            # simulated nova-compute of an earlier run registered.
            if (not os.path.exists(self.nova.path('nova_api.sqlite')) and
                    os.path.exists(self.path('placement.sqlite'))):
                os.unlink(self.path('placement.sqlite'))
            self.nova.setup()
        quickstart_demo.echo('== building the database schema')
        subprocess.run([sys.executable, '-c', 'import sys; from '  # nosec B603
                        'cyborg.cmd.dbsync import main; sys.exit(main())',
                        '--config-file', self.conf, 'upgrade'], check=True,
                       cwd=self.state)
        commands = dict(self._commands(rabbit))
        # Written once Keystone is ready; without Keystone, those left by
        # an earlier run would name a Keystone that does not run.
        for name in ('clouds.yaml',) + tempest_conf.FILES:
            if os.path.exists(self.path(name)):
                os.unlink(self.path(name))
        if self.keystone:
            quickstart_demo.echo('== starting the real Keystone on %s' %
                                 self.url('keystone'))
            self._spawn('keystone', commands.pop('keystone'))
            self._wait_keystone()
        for name in ('placement', 'glance') + (
                ('neutron',) if self.neutron else ()):
            quickstart_demo.echo('== starting %s on %s' % (
                name, self.url(name)))
            self._spawn(name, commands.pop(name))
            self._wait_http(name, self.url(name), timeout=300)
        if self.neutron:
            # The shared network servers (and tempest.conf) name.
            neutron.shared_network(neutron.adapter(
                self.url('neutron'), self.keystone and self.keystone.session(
                    'admin')), nova_runner.NETWORK['name'],
                neutron.loopback_cidr(self.ports['neutron']))
        quickstart_demo.echo('== demo bitstream: image %s' %
                             self.demo.bitstream()['id'])
        if self.nova:
            self.demo.image(quickstart_demo.DISK_NAME, b'a demo disk')
        if register_host:
            rp_uuid = self.demo.nova_sim().register_host(
                quickstart_demo.HOST)
            quickstart_demo.echo(
                '== nova-compute (simulated) registers %s in Placement: %s'
                % (quickstart_demo.HOST, rp_uuid))
        for name, argv in commands.items():
            quickstart_demo.echo('== starting cyborg %s' %
                                 name.replace('_', '-'))
            self._spawn(name, argv)
        api = 'all_in_one' if 'all_in_one' in commands else 'api'
        self._wait_http(api, self.url('api'))
        quickstart_demo.echo('== Cyborg API on %s/v2' % self.url('api'))
        if self.nova:
            for name, argv in self.nova.commands():
                quickstart_demo.echo('== starting %s' % name)
                self._spawn(name, argv, cwd=self.nova.state,
                            env=self.nova.env())
            quickstart_demo.echo('== waiting for nova-compute\'s node %s' %
                                 self.nodename)
            try:
                self.nova.wait_for_compute()
            except nova.NovaError as e:
                raise quickstart_demo.QuickstartError(str(e)) from e
            quickstart_demo.echo('== Nova API on %s' % self.nova.url)
        if self.keystone:
            tempest_conf.write_for(self)


def _add_common_options(parser, defaults):
    """The state directory and each service's port.

    :param defaults: give the options their defaults; false where they
        follow the command, so that leaving them out there keeps what
        came before it.
    """
    def default(value):
        return value if defaults else argparse.SUPPRESS
    parser.add_argument(
        '--state', default=default(os.environ.get('CYBORG_STATE', '.state')),
        help='directory of every file (default: $CYBORG_STATE or .state)')
    for service, port in PORTS.items():
        parser.add_argument('--%s-port' % service, type=int,
                            default=default(port),
                            help='port of %s (default: %d)' % (service, port))


def _parser():
    parser = argparse.ArgumentParser(
        prog='python -m cyborg.demo.quickstart',
        description='Run Cyborg, Placement and a simulated host on '
                    'loopback and boot three simulated instances.')
    _add_common_options(parser, defaults=True)
    # The same options after the command too (tools/quickstart.sh start
    # --api-port 16666); there they override what came before it.
    common = argparse.ArgumentParser(add_help=False)
    _add_common_options(common, defaults=False)
    commands = parser.add_subparsers(dest='command', required=True)

    def command(name, help):
        return commands.add_parser(name, help=help, parents=[common])
    start = command('start', '(re)start and run the demo')
    start.add_argument('--rabbit', metavar='URL',
                       help='RabbitMQ transport URL: run cyborg-api, '
                            'cyborg-conductor and cyborg-agent apart')
    start.add_argument('--db', metavar='URL',
                       help='database URL (default: SQLite in the state '
                            'directory)')
    start.add_argument('--keystone', action='store_true',
                       help='run the real Keystone; Cyborg, Placement and '
                            'Glance check its tokens; write clouds.yaml')
    start.add_argument('--keystone-venv', default=KEYSTONE_VENV,
                       help="Keystone's virtualenv (default: %s)" %
                            KEYSTONE_VENV)
    start.add_argument('--glance-venv', default=GLANCE_VENV,
                       help="Glance's virtualenv (default: %s)" %
                            GLANCE_VENV)
    start.add_argument('--nova', action='store_true',
                       help='run the real Nova (needs --rabbit), behind '
                            'Keystone with --keystone; its demo boots '
                            'servers with openstack server create')
    start.add_argument('--nova-venv', default=nova.VENV,
                       help="Nova's virtualenv (default: %s)" % nova.VENV)
    start.add_argument('--neutron-db', metavar='URL',
                       help='with --nova, an existing MySQL database '
                            '(mysql+pymysql://...): run the real Neutron '
                            'on it instead of a stand-in')
    start.add_argument('--osc', default=OSC,
                       help='the openstack CLI (default: %s)' % OSC)
    start.add_argument('--no-demo', action='store_true')
    command('demo', 'boot and delete the demo instances')
    command('status', 'show the services')
    command('stop', 'stop the services')
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    ports = {s: getattr(args, '%s_port' % s) for s in PORTS}
    keystone_venv = args.keystone_venv if getattr(
        args, 'keystone', False) else None
    nova_venv = args.nova_venv if getattr(args, 'nova', False) else None
    osc = getattr(args, 'osc', OSC)
    glance_venv = getattr(args, 'glance_venv', GLANCE_VENV)
    neutron_db = getattr(args, 'neutron_db', None)
    if (nova_venv and not args.rabbit) or (neutron_db and not nova_venv):
        print('quickstart: --nova needs --rabbit URL, --neutron-db needs '
              '--nova: their services talk over RabbitMQ', file=sys.stderr)
        return 2
    saved = os.path.join(args.state, 'quickstart.json')
    if args.command != 'start' and os.path.exists(saved):
        with open(saved) as f:
            saved = json.load(f)
        # Ports saved before Keystone could run lack its port.
        ports = dict(ports, **saved['ports'])
        keystone_venv = saved.get('keystone')
        nova_venv = saved.get('nova')
        osc = saved.get('osc', OSC)
        glance_venv = saved.get('glance', GLANCE_VENV)
        neutron_db = saved.get('neutron_db')
    quickstart = Quickstart(args.state, ports, keystone_venv=keystone_venv,
                            nova_venv=nova_venv, osc=osc,
                            glance_venv=glance_venv, neutron_db=neutron_db)
    try:
        if args.command == 'start':
            quickstart.start(args.rabbit, args.db)
            if not args.no_demo:
                quickstart.demo.run_demo()
            quickstart.demo.summary()
        elif args.command == 'demo':
            quickstart.demo.run_demo()
        elif args.command == 'stop':
            quickstart.stop()
        else:
            services = quickstart.services()
            width = max([12] + [len(name) + 1 for name, _ in services])
            for name, pid in services:
                print('%-*s %s' % (width, name, 'running (pid %d)' % pid
                                   if pid else 'stopped'))
            if not services:
                print('no services started from %s' % quickstart.state)
            return 0 if services and all(p for _, p in services) else 3
    except (quickstart_demo.QuickstartError, nova_sim.BootFailed,
            keystone.KeystoneError, neutron.NeutronError,
            subprocess.CalledProcessError) as e:
        print('quickstart: %s' % e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
