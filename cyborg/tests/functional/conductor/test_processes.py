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
"""Two conductors and three agents as processes, over RabbitMQ.

Real parts all through: the conductors share a PostgreSQL database and
the real Placement (served by this test process), the agents read
simulated sysfs trees, and Nova is an event receiver in this process.
The test plays Nova: it asks Placement for allocation candidates, claims
them, creates and binds ARQs through the conductors and waits for the
``accelerator-request-bound`` events.
"""

import os
import signal
import urllib.parse
import uuid

import fixtures
from oslo_db.sqlalchemy import test_fixtures
from oslo_messaging import conffixture
import testtools

from cyborg.common import rpc
from cyborg.conductor import rpcapi
from cyborg import context
from cyborg.db import api as db_api
from cyborg.demo import nova_events
from cyborg.demo import sysfs
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device_profile
from cyborg import states
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional
from cyborg.tests.functional.db import test_concurrency

HOSTS = 3
CARDS = ('0000:5e:00.0', '0000:86:00.0')
VFS = 2
PROFILE = {'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required'}


@testtools.skipIf(functional.rabbitmqctl('status'),
                  'needs rabbitmqctl to give the test a virtual host')
class TestConductorsAndAgents(test_fixtures.OpportunisticDBTestMixin,
                              base.TestCase):

    FIXTURE = test_concurrency.PostgreSQLFixture

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.ctx = context.get_admin_context()
        self._vhost()
        self.placement = self.useFixture(cyborg_fixtures.Placement())
        self.nova = nova_events.EventReceiver().start()
        self.addCleanup(self.nova.stop)
        self.rp = self.placement.adapter()
        self.db_url = db_api.get_engine().url.render_as_string(
            hide_password=False)
        self.conductors = [self._conductor(i) for i in range(2)]
        self.trees = {}
        self.compute_rps = {}
        for i in range(HOSTS):
            self._agent('%s-%d' % (self.placement.hostname, i))
        self.api = rpcapi.ConductorAPI()

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

    def _conductor(self, index):
        name = 'conductor-%d' % index
        path = self._write_conf(name, {
            'DEFAULT': {'host': name, 'transport_url': self.rabbit,
                        'debug': 'true', 'periodic_interval': 1,
                        'periodic_fuzzy_delay': 0, 'bind_timeout': 60},
            'database': {'connection': self.db_url},
            'conductor': {'workers': 1, 'reconcile_interval': 1},
            'placement': self.placement.conf,
            'nova': {'auth_type': 'admin_token', 'token': 'admin',
                     'endpoint': self.nova.url},
        })
        return cyborg_fixtures.service_process(
            self, 'cyborg-conductor', path,
            os.path.join(self.tmp, name + '.log'))

    def _agent(self, host):
        response = self.rp.post('/resource_providers',
                                json={'name': host, 'uuid': str(uuid.uuid4())})
        self.assertEqual(200, response.status_code, response.text)
        self.compute_rps[host] = response.json()['uuid']
        root = os.path.join(self.tmp, host)
        self.trees[host] = sysfs.build(root, [
            ('intel_fpga', card, dict(vfs=VFS)) for card in CARDS])
        path = self._write_conf(host, {
            'DEFAULT': {'host': host, 'transport_url': self.rabbit,
                        'debug': 'true'},
            'agent': {'enabled_drivers': 'intel_fpga_driver',
                      'sysfs_root': root, 'report_interval': 1,
                      'placement_wait_interval': 1,
                      'resource_provider_name': host,
                      'enable_hotplug_monitor': 'false'},
        })
        return cyborg_fixtures.service_process(
            self, 'cyborg-agent', path, os.path.join(self.tmp, host + '.log'))

    def _children(self, host):
        response = self.rp.get('/resource_providers', params={
            'in_tree': self.compute_rps[host],
            'required': 'OWNER_CYBORG'})
        return {p['name']: p['uuid']
                for p in response.json()['resource_providers']}

    def _all_in_placement(self):
        return all(len(self._children(host)) == len(CARDS)
                   for host in self.compute_rps)

    def _boot(self, host):
        """Nova's side of a boot on ``host``; the ARQ once bound."""
        instance = str(uuid.uuid4())
        candidates = self.rp.get('/allocation_candidates', params={
            'resources1': 'FPGA:1', 'required1': 'CUSTOM_FPGA_INTEL',
            'in_tree1': self.compute_rps[host]}).json()
        allocation = candidates['allocation_requests'][0]['allocations']
        (rp_uuid,) = allocation
        response = self.rp.put('/allocations/%s' % instance, json={
            'allocations': allocation, 'project_id': 'p', 'user_id': 'u',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})
        self.assertEqual(204, response.status_code, response.text)
        (arq,) = self.api.arq_create(self.ctx, 'fpga', 'p')
        self.api.arq_apply_patch(self.ctx, {arq.uuid: {
            'hostname': host, 'device_rp_uuid': rp_uuid,
            'instance_uuid': instance}})
        (event,) = self.nova.wait_for(instance, 1, timeout=60)
        self.assertEqual({'name': 'accelerator-request-bound',
                          'server_uuid': instance, 'tag': arq.uuid,
                          'status': 'completed'}, event)
        arq = arq_obj.AcceleratorRequest.get_by_uuid(self.ctx, arq.uuid)
        self.assertEqual(states.BOUND, arq.state)
        return arq, rp_uuid

    def _assert_handle_of(self, arq, rp_uuid):
        """The ARQ holds a handle of the deployable behind ``rp_uuid``."""
        handle = handle_obj.AttachHandle.get_by_id(self.ctx,
                                                   arq.attach_handle_id)
        (deployable,) = deployable_obj.Deployable.list(
            self.ctx, filters={'rp_uuid': rp_uuid})
        self.assertEqual(deployable.id, handle.deployable_id)
        self.assertEqual(states.ATTACH_PCI, handle.attach_type)

    def test_devices_reach_placement_and_instances_boot(self):
        functional.wait('every host in Placement', self._all_in_placement)
        self.api.device_profile_create(self.ctx, device_profile.DeviceProfile(
            self.ctx, name='fpga', groups=[PROFILE]))
        host = sorted(self.compute_rps)[0]
        self._assert_handle_of(*self._boot(host))

        # The broker drops every connection, as when it restarts: the
        # services reconnect and carry on.
        self.assertEqual(0, functional.rabbitmqctl(
            'close_all_connections', '-p', self.vhost, 'test restart'))
        self._boot(host)

        # A card added to a host reaches Placement through the next report.
        self.trees[host].intel_fpga('0000:af:00.0', vfs=VFS)
        functional.wait('the new card', lambda: '%s_0000:af:00.0' % host in
                        self._children(host))

        # One conductor dies; the other serves alone.
        self.conductors[0].stop(signal.SIGKILL)
        self._boot(sorted(self.compute_rps)[1])
