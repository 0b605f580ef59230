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
"""Cyborg's services as processes over RabbitMQ, beside real parts.

:class:`ServicesTestCase` gives a test the real Placement (served by the
test process), a database of the opportunistic fixtures (PostgreSQL
unless a test case names another ``FIXTURE``) and a receiver of Nova's
events; it starts ``cyborg-conductor``, ``cyborg-agent`` (on simulated
hosts) and ``cyborg-api`` processes with a configuration file each, on a
RabbitMQ virtual host of the test's own. The test plays Nova: it claims
Placement allocations and creates and binds ARQs through the conductors'
RPC API or through ``cyborg-api``.
"""

import os
import time
import urllib.parse
import uuid

import fixtures
from oslo_db.sqlalchemy import test_fixtures
from oslo_messaging import conffixture
import requests

from cyborg.common import rpc
from cyborg.conductor import rpcapi
from cyborg import context
from cyborg.db import api as db_api
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import deployable as deployable_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional
from cyborg.tests.functional.db import test_concurrency
from cyborg.tests import openstack_fixtures
from cyborg.tests import privsep_helper
from cyborg.tests import sysfs
from cyborg_quickstart import nova_events

#: The cards of a simulated host (by default), each with VFS virtual
#: functions.
CARDS = ('0000:5e:00.0', '0000:86:00.0')
VFS = 2
PROFILE = {'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required'}


def merged(base_sections, more):
    """Config sections ``base_sections`` with ``more``'s options added."""
    sections = {name: dict(options) for name, options in base_sections.items()}
    for name, options in more.items():
        sections.setdefault(name, {}).update(options)
    return sections


