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
"""The quickstart end to end: real processes, three simulated boots.

Placement, the real Glance and Cyborg run as child processes on free
ports, as ``tools/quickstart.sh`` starts them; the demo boots an FPGA
instance (programmed with the demo bitstream by the stand-in fpgaconf)
and a vGPU instance through the Nova simulator, then deletes them. With
``--keystone`` the real Keystone runs too and the openstack CLI uses the
quickstart's ``clouds.yaml``; with ``--keystone --nova`` the whole stack
is ``cyborg.tests.functional.api.test_tempest``'s.
"""

import configparser
import contextlib
import io
import json
import os
import subprocess
import sys
import urllib.parse

import fixtures
import openstack
import pytest
import requests

from cyborg.tests import base
from cyborg.tests import functional
from cyborg.tests import openstack_fixtures
from cyborg_quickstart import nova
from cyborg_quickstart import nova_sim
from cyborg_quickstart import quickstart
from cyborg_quickstart import quickstart_demo


#: The state directory of a quickstart that tools/quickstart.sh started in
#: its default mode and left running (.ci/run does): test_all_in_one
#: checks it, runs its demo again and stops it.
QUICKSTART_STATE = 'CYBORG_TEST_QUICKSTART_STATE'

#: Run with a service's arguments: prepares the process as the service
#: does, makes the database's tables, builds the API and prints the status
#: of an admin's GET /metrics.
METRICS_OF_ARGUMENTS = """
import sys
import cyborg.cmd
from cyborg.api import app
from cyborg.common import rpc
from cyborg.db import api as db_api
from cyborg.db import models
from cyborg import startup
import webob
startup.prepare_service(["cyborg-api"] + sys.argv[1:])
models.BASE.metadata.create_all(db_api.get_engine())
rpc.init(startup.CONF)
print(webob.Request.blank("/metrics").get_response(
    app.setup_app(startup.CONF)).status_int)
"""


class TestOptions(base.TestCase):

    def test_before_or_after_the_command(self):
        self.useFixture(fixtures.EnvironmentVariable('CYBORG_STATE'))

        def parsed(*argv):
            args = quickstart._parser().parse_args(argv)
            return args.state, args.api_port, args.glance_port
        self.assertEqual(('.state', 6666, 9292), parsed('status'))
        self.assertEqual(('s', 16666, 9292), parsed(
            'start', '--api-port', '16666', '--state', 's'))
        # After the command wins; what it leaves out stays as before it.
        self.assertEqual(('s', 16666, 19292), parsed(
            '--state', 's', '--api-port', '1', '--glance-port', '19292',
            'start', '--api-port', '16666', '--rabbit', 'rabbit://h/'))

    def test_neutron_db_needs_nova(self):
        for argv in (['--neutron-db', 'mysql+pymysql://h/n'],
                     ['--nova', '--neutron-db', 'mysql+pymysql://h/n']):
            stderr = self.useFixture(fixtures.StringStream('stderr'))
            self.useFixture(fixtures.MonkeyPatch('sys.stderr',
                                                 stderr.stream))
            self.assertEqual(2, quickstart.main(['start'] + argv))
            self.assertIn('--neutron-db needs --nova', stderr.getDetails()[
                'stderr'].as_text())

    def test_own_options_survive_a_rerun_and_every_service_reads_them(self):
        # cyborg.conf is written on every start; cyborg.conf.d/ is the
        # user's. [metrics] enabled = True put there gives /metrics to the
        # services the next start runs, with their own arguments.
        state = self.useFixture(fixtures.TempDir()).path
        qs = quickstart.Quickstart(state)
        qs.prepare()
        own = os.path.join(state, 'cyborg.conf.d', 'metrics.conf')
        with open(own, 'w') as f:
            f.write('[metrics]\nenabled = True\n')
        rerun = quickstart.Quickstart(state)
        rerun.prepare('rabbit://h/')
        with open(own) as f:
            self.assertEqual('[metrics]\nenabled = True\n', f.read())
        commands = dict(rerun._commands('rabbit://h/'))
        for name in ('api', 'conductor', 'agent'):
            self.assertEqual(['--config-file', rerun.conf, '--config-dir',
                              os.path.join(state, 'cyborg.conf.d')],
                             commands[name][-4:], name)
        self.assertEqual(commands['api'][-4:], dict(qs._commands(None))[
            'all_in_one'][-4:])
        statuses = []
        for conf_dir in (os.path.join(state, 'cyborg.conf.d'), self.useFixture(
                fixtures.TempDir()).path):
            done = subprocess.run(
                [sys.executable, '-c', METRICS_OF_ARGUMENTS,
                 '--config-file', rerun.conf, '--config-dir', conf_dir],
                capture_output=True, text=True, timeout=120, check=True)
            statuses.append(done.stdout.split()[-1])
        # Without the user's file, /metrics is not served.
        self.assertEqual(['200', '404'], statuses)

    def test_real_neutron_replaces_the_stand_in(self):
        state = self.useFixture(fixtures.TempDir()).path
        qs = quickstart.Quickstart(state, nova_venv='nova',
                                   neutron_db='mysql+pymysql://h/n')
        qs.prepare('rabbit://h/')
        self.assertEqual(['nova-api', 'nova-compute', 'nova-conductor',
                          'nova-scheduler'],
                         sorted(name for name, _ in qs.nova.commands()))
        self.assertIn('neutron', dict(qs._commands('rabbit://h/')))
        with open(qs.conf) as f:
            conf = f.read()
        self.assertIn('intel_nic_driver', conf)
        self.assertIn('physical_device_mappings = physnet1:ens785f0', conf)
        # The personas alone, as its tempest.conf's [cyborg_policy] says.
        self.assertIn('[oslo_policy]\nenforce_new_defaults = true\n', conf)
        self.assertTrue(os.path.isdir(os.path.join(
            state, 'sysfs', 'bus', 'pci', 'devices', '0000:18:00.0')))
        # Without a database for it, Nova runs its stand-in.
        qs = quickstart.Quickstart(state, nova_venv='nova')
        self.assertIn('neutron', dict(qs.nova.commands()))
        self.assertIsNone(qs.neutron)


