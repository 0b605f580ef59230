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
"""The services tools/bench/nova_boots.py boots servers through.

Each run on fresh state and RabbitMQ virtual hosts of its own: the
:class:`Cloud` (Placement, Glance, and Nova with two compute hosts), and
the accelerator service measured, openstack-cyborg 17.0.0
(:class:`Existing`) or Cyborg as the quickstart runs it (:class:`Ours`),
with an agent per host and the fake driver.
"""

import os
import shutil
import subprocess  # nosec B404
import sys
import urllib.parse

import compare_services as bench
from keystoneauth1 import exceptions as ks_exceptions

from cyborg_quickstart import glance
from cyborg_quickstart import nova
from cyborg_quickstart import placement
from cyborg_quickstart import quickstart

#: The compute hosts; each is an agent's host and a compute node's name.
HOSTS = (bench.HOST, bench.HOST + '-2')
ACCELERATORS_PER_HOST = 16
#: Where 17.0.0's API is mounted.
PREFIX = '/accelerator'


# --- RabbitMQ ---------------------------------------------------------------

def rabbitmqctl(*args):
    # The broker's own command, to make and drop our virtual hosts.
    return subprocess.run(  # nosec B603 B607
        ('rabbitmqctl', '-q') + args, capture_output=True,
        timeout=60).returncode


def fresh_vhost(base_url, name):
    """An empty virtual host ``name``: its transport URL."""
    rabbitmqctl('delete_vhost', name)
    if rabbitmqctl('add_vhost', name) or rabbitmqctl(
            'set_permissions', '-p', name, 'guest', '.*', '.*', '.*'):
        raise SystemExit('cannot make RabbitMQ virtual host %s' % name)
    return urllib.parse.urlsplit(base_url)._replace(
        path='/' + name).geturl()


# --- the services -----------------------------------------------------------

def _agent_conf(state, host, ours):
    """The config file that makes an agent serve ``host``."""
    path = os.path.join(state, 'agent-%s.conf' % host)
    lines = ['[DEFAULT]', 'host = %s' % host]
    if ours:
        lines += ['[agent]', 'resource_provider_name = %s' % host]
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    return path


class Existing(bench.Existing):
    """17.0.0 as compare.py runs it, an agent per host, the real Nova.

    Its ``[nova]`` is the ``nova`` port: the real nova-api here. Placement
    and Nova are the :class:`Cloud`'s, so nothing registers the hosts. Its
    API is served under ``/accelerator``, as devstack's uwsgi mounts it:
    its version documents link to ``<host>/accelerator/v2`` whatever the
    mount, and Nova's SDK adapter follows that link. Nova's requests get
    the roles Keystone would give them (tools/bench/legacy_nova_wsgi.py).
    """

    def __init__(self, state, ports, rabbit, venv):
        super().__init__(state, ports, rabbit, venv)
        self.api = 'http://127.0.0.1:%d%s/v2' % (ports['api'], PREFIX)

    def start(self):
        conf = self.prepare()
        self.create_schema(conf)
        bin_ = os.path.join(self.venv, 'bin')
        self.processes.start('conductor',
                             [os.path.join(bin_, 'cyborg-conductor')] + conf)
        for host in HOSTS:
            self.processes.start('agent-' + host, [
                os.path.join(bin_, 'cyborg-agent')] + conf + [
                '--config-file', _agent_conf(self.state, host, False)])
        self.processes.start('api', [
            os.path.join(bin_, 'gunicorn')] + bench.GUNICORN + [
            '--bind', '127.0.0.1:%d' % self.ports['api'],
            '--chdir', self.state, '--pythonpath', bench.HERE,
            'legacy_nova_wsgi:application'],
            env=dict(os.environ, CYBORG_BENCH_CONFIG=conf[1],
                     SCRIPT_NAME=PREFIX))