class ServicesTestCase(test_fixtures.OpportunisticDBTestMixin,
                       base.TestCase):
    """Placement, a database, Nova's event receiver; services on demand.

    ``setUp`` starts no service: tests call :meth:`use_vhost` (or
    :meth:`use_rabbit`), then :meth:`start_conductor`,
    :meth:`start_agent` and :meth:`start_api`. The services reach the
    database at ``self.db_url``, which a subclass may change before it
    starts them.
    """

    FIXTURE = test_concurrency.PostgreSQLFixture

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.ctx = context.get_admin_context()
        self.placement = self.useFixture(openstack_fixtures.Placement())
        # Restarted on its port in the fault tests: one of the tests' own.
        self.nova = nova_events.EventReceiver(
            port=functional.free_ports(1)[0]).start()
        # The receiver of the moment: a test may restart it.
        self.addCleanup(lambda: self.nova.stop())
        self.rp = self.placement.adapter()
        self.db_url = db_api.get_engine().url.render_as_string(
            hide_password=False)
        self.trees = {}
        self.cards = {}
        self.compute_rps = {}
        self.nodes = {}
        self.vhost = None
        self.rabbit = None
        self.rpc = None
        self.api_url = None

    # --- messaging ---------------------------------------------------------

    def use_vhost(self):
        """A virtual host of its own on the shared RabbitMQ, for the test."""
        vhost = 'cyborg-test-%s' % uuid.uuid4().hex[:12]
        if (functional.rabbitmqctl('add_vhost', vhost) or
                functional.rabbitmqctl('set_permissions', '-p', vhost,
                                       'guest', '.*', '.*', '.*')):
            self.skipTest('needs rabbitmqctl to give the test a virtual '
                          'host')
        self.addCleanup(functional.rabbitmqctl, 'delete_vhost', vhost)
        base_url = urllib.parse.urlsplit(functional.RABBIT_URL)
        self.use_rabbit(base_url._replace(path='/' + vhost).geturl())
        self.vhost = vhost
        return vhost

    def use_rabbit(self, url):
        """This process and the services started later use ``url``.

        ``self.rpc`` is a client of the conductors' RPC API.
        """
        self.rabbit = url
        self.useFixture(conffixture.ConfFixture(self.conf.conf))
        self.conf.config(transport_url=url)
        self.useFixture(fixtures.MonkeyPatch(
            'cyborg.common.rpc.TRANSPORT', None))
        rpc.init(self.conf.conf)
        self.addCleanup(rpc.cleanup)
        self.rpc = rpcapi.ConductorAPI()

    # --- services ----------------------------------------------------------

    def write_conf(self, name, sections, lines=()):
        """A config file ``name``.conf of ``sections`` and raw ``lines``."""
        path = os.path.join(self.tmp, name + '.conf')
        with open(path, 'w') as f:
            for section, options in sections.items():
                f.write('[%s]\n' % section)
                for key, value in options.items():
                    f.write('%s = %s\n' % (key, value))
            for line in lines:
                f.write(line + '\n')
        return path

    def start_service(self, command, name, sections, lines=()):
        """Start ``command`` with a config file ``name``.conf.

        Its log is ``name``.log, or ``name``.<n>.log when it starts again,
        so that the log of an earlier run is kept.

        :returns: its :class:`cyborg.tests.fixtures.ServiceProcess`.
        """
        log_path = os.path.join(self.tmp, name + '.log')
        again = 0
        while os.path.exists(log_path):
            again += 1
            log_path = os.path.join(self.tmp, '%s.%d.log' % (name, again))
        return cyborg_fixtures.service_process(
            self, command, self.write_conf(name, sections, lines), log_path)

    def start_conductor(self, index, **sections):
        """Start ``conductor-<index>``; ``sections`` add options."""
        name = 'conductor-%d' % index
        return self.start_service('cyborg-conductor', name, merged({
            'DEFAULT': {'host': name, 'transport_url': self.rabbit,
                        'debug': 'true', 'periodic_interval': 1,
                        'periodic_fuzzy_delay': 0, 'bind_timeout': 60},
            'database': {'connection': self.db_url},
            'conductor': {'workers': 1, 'reconcile_interval': 1},
            'placement': self.placement.conf,
            'nova': {'auth_type': 'admin_token', 'token': 'admin',
                     'endpoint': self.nova.url},
        }, sections))

    def host_names(self, count):
        """Names for ``count`` simulated hosts."""
        return ['%s-%d' % (self.placement.hostname, i) for i in range(count)]

    def add_host(self, host, node=None, cards=CARDS, vfs=VFS):
        """A compute node in Placement and a simulated host's sysfs tree.

        :param node: the compute node's name, as Nova names it (``host``
            by default).
        :param cards: the addresses of the host's Intel FPGA cards, each
            with ``vfs`` virtual functions.
        """
        node = node or host
        response = self.rp.post('/resource_providers',
                                json={'name': node, 'uuid': str(uuid.uuid4())})
        self.assertEqual(200, response.status_code, response.text)
        self.compute_rps[host] = response.json()['uuid']
        self.nodes[host] = node
        self.cards[host] = cards
        self.trees[host] = sysfs.build(os.path.join(self.tmp, host), [
            ('intel_fpga', card, dict(vfs=vfs)) for card in cards])

    def start_agent(self, host, **sections):
        """Start the agent of ``host`` (added by :meth:`add_host` if new).

        Its privileged daemons run without root; ``sections`` add options.
        """
        if host not in self.trees:
            self.add_host(host)
        return self.start_service('cyborg-agent', host, merged({
            'DEFAULT': {'host': host, 'transport_url': self.rabbit,
                        'debug': 'true',
                        'state_path': os.path.join(self.tmp, host)},
            'agent': {'enabled_drivers': 'intel_fpga_driver',
                      'sysfs_root': self.trees[host].root,
                      'report_interval': 1,
                      'placement_wait_interval': 1,
                      'resource_provider_name': self.nodes[host],
                      'enable_hotplug_monitor': 'false'},
        }, sections), privsep_helper.config_lines(
            os.path.join(self.tmp, host + '.conf')))

    def start_api(self, port=None):
        """``cyborg-api`` on a port of its own (or ``port``), serving.

        ``self.api_url`` reaches it.
        """
        port = port or functional.free_ports(1)[0]
        self.api_url = 'http://127.0.0.1:%d/v2' % port
        process = self.start_service('cyborg-api', 'api', {
            'DEFAULT': {'transport_url': self.rabbit, 'debug': 'true',
                        'rpc_response_timeout': 30},
            'database': {'connection': self.db_url},
            'api': {'auth_strategy': 'noauth', 'host_ip': '127.0.0.1',
                    'port': port, 'api_workers': 2},
        })
        functional.wait('cyborg-api serving', lambda: functional.serves(
            self.api_url, 200), timeout=60)
        return process

    def restart_nova(self):
        """Start Nova's event receiver again, on the port it had."""
        port = urllib.parse.urlsplit(self.nova.url).port
        self.nova = nova_events.EventReceiver(port=port).start()

    # --- what Placement and the database hold -----------------------------

    def children(self, host):
        """{name: uuid} of Cyborg's providers under ``host``'s node."""
        response = self.rp.get('/resource_providers', params={
            'in_tree': self.compute_rps[host],
            'required': 'OWNER_CYBORG'})
        return {p['name']: p['uuid']
                for p in response.json()['resource_providers']}

    def all_in_placement(self):
        """Every card each host was added with has its provider."""
        return all(len(self.children(host)) == len(self.cards[host])
                   for host in self.compute_rps)

    def wait_for_placement(self):
        functional.wait('every host in Placement', self.all_in_placement)

    def reload_arq(self, arq):
        """The ARQ as the database holds it now."""
        return arq_obj.AcceleratorRequest.get_by_uuid(self.ctx, arq.uuid)

    def assert_handle_of(self, arq, rp_uuid):
        """The ARQ holds a handle of the deployable behind ``rp_uuid``."""
        handle = handle_obj.AttachHandle.get_by_id(self.ctx,
                                                   arq.attach_handle_id)
        (deployable,) = deployable_obj.Deployable.list(
            self.ctx, filters={'rp_uuid': rp_uuid})
        self.assertEqual(deployable.id, handle.deployable_id)
        self.assertEqual(states.ATTACH_PCI, handle.attach_type)
        self.assertTrue(handle.in_use)

    # --- Nova's part -------------------------------------------------------

    def allocate(self, rp_uuid):
        """Claim one FPGA of ``rp_uuid`` for a new instance, as Nova does.

        :returns: the instance's uuid.
        """
        instance = str(uuid.uuid4())
        response = self.rp.put('/allocations/%s' % instance, json={
            'allocations': {rp_uuid: {'resources': {'FPGA': 1}}},
            'project_id': 'p', 'user_id': 'u',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})
        self.assertEqual(204, response.status_code, response.text)
        return instance

    def candidate(self, host):
        """The resource provider Placement offers for an FPGA of ``host``."""
        candidates = self.rp.get('/allocation_candidates', params={
            'resources1': 'FPGA:1', 'required1': 'CUSTOM_FPGA_INTEL',
            'in_tree1': self.compute_rps[host]}).json()
        allocation = candidates['allocation_requests'][0]['allocations']
        (rp_uuid,) = allocation
        return rp_uuid

    def event(self, instance, arq_uuid, status='completed', timeout=60):
        """Wait for the one event of the instance's one ARQ."""
        (event,) = self.nova.wait_for(instance, 1, timeout=timeout)
        self.assertEqual({'name': 'accelerator-request-bound',
                          'server_uuid': instance, 'tag': arq_uuid,
                          'status': status}, event)
        return event

    # --- ... through the conductors' RPC API ------------------------------

    def start_bind(self, host, rp_uuid, profile='fpga', rpc=None):
        """Allocate, create an ARQ of ``profile`` and start binding it.

        :param rpc: the conductor RPC client to call (default: any).
        :returns: (instance uuid, ARQ).
        """
        instance = self.allocate(rp_uuid)
        rpc = rpc or self.rpc
        (arq,) = rpc.arq_create(self.ctx, profile, 'p')
        rpc.arq_apply_patch(self.ctx, {arq.uuid: {
            'hostname': host, 'device_rp_uuid': rp_uuid,
            'instance_uuid': instance}})
        return instance, arq

    def boot(self, host, rp_uuid=None, profile='fpga'):
        """Nova's side of a boot on ``host``; the ARQ once bound."""
        rp_uuid = rp_uuid or self.candidate(host)
        instance, arq = self.start_bind(host, rp_uuid, profile)
        self.event(instance, arq.uuid)
        arq = self.reload_arq(arq)
        self.assertEqual(states.BOUND, arq.state)
        return arq, rp_uuid

    # --- ... through cyborg-api --------------------------------------------

    def request(self, method, path, body=None, timeout=30):
        """An API request as an administrator; the requests response."""
        return requests.request(
            method, self.api_url + path, json=body, timeout=timeout,
            headers={'OpenStack-API-Version': 'accelerator latest'})

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

    def show_arq(self, arq_uuid):
        response = self.request('GET', '/accelerator_requests/' + arq_uuid)
        self.assertEqual(200, response.status_code, response.text)
        return response.json()

    def wait_resolved(self, arq_uuid, timeout=60):
        """Poll the ARQ, as Nova would without its event, until resolved."""
        deadline = time.monotonic() + timeout
        while True:
            arq = self.show_arq(arq_uuid)
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
