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
lives under one state directory: ``cyborg.conf``
(:mod:`cyborg_quickstart.quickstart_conf`, rewritten by every start; the
user's options go in ``cyborg.conf.d/``), the SQLite databases, the
simulated host's sysfs tree (:mod:`cyborg_quickstart.quickstart_host`),
Glance's state (``glance/``), the process ids (``run/``,
:mod:`cyborg_quickstart.quickstart_processes`) and logs.

``start`` starts the real Placement, the real Glance
(:mod:`cyborg_quickstart.glance`, which gets the demo bitstream's image, with
its seed-002 metadata as image properties, on first use) and Cyborg
(one all-in-one process on ``fake://``, or ``cyborg-api``,
``cyborg-conductor`` and ``cyborg-agent`` on RabbitMQ), registers the
compute node as nova-compute would, waits until the devices are in
Placement and runs ``demo`` (:mod:`cyborg_quickstart.quickstart_demo`): boot an
FPGA instance (programmed with the demo bitstream), a vGPU instance and an
instance with the fake driver's device with :mod:`cyborg_quickstart.nova_sim`,
print their ``<hostdev>`` elements, delete them. ``status`` and ``stop`` look
after the services. Starting again stops what runs first, and keeps what the
user made.

With a Keystone virtualenv, the real Keystone runs first
(:mod:`cyborg_quickstart.keystone`), Cyborg, Placement and Glance check its
tokens, ``clouds.yaml`` holds a cloud per user and ``tempest.conf``
(:mod:`cyborg_quickstart.tempest_conf`) describes the services to Tempest. With
a Nova virtualenv, the real Nova's services (:mod:`cyborg_quickstart.nova`) run
instead of the simulator, behind Keystone too when it runs: nova-compute
registers the compute node, and the demo boots servers with ``openstack
server create`` and prints what the fake virt driver got. Given a MySQL
database for it, the real Neutron (:mod:`cyborg_quickstart.neutron`) runs
before Nova instead of Nova's stand-in, with the shared network
``demo-net``, and the host has an Intel NIC whose VFs ports may ask for.
"""

import argparse
import json
import os
# The quickstart starts its services.
import subprocess  # nosec B404
import sys
import time

from cyborg.tests import sysfs
from cyborg_quickstart import glance
from cyborg_quickstart import keystone
from cyborg_quickstart import neutron
from cyborg_quickstart import nova
from cyborg_quickstart import nova_sim
from cyborg_quickstart.nova_venv import nova_runner
from cyborg_quickstart import quickstart_conf
from cyborg_quickstart import quickstart_demo
from cyborg_quickstart import quickstart_host
from cyborg_quickstart import quickstart_processes
from cyborg_quickstart import tempest_conf

PORTS = {'api': 6666, 'placement': 8778, 'glance': 9292, 'nova': 8774,
         'keystone': 5000, 'neutron': 9696}
#: Keystone's virtualenv (tools/setup-client-venvs.sh makes it).
KEYSTONE_VENV = os.path.join('.venvs', 'keystone')
#: Glance's virtualenv (tools/setup-client-venvs.sh makes it).
GLANCE_VENV = os.path.join('.venvs', 'glance')
#: The openstack CLI (tools/setup-client-venvs.sh installs it).
OSC = os.path.join('.venvs', 'osc-10.5.0', 'bin', 'openstack')


class Quickstart(quickstart_processes.ServiceProcesses):
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
        self.conf_args = ['--config-file', self.conf, '--config-dir',
                          os.path.join(self.state, 'cyborg.conf.d')]
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
        for sub in ('run', 'logs', 'bin', 'downloads', 'cyborg.conf.d') + (
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
                     '[keystone_authtoken]'] +
                    quickstart_conf.credentials(self.keystone) + ['']))
            with open(os.open(self.path('authtoken.json'),
                              os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                              0o600), 'w') as f:
                json.dump(self.keystone.authtoken_options(), f)

    def _config(self, rabbit, db):
        """The text of ``cyborg.conf`` (a subclass may add to it)."""
        return quickstart_conf.cyborg_conf(self, rabbit, db)

    # --- processes --------------------------------------------------------

    def _commands(self, rabbit):
        python = sys.executable

        def console(module):
            # The console scripts' code, run by this interpreter, so the
            # services run from the same tree wherever it is installed.
            return [python, '-c', 'import sys; from cyborg.cmd.%s import '
                    'main; sys.exit(main())' % module] + self.conf_args

        commands = []
        if self.keystone:
            commands.append(('keystone', [
                python, '-m', 'cyborg_quickstart.keystone',
                '--port', str(self.ports['keystone']),
                '--state-dir', self.keystone.state,
                '--venv', self.keystone.venv,
                '--clouds-yaml', self.path('clouds.yaml')] + [
                    '--endpoint=%s=%s' % endpoint
                    for endpoint in self.endpoints().items()]))
        commands += [
            ('placement', [python, '-m', 'cyborg_quickstart.placement',
                           '--port', str(self.ports['placement']), '--db',
                           'sqlite:///' + self.path('placement.sqlite')] + (
                               ['--config-file', self.path('placement.conf')]
                               if self.keystone else [])),
            ('glance', [python, '-m', 'cyborg_quickstart.glance', '--port',
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
            if (not os.path.exists(self.nova.path(nova.API_DB)) and
                    os.path.exists(self.path('placement.sqlite'))):
                os.unlink(self.path('placement.sqlite'))
            self.nova.setup()
        quickstart_demo.echo('== building the database schema')
        subprocess.run([sys.executable, '-c', 'import sys; from '  # nosec B603
                        'cyborg.cmd.dbsync import main; sys.exit(main())'] +
                       self.conf_args + ['upgrade'], check=True,
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
        prog='python -m cyborg_quickstart.quickstart',
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
