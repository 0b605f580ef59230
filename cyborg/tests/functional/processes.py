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
"""Conductors and agents as processes over RabbitMQ, beside real parts.

:class:`ServicesTestCase` gives a test the real Placement (served by the
test process), a PostgreSQL database for the conductors, a receiver of
Nova's events, and starts ``cyborg-conductor`` and ``cyborg-agent``
processes on simulated hosts. The test plays Nova: it claims Placement
allocations and creates and binds ARQs through the conductors.
"""

import os
import urllib.parse
import uuid

import fixtures
from oslo_db.sqlalchemy import test_fixtures
from oslo_messaging import conffixture

from cyborg.common import rpc
from cyborg.conductor import rpcapi
from cyborg import context
from cyborg.db import api as db_api
from cyborg.demo import nova_events
from cyborg.demo import privsep as demo_privsep
from cyborg.demo import sysfs
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import deployable as deployable_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import functional
from cyborg.tests.functional.db import test_concurrency

#: The cards of every simulated host, each with VFS virtual functions.
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

    ``setUp`` starts no service: tests call :meth:`use_rabbit` (or
    :meth:`use_vhost`), then :meth:`start_conductor` and
    :meth:`start_agent`.
    """

    FIXTURE = test_concurrency.PostgreSQLFixture

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.ctx = context.get_admin_context()
        self.placement = self.useFixture(cyborg_fixtures.Placement())
        self.nova = nova_events.EventReceiver().start()
        self.addCleanup(self.nova.stop)
        self.rp = self.placement.adapter()
        self.db_url = db_api.get_engine().url.render_as_string(
            hide_password=False)
        self.trees = {}
        self.compute_rps = {}
        self.nodes = {}
        self.rabbit = None
        self.api = None

    # --- messaging ---------------------------------------------------------

    def use_vhost(self):
        """A virtual host of its own on the shared RabbitMQ, for the test."""
        vhost = 'cyborg-test-%s' % uuid.uuid4().hex[:12]
        if (functional.rabbitmqctl('add_vhost', vhost) or
                functional.rabbitmqctl('set_permissions', '-p', vhost,
                                       'guest', '.*', '.*', '.*')):
            self.skipTest('cannot make a RabbitMQ virtual host')
        self.addCleanup(functional.rabbitmqctl, 'delete_vhost', vhost)
        base_url = urllib.parse.urlsplit(functional.RABBIT_URL)
        self.use_rabbit(base_url._replace(path='/' + vhost).geturl())
        return vhost

    def use_rabbit(self, url):
        """This process and the services started later use ``url``."""
        self.rabbit = url
        self.useFixture(conffixture.ConfFixture(self.conf.conf))
        self.conf.config(transport_url=url)
        self.useFixture(fixtures.MonkeyPatch(
            'cyborg.common.rpc.TRANSPORT', None))
        rpc.init(self.conf.conf)
        self.addCleanup(rpc.cleanup)
        self.api = rpcapi.ConductorAPI()

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

    def conductor_sections(self, name):
        return {
            'DEFAULT': {'host': name, 'transport_url': self.rabbit,
                        'debug': 'true', 'periodic_interval': 1,
                        'periodic_fuzzy_delay': 0, 'bind_timeout': 60},
            'database': {'connection': self.db_url},
            'conductor': {'workers': 1, 'reconcile_interval': 1},
            'placement': self.placement.conf,
            'nova': {'auth_type': 'admin_token', 'token': 'admin',
                     'endpoint': self.nova.url},
        }

    def start_conductor(self, index, **sections):
        """Start ``conductor-<index>``; ``sections`` add options.

        :returns: its :class:`cyborg.tests.fixtures.ServiceProcess`.
        """
        name = 'conductor-%d' % index
        path = self.write_conf(name, merged(self.conductor_sections(name),
                                            sections))
        return cyborg_fixtures.service_process(
            self, 'cyborg-conductor', path,
            os.path.join(self.tmp, name + '.log'))

    def add_host(self, host, node=None):
        """A compute node in Placement and a simulated host's sysfs tree.

        :param node: the compute node's name, as Nova names it (``host``
            by default).
        """
        node = node or host
        response = self.rp.post('/resource_providers',
                                json={'name': node, 'uuid': str(uuid.uuid4())})
        self.assertEqual(200, response.status_code, response.text)
        self.compute_rps[host] = response.json()['uuid']
        self.nodes[host] = node
        self.trees[host] = sysfs.build(os.path.join(self.tmp, host), [
            ('intel_fpga', card, dict(vfs=VFS)) for card in CARDS])

    def start_agent(self, host, **sections):
        """Start the agent of ``host`` (see :meth:`add_host`).

        Its privileged daemons run without root; ``sections`` add options.
        A second start of one host appends to the same log.
        """
        if host not in self.trees:
            self.add_host(host)
        path = self.write_conf(host, merged({
            'DEFAULT': {'host': host, 'transport_url': self.rabbit,
                        'debug': 'true'},
            'agent': {'enabled_drivers': 'intel_fpga_driver',
                      'sysfs_root': self.trees[host].root,
                      'report_interval': 1,
                      'placement_wait_interval': 1,
                      'resource_provider_name': self.nodes[host],
                      'enable_hotplug_monitor': 'false'},
        }, sections), demo_privsep.config_lines(
            os.path.join(self.tmp, host + '.conf')))
        log_path = os.path.join(self.tmp, host + '.log')
        if os.path.exists(log_path):
            log_path = '%s.%s' % (log_path, uuid.uuid4().hex[:6])
        return cyborg_fixtures.service_process(self, 'cyborg-agent', path,
                                               log_path)

    # --- what Placement and the database hold -----------------------------

    def children(self, host):
        """{name: uuid} of Cyborg's providers under ``host``'s node."""
        response = self.rp.get('/resource_providers', params={
            'in_tree': self.compute_rps[host],
            'required': 'OWNER_CYBORG'})
        return {p['name']: p['uuid']
                for p in response.json()['resource_providers']}

    def all_in_placement(self):
        return all(len(self.children(host)) == len(CARDS)
                   for host in self.compute_rps)

    def wait_for_placement(self):
        functional.wait('every host in Placement', self.all_in_placement)

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

    def start_bind(self, host, rp_uuid, profile='fpga', api=None):
        """Allocate, create an ARQ of ``profile`` and start binding it.

        :param api: the conductor RPC client to call (default: any).
        :returns: (instance uuid, ARQ).
        """
        instance = self.allocate(rp_uuid)
        api = api or self.api
        (arq,) = api.arq_create(self.ctx, profile, 'p')
        api.arq_apply_patch(self.ctx, {arq.uuid: {
            'hostname': host, 'device_rp_uuid': rp_uuid,
            'instance_uuid': instance}})
        return instance, arq

    def event(self, instance, arq, status='completed', timeout=60):
        """Wait for the one event of the instance's one ARQ."""
        (event,) = self.nova.wait_for(instance, 1, timeout=timeout)
        self.assertEqual({'name': 'accelerator-request-bound',
                          'server_uuid': instance, 'tag': arq.uuid,
                          'status': status}, event)
        return event

    def boot(self, host, rp_uuid=None, profile='fpga'):
        """Nova's side of a boot on ``host``; the ARQ once bound."""
        rp_uuid = rp_uuid or self.candidate(host)
        instance, arq = self.start_bind(host, rp_uuid, profile)
        self.event(instance, arq)
        arq = arq_obj.AcceleratorRequest.get_by_uuid(self.ctx, arq.uuid)
        self.assertEqual(states.BOUND, arq.state)
        return arq, rp_uuid

    def assert_handle_of(self, arq, rp_uuid):
        """The ARQ holds a handle of the deployable behind ``rp_uuid``."""
        handle = handle_obj.AttachHandle.get_by_id(self.ctx,
                                                   arq.attach_handle_id)
        (deployable,) = deployable_obj.Deployable.list(
            self.ctx, filters={'rp_uuid': rp_uuid})
        self.assertEqual(deployable.id, handle.deployable_id)
        self.assertEqual(states.ATTACH_PCI, handle.attach_type)
        self.assertTrue(handle.in_use)