class Ours:
    """Cyborg configured as the quickstart's ``--rabbit`` shape.

    The quickstart's config file, then one that enables the fake driver
    only, then one per agent naming its host.
    """

    name = 'ours'

    def __init__(self, state, ports, rabbit):
        self.state = state
        self.rabbit = rabbit
        self.api = 'http://127.0.0.1:%d/v2' % ports['api']
        self.quickstart = quickstart.Quickstart(state, ports)
        self.processes = bench._Processes(os.path.join(state, 'logs'))

    def start(self):
        shutil.rmtree(self.state, ignore_errors=True)
        os.makedirs(self.state)
        self.quickstart.prepare(self.rabbit)
        fake = os.path.join(self.state, 'fake-driver.conf')
        with open(fake, 'w') as f:
            f.write('[agent]\nenabled_drivers = fake_driver\n')
        conf = ['--config-file', self.quickstart.conf, '--config-file', fake]

        def console(module):
            return [sys.executable, '-c', 'import sys; from cyborg.cmd.%s '
                    'import main; sys.exit(main())' % module] + conf
        # This tree's programs, as the quickstart runs them.
        subprocess.run(console('dbsync') + ['upgrade'],  # nosec B603
                       check=True, capture_output=True, cwd=bench.ROOT)
        self.processes.start('conductor', console('conductor'))
        for host in HOSTS:
            self.processes.start('agent-' + host, console('agent') + [
                '--config-file', _agent_conf(self.state, host, True)])
        self.processes.start('api', console('api'))

    def alive(self):
        self.processes.alive()

    def stop(self):
        self.processes.stop()


class Cloud:
    """Placement, the image service and Nova with two compute hosts."""

    def __init__(self, state, ports, nova_rabbit, nova_venv, cyborg_url):
        self.state = state
        self.placement_url = 'http://127.0.0.1:%d' % ports['placement']
        self.glance = glance.Glance(os.path.join(state, 'glance'),
                                    ports['glance'], quickstart.GLANCE_VENV)
        self.ports = ports
        self.processes = bench._Processes(os.path.join(state, 'logs'))
        self.nova = nova.NovaServices(
            os.path.join(state, 'nova'), nova_venv,
            {'api': ports['nova'], 'neutron': ports['neutron']},
            self.placement_url, cyborg_url, self.glance.url, nova_rabbit,
            HOSTS[0])
        self.nova_processes = bench._Processes(self.nova.path('logs'))
        self.image = None

    def alive(self):
        self.processes.alive()
        self.nova_processes.alive()

    def start(self):
        self.glance.start()
        self.image = glance.upload(self.glance.client(), b'a bench disk',
                                   'bench-disk')
        self.processes.start('placement', [
            sys.executable, '-m', 'cyborg_quickstart.placement', '--port',
            str(self.ports['placement']), '--db', 'sqlite:///%s' %
            os.path.join(self.state, 'placement.sqlite')])
        os.makedirs(self.nova.state, exist_ok=True)
        self.nova.setup()
        bench._wait_placement(self.placement_url, alive=self.alive)
        for name, argv in self.nova.commands():
            self.nova_processes.start(name, argv, env=self.nova.env())
        # The second host: its own name, node and state (the node's id).
        second = self.nova.path('compute-2')
        os.makedirs(second, exist_ok=True)
        conf = os.path.join(second, 'nova.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nhost = %s\nstate_path = %s\n' % (
                HOSTS[1], second))
        self.nova_processes.start('nova-compute-2', [
            os.path.join(self.nova.venv, 'bin', 'python'),
            self.nova.path('nova_runner.py'), 'compute', '--config-file',
            self.nova.conf, '--config-file', conf], env=dict(
                self.nova.env(), CYBORG_NOVA_NODENAME=HOSTS[1],
                CYBORG_NOVA_RECORDS=os.path.join(second, 'records.jsonl')))
        compute = self.nova.adapter()

        def both():
            try:
                return len(compute.get('/os-hypervisors').json().get(
                    'hypervisors', [])) == len(HOSTS)
            except ks_exceptions.ConnectionError:
                return False  # not listening yet
        bench.wait('both compute nodes in Nova', both, 300, self.alive)
        # Both mapped to cell1 (listed), and reporting.
        self.nova.wait_for_compute()

    def stop(self):
        self.nova_processes.stop()
        self.processes.stop()
        self.glance.stop()


def wait_devices(placement_url, alive, timeout=300):
    """Wait for a card under each compute node with all its accelerators."""
    adapter = placement.adapter(placement_url, '1.18')

    def cards():
        found = 0
        for rp in adapter.get('/resource_providers', params={
                'required': 'CUSTOM_FAKE_DEVICE'}).json().get(
                    'resource_providers', []):
            inventory = adapter.get('/resource_providers/%s/inventories' %
                                    rp['uuid']).json()['inventories']
            if (rp['parent_provider_uuid'] and inventory.get(
                    'FPGA', {}).get('total') == ACCELERATORS_PER_HOST):
                found += 1
        return found == len(HOSTS)
    bench.wait('the fake cards of %s in Placement' % ', '.join(HOSTS),
               cards, timeout, alive)
