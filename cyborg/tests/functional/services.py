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
"""Cyborg's services as processes over RabbitMQ, for functional tests.

A test case gets a RabbitMQ virtual host of its own, the real Placement
(served by the test process), a Nova event receiver, and starts
``cyborg-conductor``, ``cyborg-agent`` (on simulated sysfs trees) and
``cyborg-api`` processes with a configuration file each.
"""

import os
import time
import urllib.parse
import uuid

import fixtures
from oslo_messaging import conffixture
import requests

from cyborg.common import rpc
from cyborg.demo import nova_events
from cyborg.demo import sysfs
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional

CARDS = ('0000:5e:00.0', '0000:86:00.0')
PROFILE = {'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required'}


class ServicesTestCase(base.TestCase):
    """Starts Cyborg's processes; the database comes from a subclass."""

    def setUp(self):
        super().setUp()
        if functional.rabbitmqctl('status'):
            self.skipTest('needs rabbitmqctl to give the test a virtual '
                          'host')
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self._vhost()
        self.placement = self.useFixture(cyborg_fixtures.Placement())
        self.nova = nova_events.EventReceiver().start()
        self.addCleanup(lambda: self.nova.stop())
        self.rp = self.placement.adapter()
        self.trees = {}
        self.compute_rps = {}

    def _vhost(self):
        self.vhost = 'cyborg-test-%s' % uuid.uuid4().hex[:12]
        if (functional.rabbitmqctl('add_vhost', self.vhost) or
                functional.rabbitmqctl('set_permissions', '-p', self.vhost,
                                       'guest', '.*', '.*', '.*')):
            self.skipTest('cannot make a RabbitMQ virtual host')
        self.addCleanup(functional.rabbitmqctl, 'delete_vhost', self.vhost)
        base_url = urllib.parse.urlsplit(functional.RABBIT_URL)
        self.rabbit = base_url._replace(path='/' + self.vhost).geturl()
        self.useFixture(conffixture.ConfFixture(self.conf.conf))
        self.conf.config(transport_url=self.rabbit)
        self.useFixture(fixtures.MonkeyPatch(
            'cyborg.common.rpc.TRANSPORT', None))
        rpc.init(self.conf.conf)
        self.addCleanup(rpc.cleanup)

    def _write_conf(self, name, sections):
        path = os.path.join(self.tmp, name + '.conf')
        with open(path, 'w') as f:
            for section, options in sections.items():
                f.write('[%s]\n' % section)
                for key, value in options.items():
                    f.write('%s = %s\n' % (key, value))
        return path

    def _start(self, command, name, sections):
        return cyborg_fixtures.service_process(
            self, command, self._write_conf(name, sections),
            os.path.join(self.tmp, name + '.log'))

    def _conductor_conf(self, name, db_url):
        return {
            'DEFAULT': {'host': name, 'transport_url': self.rabbit,
                        'debug': 'true', 'periodic_interval': 1,
                        'periodic_fuzzy_delay': 0, 'bind_timeout': 60},
            'database': {'connection': db_url},
            'conductor': {'workers': 1, 'reconcile_interval': 1},
            'placement': self.placement.conf,
            'nova': {'auth_type': 'admin_token', 'token': 'admin',
                     'endpoint': self.nova.url},
        }

    def _conductor(self, name, db_url):
        return self._start('cyborg-conductor', name,
                           self._conductor_conf(name, db_url))

    def _agent_conf(self, host, root):
        return {
            'DEFAULT': {'host': host, 'transport_url': self.rabbit,
                        'debug': 'true'},
            'agent': {'enabled_drivers': 'intel_fpga_driver',
                      'sysfs_root': root, 'report_interval': 1,
                      'placement_wait_interval': 1,
                      'resource_provider_name': host,
                      'enable_hotplug_monitor': 'false'},
        }

    def _agent(self, host, cards=CARDS, vfs=2):
        """A compute node in Placement and the agent of its host."""
        response = self.rp.post('/resource_providers',
                                json={'name': host, 'uuid': str(uuid.uuid4())})
        self.assertEqual(200, response.status_code, response.text)
        self.compute_rps[host] = response.json()['uuid']
        root = os.path.join(self.tmp, host)
        self.trees[host] = sysfs.build(root, [
            ('intel_fpga', card, dict(vfs=vfs)) for card in cards])
        return self._start('cyborg-agent', host,
                           self._agent_conf(host, root))

    def _api_conf(self, db_url, port):
        return {
            'DEFAULT': {'transport_url': self.rabbit, 'debug': 'true',
                        'rpc_response_timeout': 30},
            'database': {'connection': db_url},
            'api': {'auth_strategy': 'noauth', 'host_ip': '127.0.0.1',
                    'port': port, 'api_workers': 2},
        }

    def _api(self, db_url, name='api', port=None):
        """``cyborg-api`` on a port of its own (or ``port``), serving.

        ``self.url`` reaches it.
        """
        port = port or functional.free_ports(1)[0]
        self.url = 'http://127.0.0.1:%d/v2' % port
        process = self._start('cyborg-api', name,
                              self._api_conf(db_url, port))
        functional.wait('cyborg-api serving', self._serving, timeout=60)
        return process

    def _serving(self):
        try:
            return requests.get(self.url, timeout=5).status_code == 200
        except requests.ConnectionError:
            return False

    def request(self, method, path, body=None, timeout=30):
        """An API request as an administrator; the requests response."""
        return requests.request(
            method, self.url + path, json=body, timeout=timeout,
            headers={'OpenStack-API-Version': 'accelerator latest'})

    def _children(self, host):
        response = self.rp.get('/resource_providers', params={
            'in_tree': self.compute_rps[host],
            'required': 'OWNER_CYBORG'})
        return {p['name']: p['uuid']
                for p in response.json()['resource_providers']}

    def _all_in_placement(self, cards=len(CARDS)):
        return all(len(self._children(host)) == cards
                   for host in self.compute_rps)

    # --- Nova's side of a boot, through the API -----------------------------

    def create_arq(self, profile):
        """One ARQ of ``profile`` (a one-unit profile); its uuid."""
        response = self.request('POST', '/accelerator_requests',
                                {'device_profile_name': profile})
        self.assertEqual(201, response.status_code, response.text)
        (arq,) = response.json()['arqs']
        return arq['uuid']

    @staticmethod
    def bind_patch(arq_uuid, host, rp_uuid, instance_uuid):
        return {arq_uuid: [
            {'op': 'add', 'path': '/hostname', 'value': host},
            {'op': 'add', 'path': '/device_rp_uuid', 'value': rp_uuid},
            {'op': 'add', 'path': '/instance_uuid', 'value': instance_uuid}]}

    def arq(self, arq_uuid):
        response = self.request('GET', '/accelerator_requests/' + arq_uuid)
        self.assertEqual(200, response.status_code, response.text)
        return response.json()

    def wait_resolved(self, arq_uuid, timeout=60):
        """Poll the ARQ, as Nova would without its event, until resolved."""
        deadline = time.monotonic() + timeout
        while True:
            arq = self.arq(arq_uuid)
            if arq['state'] not in ('Initial', 'BindStarted'):
                return arq
            if time.monotonic() > deadline:
                self.fail('ARQ %s still %s' % (arq_uuid, arq['state']))
            time.sleep(0.05)

    def bind(self, arq_uuid, host, rp_uuid, instance_uuid=None):
        """Bind and wait until Bound; (instance uuid, seconds it took)."""
        instance_uuid = instance_uuid or str(uuid.uuid4())
        start = time.monotonic()
        response = self.request('PATCH', '/accelerator_requests',
                                self.bind_patch(arq_uuid, host, rp_uuid,
                                                instance_uuid))
        self.assertEqual(202, response.status_code, response.text)
        arq = self.wait_resolved(arq_uuid)
        took = time.monotonic() - start
        self.assertEqual('Bound', arq['state'], arq)
        return instance_uuid, took