class TestQuickstart(base.TestCase):

    def setUp(self):
        super().setUp()
        missing = openstack_fixtures.Glance.missing()
        if missing:
            self.skipTest(missing)
        self.state = self.useFixture(fixtures.TempDir()).path
        self.args = ['--state', self.state]
        for service, port in zip(quickstart.PORTS,
                                 functional.free_ports(len(quickstart.PORTS))):
            self.args += ['--%s-port' % service, str(port)]
        self.addCleanup(self._main, 'stop')

    def _main(self, command, *argv):
        # Options after the command, as tools/quickstart.sh passes them.
        if command == 'start':
            argv += ('--glance-venv', str(openstack_fixtures.Glance.VENV))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = quickstart.main([command] + self.args + list(argv))
        return rc, out.getvalue()

    def _port(self, service):
        return self.args[self.args.index('--%s-port' % service) + 1]

    def _nova_sim(self, *argv):
        """``cyborg-nova-sim`` as the quickstart's summary says to run it."""
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            rc = nova_sim.main([
                '--cyborg', 'http://127.0.0.1:%s/v2' % self._port('api'),
                '--placement', 'http://127.0.0.1:%s' % self._port(
                    'placement'),
                '--events-port', self._port('nova'),
                '--state-dir', self.state] + list(argv))
        return rc, out.getvalue()

    def _arq_states(self, instance):
        """The states of the accelerator requests of ``instance``."""
        response = requests.get(
            'http://127.0.0.1:%s/v2/accelerator_requests' % self._port('api'),
            params={'instance': instance})
        self.assertEqual(200, response.status_code, response.text)
        return [arq['state'] for arq in response.json()['arqs']]

    def _logs(self):
        """The end of each service's log, for a failure's message."""
        logs = os.path.join(self.state, 'logs')
        text = []
        for name in sorted(os.listdir(logs)):
            with open(os.path.join(logs, name)) as f:
                text.append('--- %s\n%s' % (name, f.read()[-3000:]))
        return '\n'.join(text)

    def _check_demo(self, output):
        self.assertIn('== devices in Placement', output)
        for name in ('vm-fpga', 'vm-vgpu', 'vm-fake'):
            self.assertIn('== %s booted as' % name, output)
            self.assertIn('== deleting %s: 1 accelerator request(s) '
                          'released' % name, output)
        self.assertIn('<hostdev mode="subsystem" type="pci" managed="yes">',
                      output)
        self.assertIn('<hostdev mode="subsystem" type="mdev" '
                      'model="vfio-pci" managed="no">', output)
        self.assertIn('== vm-fake booted as', output)
        self.assertIn('(nothing: Nova skips TEST_PCI attach handles)',
                      output)

    def _check_titles(self, titles):
        """Each service's process shows its own name in ps, not ``-c``."""
        pids = dict(quickstart.Quickstart(self.state).services())
        for name, title in titles.items():
            with open('/proc/%d/cmdline' % pids[name]) as f:
                cmdline = f.read().replace('\0', ' ')
            self.assertTrue(cmdline.startswith(title), (name, cmdline))

    def test_all_in_one(self):
        ran = os.environ.get(QUICKSTART_STATE)
        if ran:
            # CI ran tools/quickstart.sh itself, demo and all: check that
            # one, on the ports it saved, rather than start another.
            with open(os.path.join(ran, 'quickstart.json')) as f:
                ports = json.load(f)['ports']
            self.state = ran
            self.args = ['--state', ran]
            for service, port in ports.items():
                self.args += ['--%s-port' % service, str(port)]
        else:
            rc, output = self._main('start')
            self.assertEqual(0, rc, output + self._logs())
            self._check_demo(output)
        with open(os.path.join(self.state, 'logs', 'all_in_one.log')) as f:
            self.assertIn('Programming 0000:', f.read())
        rc, status = self._main('status')
        self.assertEqual(0, rc, status)
        for name in ('all_in_one', 'glance', 'placement'):
            self.assertIn('%-12s running' % name, status)
        self._check_titles({'all_in_one': 'cyborg-all-in-one --config-file'})
        # What the openstack CLI's accelerator commands call.
        conn = openstack.connect(
            auth_type='none', load_yaml_config=False, load_envvars=False,
            auth={'endpoint': 'http://127.0.0.1:%s/v2' % self._port('api')})
        self.addCleanup(conn.close)
        self.assertEqual(
            {'demo-fpga-aes', 'demo-vgpu', 'demo-fake-device'},
            {p.name for p in conn.accelerator.device_profiles()})
        # Running it again is safe whatever the user did in between: an
        # instance booted as the summary says uses a demo profile, and a
        # clouds.yaml and a tempest.conf name a Keystone that no longer
        # runs.
        rc, output = self._nova_sim(
            'boot', '--flavor-extra-spec', 'accel:device_profile=demo-vgpu',
            '--name', 'vm1')
        self.assertEqual(0, rc, output)
        vm1 = output.split(' booted as ')[1].split()[0]
        clouds_yaml = os.path.join(self.state, 'clouds.yaml')
        with open(clouds_yaml, 'w') as f:
            json.dump({'clouds': {}}, f)
        tempest_conf = os.path.join(self.state, 'tempest.conf')
        with open(tempest_conf, 'w') as f:
            f.write('[identity]\n')
        rc, output = self._main('start')
        self.assertEqual(0, rc, output + self._logs())
        self.assertIn('== device profile demo-vgpu (kept)', output)
        self._check_demo(output)
        self.assertFalse(os.path.exists(clouds_yaml))
        self.assertFalse(os.path.exists(tempest_conf))
        self.assertEqual(['Bound'], self._arq_states(vm1))
        rc, output = self._nova_sim('delete', 'vm1')
        self.assertEqual(0, rc, output)
        self.assertIn('1 accelerator request(s) released', output)
        self.assertEqual([], self._arq_states(vm1))
        rc, output = self._main('stop')
        self.assertEqual(0, rc, output)
        for name in ('all_in_one', 'glance', 'placement'):
            self.assertIn('== stopping %s (pid' % name, output)
        self.assertEqual(3, self._main('status')[0])

    def test_separate_processes_on_rabbitmq(self):
        url = os.environ.get('CYBORG_TEST_RABBIT_URL')
        if not url:
            self.skipTest('CYBORG_TEST_RABBIT_URL is not set')
        rc, output = self._main('start', '--rabbit', url)
        self.assertEqual(0, rc, output + self._logs())
        self._check_demo(output)
        rc, status = self._main('status')
        for name in ('agent', 'api', 'conductor'):
            self.assertIn('%-12s running' % name, status)
        # The API's workers run under a master process, and so do the
        # conductor's, one per core; the agent runs in the command's
        # process.
        cores = len(os.sched_getaffinity(0))
        conductor = 'cyborg-conductor --config-file'
        if cores > 1:
            conductor = 'cyborg-conductor: master process [' + conductor
        self._check_titles({
            'api': 'cyborg-api: master process [cyborg-api --config-file',
            'agent': 'cyborg-agent --config-file',
            'conductor': conductor})
        conf = configparser.ConfigParser(interpolation=None)
        conf.read(os.path.join(self.state, 'cyborg.conf'))
        self.assertEqual(str(cores), conf['conductor']['workers'])

    def test_keystone(self):
        missing = openstack_fixtures.Keystone.missing()
        osc = openstack_fixtures.VENVS / 'osc-10.5.0' / 'bin' / 'openstack'
        if not missing and not osc.exists():
            missing = ('%s is missing: run tools/setup-client-venvs.sh' %
                       osc)
        if missing:
            self.skipTest(missing)
        rc, output = self._main('start', '--keystone', '--keystone-venv',
                                str(openstack_fixtures.Keystone.VENV))
        self.assertEqual(0, rc, output + self._logs())
        self._check_demo(output)
        rc, status = self._main('status')
        self.assertEqual(0, rc, status)
        self.assertIn('%-12s running' % 'keystone', status)
        # Cyborg and Placement refuse a request without a Keystone token.
        for url in ('http://127.0.0.1:%s/v2/device_profiles' % self._port(
                'api'), 'http://127.0.0.1:%s/resource_providers' %
                self._port('placement')):
            self.assertEqual(401, requests.get(
                url, headers={'X-Auth-Token': 'admin'}).status_code)
        clouds_yaml = os.path.join(self.state, 'clouds.yaml')
        with open(clouds_yaml) as f:
            clouds = json.load(f)['clouds']
        self.assertEqual('cyborg', clouds['cyborg-service']['auth'][
            'username'])
        self.assertEqual('project-b', clouds['cyborg-member-b']['auth'][
            'project_name'])
        # What the quickstart says to run, with the real CLI.
        command = ('--os-cloud cyborg-admin accelerator device profile list'
                   ' -f value -c name')
        self.assertIn('OS_CLIENT_CONFIG_FILE=%s .venvs/osc-10.5.0/bin/'
                      'openstack %s' % (clouds_yaml, command.split(' -f')[0]),
                      output)
        listed = {}
        for cloud in ('cyborg-admin', 'cyborg-member', 'cyborg-reader',
                      'cyborg-member-b', 'cyborg-service'):
            result = subprocess.run(  # nosec B603
                [str(osc)] + command.replace('cyborg-admin', cloud).split(),
                capture_output=True, text=True, timeout=120,
                env=dict(os.environ, OS_CLIENT_CONFIG_FILE=clouds_yaml))
            self.assertEqual(0, result.returncode, result.stderr)
            listed[cloud] = set(result.stdout.split())
        # With the profile tempest.conf names.
        self.assertEqual(
            dict.fromkeys(listed, {'demo-fpga-aes', 'demo-vgpu',
                                   'demo-fake-device', 'demo-pci'}), listed)
        # "demo" in another process finds Keystone from what start saved.
        rc, output = self._main('demo')
        self.assertEqual(0, rc, output + self._logs())
        self._check_demo(output)
        rc, output = self._main('stop')
        self.assertEqual(0, rc, output)
        self.assertIn('== stopping keystone (pid', output)
        self.assertEqual(3, self._main('status')[0])

    @pytest.mark.long(minutes=5)
    def test_real_nova(self):
        venv = openstack_fixtures.VENVS / ('nova-' + nova.NOVA_VERSION)
        osc = openstack_fixtures.VENVS / 'osc-10.5.0' / 'bin' / 'openstack'
        for needed in (venv / 'bin' / 'nova-compute', osc):
            if not needed.exists():
                self.skipTest('%s is missing: run '
                              'tools/setup-client-venvs.sh' % needed)
        vhost = 'quickstart-nova-' + os.path.basename(self.state)
        if functional.rabbitmqctl('add_vhost', vhost) or \
                functional.rabbitmqctl('set_permissions', '-p', vhost,
                                       'guest', '.*', '.*', '.*'):
            self.skipTest('needs rabbitmqctl for a virtual host')
        self.addCleanup(functional.rabbitmqctl, 'delete_vhost', vhost)
        rabbit = urllib.parse.urlsplit(functional.RABBIT_URL)._replace(
            path='/' + vhost).geturl()
        self.assertEqual(2, self._main('start', '--nova')[0])
        start = ('start', '--nova', '--nova-venv', str(venv), '--osc',
                 str(osc), '--rabbit', rabbit)
        rc, output = self._main(*start)
        self.assertEqual(0, rc, output + self._logs())
        # A server booted as the summary says, then the quickstart run
        # again: Nova, restarted on its databases, keeps the server, and
        # Cyborg its accelerator request; the demo boots beside it.
        boot = output.split('  Boot:')[1].split('\n')[0].split()
        osc_env = dict(item.split('=', 1) for item in boot if '=' in item)
        created = subprocess.run(  # nosec B603
            [item for item in boot if '=' not in item] + ['-f', 'json'],
            capture_output=True, text=True, timeout=300,
            env=dict(os.environ, **osc_env))
        self.assertEqual(0, created.returncode, created.stderr)
        vm1 = json.loads(created.stdout)['id']
        rc, output = self._main(*start)
        self.assertEqual(0, rc, output + self._logs())
        self.assertIn('== device profile demo-vgpu (kept)', output)
        # Either FPGA (bus 5e or af) may be picked.
        for name, handle in (('vm-fpga', r'PCI \{"bus": "(5e|af)"'),
                             ('vm-vgpu', r'MDEV \{"asked_type": "nvidia-')):
            self.assertIn('$ openstack server create --flavor %s' % dict(
                (n, p) for n, p, _ in quickstart_demo.DEMO)[name], output)
            self.assertIn('== %s is ACTIVE on %s; the fake driver got:' % (
                name, quickstart_demo.HOST), output)
            self.assertIn('== deleted %s' % name, output)
            self.assertRegex(output, r'\(Bound\) ' + handle)
        with open(os.path.join(self.state, 'logs', 'agent.log')) as f:
            self.assertIn('Programming 0000:', f.read())
        rc, status = self._main('status')
        self.assertEqual(0, rc, status)
        for name in ('nova-api', 'nova-compute', 'nova-conductor',
                     'nova-scheduler', 'neutron'):
            self.assertRegex(status, r'%s +running' % name)
        # Left ready for openstack server create by hand.
        compute = nova.compute_adapter('http://127.0.0.1:%s/v2.1' %
                                       self._port('nova'))
        flavors = compute.get('/flavors/detail').json()['flavors']
        self.assertEqual(
            {p: {'accel:device_profile': p}
             for _, p, _ in quickstart_demo.DEMO},
            {f['name']: f['extra_specs'] for f in flavors})
        self.assertEqual(['ACTIVE'], [
            s['status'] for s in compute.get('/servers/detail').json()[
                'servers']])
        self.assertEqual(['Bound'], self._arq_states(vm1))
        # The restarted nova-compute deletes it, and Cyborg its request.
        deleted = subprocess.run(  # nosec B603
            [str(osc), 'server', 'delete', '--wait', vm1],
            capture_output=True, text=True, timeout=300,
            env=dict(os.environ, **osc_env))
        self.assertEqual(0, deleted.returncode, deleted.stderr)
        self.assertEqual([], self._arq_states(vm1))
        self.assertEqual([], compute.get('/servers').json()['servers'])
        rc, output = self._main('stop')
        self.assertEqual(0, rc, output)
        self.assertIn('== stopping nova-compute (pid', output)
        self.assertEqual(3, self._main('status')[0])
