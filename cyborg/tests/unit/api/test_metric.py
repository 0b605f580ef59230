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
"""/metrics on a seeded database: the collector's counts and histograms,
its protection, and the sample alert rules that use them."""

import datetime
import pathlib
import re

from oslo_utils import timeutils
from oslo_utils import uuidutils
from prometheus_client import parser
import webob
import yaml

from cyborg.api import metric
from cyborg.conductor import metric as conductor_metric
from cyborg.db import api as db_api
from cyborg.db import models
from cyborg.objects import host as host_obj
from cyborg.objects import metric as metric_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import fixtures

ALERTS = (pathlib.Path(__file__).resolve().parents[4] / 'etc' / 'cyborg' /
          'prometheus-alerts.yaml')
ADMIN = {'X-Roles': 'admin,member,reader', 'X-Project-Id': 'p'}


def samples(text):
    """{(sample name, frozenset of labels): value} of an exposition."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in parser.text_string_to_metric_families(text)
            for s in family.samples}


def families(text):
    return {f.name: f.type
            for f in parser.text_string_to_metric_families(text)}


def labels(**kw):
    return frozenset(kw.items())


class MetricTestCase(base.TestCase):
    USES_DB = True

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.Policy())
        self.conf.config(enabled=True, group='metrics')

    def _app(self):
        def inner(environ, start_response):
            start_response('204 No Content', [])
            return [b'']
        return metric.authenticated(inner, self.conf.conf)

    def scrape(self, headers=ADMIN, method='GET'):
        return webob.Request.blank(metric.PATH, headers=headers,
                                   method=method).get_response(self._app())


class TestCollector(MetricTestCase):

    def setUp(self):
        super().setUp()
        ctx = self.ctx = self.admin_context
        _, fpga, self.fpga_handles = db_utils.create_device_tree(
            ctx, 'host1', handles=2)
        gpu_device, gpu, _ = db_utils.create_device_tree(
            ctx, 'host1', handles=4, pci_address='0000:af:00.0',
            device_type='GPU')
        db_api.update(ctx, 'device', gpu_device.uuid, {
            'health': 'unhealthy', 'quarantined_at': timeutils.utcnow()})
        for deployable in (fpga, gpu):
            db_api.update(ctx, 'deployable', deployable.uuid,
                          {'rp_uuid': uuidutils.generate_uuid()})
        # Not in Placement: no capacity.
        db_utils.create_device_tree(ctx, 'host2', handles=3,
                                    status=states.DEVICE_MAINTAINING)
        profile = db_utils.create_profile(ctx)
        db_utils.create_arqs(ctx, profile, count=2)
        bound, = db_utils.create_arqs(
            ctx, profile, state=states.BIND_STARTED, hostname='host1',
            device_rp_uuid=uuidutils.generate_uuid(),
            instance_uuid=uuidutils.generate_uuid())
        db_utils.bind_arq(ctx, bound.uuid, fpga.id)
        host_obj.Host.set_compute_rp(ctx, 'host1', None)
        host_obj.Host.set_compute_rp(ctx, 'host2', None)
        host_obj.Host.set_reported(ctx, 'host1')
        now = timeutils.utcnow()
        with db_api.main_context_manager.writer.using(ctx):
            ctx.session.add_all(models.NovaEvent(
                instance_uuid=bound.instance_uuid, arq_uuid=bound.uuid,
                status='completed', next_try_at=now,
                created_at=now - datetime.timedelta(seconds=age))
                for age in (120, 5))

    def test_counts_split_by_labels(self):
        response = self.scrape()
        self.assertEqual(200, response.status_int)
        self.assertEqual('text/plain', response.content_type)
        got = samples(response.text)
        fpga1 = dict(host='host1', type='FPGA', health='unknown',
                     quarantined='false', status='enabled')
        gpu1 = dict(host='host1', type='GPU', health='unhealthy',
                    quarantined='true', status='enabled')
        fpga2 = dict(host='host2', type='FPGA', health='unknown',
                     quarantined='false', status='maintaining')
        self.assertEqual(
            {labels(**fpga1): 1, labels(**gpu1): 1, labels(**fpga2): 1},
            {k[1]: v for k, v in got.items() if k[0] == 'cyborg_devices'})
        self.assertEqual(
            {labels(**fpga1): 2, labels(**gpu1): 4, labels(**fpga2): 0},
            {k[1]: v for k, v in got.items()
             if k[0] == 'cyborg_accelerators'})
        self.assertEqual(
            {labels(host='host1', type='FPGA', state='in_use'): 1,
             labels(host='host1', type='FPGA', state='free'): 1,
             labels(host='host1', type='GPU', state='free'): 4,
             labels(host='host2', type='FPGA', state='free'): 3},
            {k[1]: v for k, v in got.items()
             if k[0] == 'cyborg_attach_handles'})
        arqs = {dict(k[1])['state']: v for k, v in got.items()
                if k[0] == 'cyborg_accelerator_requests'}
        self.assertEqual(dict.fromkeys(states.ALL_STATES, 0) | {
            states.INITIAL: 2, states.BOUND: 1}, arqs)
        # The bind recorded one too.
        self.assertEqual(3, got['cyborg_nova_events_pending', labels()])
        self.assertAlmostEqual(
            120, got['cyborg_nova_events_oldest_age_seconds', labels()],
            delta=10)
        ages = {dict(k[1])['host']: v for k, v in got.items()
                if k[0] == 'cyborg_host_report_age_seconds'}
        self.assertEqual(['host1'], list(ages))
        self.assertLess(ages['host1'], 10)

    def test_histograms_of_conductors(self):
        for seconds, result in ((0.3, states.BOUND), (0.04, states.BOUND),
                                (400, states.BIND_FAILED)):
            metric_obj.observe(self.ctx, metric_obj.BIND, seconds,
                               result=result)
        got = samples(self.scrape().text)
        name = 'cyborg_arq_bind_duration_seconds'
        bound = {dict(k[1])['le']: v for k, v in got.items()
                 if k[0] == name + '_bucket' and
                 ('result', states.BOUND) in k[1]}
        self.assertEqual((1, 1, 1, 2, 2), (
            bound['0.05'], bound['0.1'], bound['0.25'], bound['0.5'],
            bound['+Inf']))
        self.assertEqual(2, got[name + '_count', labels(result='Bound')])
        self.assertAlmostEqual(
            0.34, got[name + '_sum', labels(result='Bound')])
        failed = labels(result='BindFailed')
        self.assertEqual(1, got[name + '_count', failed])
        self.assertEqual(0, got[name + '_bucket', failed | {('le', '300.0')}])

    def test_conductors_write_nothing_while_disabled(self):
        self.conf.config(enabled=False, group='metrics')
        with conductor_metric.placement_sync(self.ctx):
            pass
        self.assertEqual([], metric_obj.histograms(self.ctx))
        self.conf.config(enabled=True, group='metrics')
        with conductor_metric.placement_sync(self.ctx) as sync:
            sync.failed = True
        with conductor_metric.placement_sync(self.ctx):
            pass
        self.assertEqual({'synced': 1, 'failed': 1}, {
            labels[metric_obj.RESULT]: buckets[-1][1]
            for histogram, labels, buckets, _sum
            in metric_obj.histograms(self.ctx)})

    def test_alert_rules_use_metrics_that_exist(self):
        metric_obj.observe(self.ctx, metric_obj.BIND, 1, result='Bound')
        exposed = families(self.scrape().text)
        rules = [rule for group in yaml.safe_load(ALERTS.read_text())[
            'groups'] for rule in group['rules']]
        self.assertGreater(len(rules), 3)
        for rule in rules:
            self.assertEqual({'alert', 'expr', 'for', 'labels',
                              'annotations'}, set(rule), rule)
            used = set(re.findall(r'cyborg_[a-z_]+', rule['expr']))
            self.assertTrue(used, rule['alert'])
            for name in used:
                family = re.sub(r'_(bucket|count|sum)$', '', name)
                self.assertIn(family, exposed, rule['alert'])
                if family != name:
                    self.assertEqual('histogram', exposed[family])


class TestProtection(MetricTestCase):

    def test_get_only(self):
        response = self.scrape(method='POST')
        self.assertEqual((405, ('GET', 'HEAD')),
                         (response.status_int, response.allow))

    def test_other_paths_pass_and_nothing_when_disabled(self):
        response = webob.Request.blank('/v2').get_response(self._app())
        self.assertEqual(204, response.status_int)
        self.conf.config(enabled=False, group='metrics')
        self.assertEqual(204, self.scrape().status_int)
