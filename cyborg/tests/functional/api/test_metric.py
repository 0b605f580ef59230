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
"""/metrics scraped over HTTP while an agent reports and an ARQ binds.

The API is served on a loopback port; the conductor serves on fake://;
an agent's resource tracker reports a simulated host, whose providers
reach the real Placement; the ARQ is created and bound through the API,
and Nova's event receiver takes the bind's event. Scrapes are parsed by
prometheus_client's parser, as Prometheus reads them.
"""

from oslo_utils import uuidutils
from prometheus_client import parser
import requests

from cyborg.agent import resource_tracker
from cyborg.drivers import base as drivers_base
from cyborg.objects import deployable as deployable_obj
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import fixtures
from cyborg.tests import functional
from cyborg.tests import openstack_fixtures
from cyborg.tests import stand_ins
from cyborg.tests import sysfs_tree
from cyborg_quickstart import server as demo_server

CARD = '0000:5e:00.0'
ADMIN = {'X-Roles': 'admin,member,reader', 'X-Project-Id': 'p1'}
# Nova binds with its service token.
NOVA = dict(ADMIN, **{'X-Service-Roles': 'service'})
MEMBER = {'X-Roles': 'member,reader', 'X-Project-Id': 'p1'}


def _values(text):
    """{(sample name, frozenset of its labels): value}."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in parser.text_string_to_metric_families(text)
            for s in family.samples}


def _serve(test, app):
    """Serve ``app`` on a loopback port until the test ends; its URL."""
    server = demo_server.LoopbackServer(
        app, port=functional.free_ports(1)[0], threads=2).start()
    test.addCleanup(server.stop)
    return server.url


class TestMetrics(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.conf.config(enabled=True, group='metrics')
        self.placement = self.useFixture(openstack_fixtures.Placement())
        self.useFixture(stand_ins.StandInAgent())
        self.useFixture(openstack_fixtures.NovaEvents())
        self.host = self.placement.hostname
        self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('intel_fpga', CARD, dict(vfs=2))]))
        self.url = _serve(self, self.useFixture(fixtures.API()).app)

    def _request(self, method, path, headers=ADMIN, **kwargs):
        return requests.request(method, self.url + path, headers=headers,
                                timeout=30, **kwargs)

    def scrape(self):
        response = self._request('GET', '/metrics')
        self.assertEqual(200, response.status_code, response.text)
        self.assertTrue(response.headers['Content-Type'].startswith(
            'text/plain;'))
        return _values(response.text)

    def _report(self):
        compute = self.placement.adapter().post(
            '/resource_providers', json={'name': self.host})
        self.assertEqual(200, compute.status_code, compute.text)
        self.api.compute_node_rp(self.admin_context, hostname=self.host,
                                 rp_name=self.host)
        resource_tracker.ResourceTracker(
            self.host, drivers_base.load(['intel_fpga_driver']),
            self.api).report()

    def test_series_change_as_a_host_reports_and_an_arq_binds(self):
        before = self.scrape()
        self.assertEqual(0, before['cyborg_accelerator_requests', frozenset(
            {('state', 'Bound')})])
        self._report()
        reported = self.scrape()
        fpga = frozenset({('host', self.host), ('type', 'FPGA'),
                          ('health', 'healthy'), ('quarantined', 'false'),
                          ('status', 'enabled')})
        self.assertEqual(1, reported['cyborg_devices', fpga])
        self.assertEqual(2, reported['cyborg_accelerators', fpga])
        self.assertLess(reported['cyborg_host_report_age_seconds',
                                 frozenset({('host', self.host)})], 30)
        self.assertEqual(1, reported[
            'cyborg_placement_sync_duration_seconds_count',
            frozenset({('result', 'synced')})])

        profile = db_utils.create_profile(
            self.admin_context, groups=[{'resources:FPGA': '1'}])
        created = self._request('POST', '/v2/accelerator_requests',
                                json={'device_profile_name': profile.name})
        self.assertEqual(201, created.status_code, created.text)
        arq = created.json()['arqs'][0]['uuid']
        rp_uuid, = {d.rp_uuid for d in deployable_obj.Deployable.list(
            self.admin_context)}
        patch = {arq: [
            {'op': 'add', 'path': '/hostname', 'value': self.host},
            {'op': 'add', 'path': '/device_rp_uuid', 'value': rp_uuid},
            {'op': 'add', 'path': '/instance_uuid',
             'value': uuidutils.generate_uuid()}]}
        bound = self._request('PATCH', '/v2/accelerator_requests',
                              headers=NOVA, json=patch)
        self.assertEqual(202, bound.status_code, bound.text)

        after = self.scrape()
        handles = {s: after['cyborg_attach_handles', frozenset(
            {('host', self.host), ('type', 'FPGA'), ('state', s)})]
            for s in ('in_use', 'free')}
        self.assertEqual({'in_use': 1, 'free': 1}, handles)
        self.assertEqual(1, after['cyborg_accelerator_requests', frozenset(
            {('state', 'Bound')})])
        self.assertEqual(0, after['cyborg_accelerator_requests', frozenset(
            {('state', 'Initial')})])
        result = frozenset({('result', 'Bound')})
        self.assertEqual(1, after['cyborg_arq_bind_duration_seconds_count',
                                  result])
        self.assertGreater(after['cyborg_arq_bind_duration_seconds_sum',
                                 result], 0)
        # Nova took the bind's event.
        self.assertEqual(0, after['cyborg_nova_events_pending', frozenset()])


class TestAccess(base.ConductorTestCase):
    """Who gets /metrics, and only while it is enabled."""

    def _get(self, headers):
        url = _serve(self, self.useFixture(fixtures.API()).app)
        return requests.get(url + '/metrics', headers=headers, timeout=30)

    def test_not_found_while_disabled(self):
        self.assertEqual(404, self._get(ADMIN).status_code)

    def test_admins_only(self):
        self.conf.config(enabled=True, group='metrics')
        response = self._get(MEMBER)
        self.assertEqual(403, response.status_code)
        self.assertIn('cyborg:metrics:get', response.text)
