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
"""Agents report on their host's topic, and only for their host.

The conductor serves on fake:// in this process with the real Placement;
agents are resource trackers of simulated hosts. The same checks run on
RabbitMQ with per-host broker users in
``functional/test_host_topics_rabbit.py``.
"""

import fixtures
import oslo_messaging as messaging

from cyborg.agent import resource_tracker
from cyborg.common import rpc
from cyborg.conductor import agent_topics
from cyborg.conductor import rpcapi
from cyborg.drivers import base as drivers_base
from cyborg import exception
from cyborg.objects import base as objects_base
from cyborg.objects import device as device_obj
from cyborg.objects import device_profile
from cyborg.tests import base
from cyborg.tests import openstack_fixtures
from cyborg.tests import sysfs_tree

GROUP = {'resources:FPGA': '1'}


def host_topic(host):
    """A raw client of ``host``'s topic, as a rogue agent would use it."""
    return rpc.get_client(
        messaging.Target(topic=rpcapi.AGENT_TOPIC, version='1.4'),
        objects_base.CyborgObjectSerializer()).prepare(server=host)


class TestAgentTopics(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(openstack_fixtures.Placement())
        self.rp = self.placement.adapter()
        self.hosts = [self.placement.hostname + suffix
                      for suffix in ('-a', '-b')]
        for host in self.hosts:
            self._compute_node(host)
        self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('intel_fpga', '0000:5e:00.0', dict(vfs=1))]))
        self.topics = agent_topics.AgentTopics(self.conductor.manager)
        self.addCleanup(self.topics.stop)
        self.topics.refresh(self.admin_context)
        self.log = self.useFixture(fixtures.FakeLogger())

    def _compute_node(self, name):
        response = self.rp.post('/resource_providers', json={'name': name})
        self.assertEqual(200, response.status_code, response.text)

    def _tracker(self, host, api=None):
        return resource_tracker.ResourceTracker(
            host, drivers_base.load(['intel_fpga_driver']),
            api or rpcapi.AgentConductorAPI())

    def _devices(self, host):
        return device_obj.Device.list(self.admin_context,
                                      filters={'hostname': host})

    def test_host_reports_on_its_topic(self):
        host_a = self.hosts[0]
        api = rpcapi.AgentConductorAPI()
        self.assertTrue(api.compute_node_rp(self.admin_context, host_a,
                                            host_a))
        self.assertTrue(self._tracker(host_a, api).report())
        self.assertEqual(1, len(self._devices(host_a)))

    def test_report_naming_another_host_is_refused(self):
        host_a, host_b = self.hosts
        report = self._tracker(host_b).discover()
        error = self.assertRaises(
            exception.ReportForOtherHost, host_topic(host_a).call,
            self.admin_context, 'report_host', host_report=report)
        self.assertEqual('The agent of host %s may not report_host for '
                         'host %s.' % (host_a, host_b),
                         str(error).splitlines()[0])
        self.assertIn('Refused report_host for host %s sent on the topic of '
                      'host %s' % (host_b, host_a), self.log.output)
        self.assertEqual([], self._devices(host_b))
        # Nor may it point host B at a compute node.
        for names in ((host_b, host_b), (host_a, host_b), (host_b, host_a)):
            self.assertRaises(
                exception.ReportForOtherHost, host_topic(host_a).call,
                self.admin_context, 'compute_node_rp', hostname=names[0],
                rp_name=names[1])

    def test_api_calls_are_not_served_on_agent_topics(self):
        profile = self.api.device_profile_create(
            self.admin_context, device_profile.DeviceProfile(
                self.admin_context, name='dp', groups=[GROUP]))
        for method, kwargs in (
                ('device_profiles_delete', dict(uuids=[profile.uuid],
                                                names=[])),
                ('arq_delete', dict(uuids=None, instance_uuid=None)),
                ('deployable_program', dict(deployable_uuid='x',
                                            image_uuid='y'))):
            # As across RabbitMQ: oslo.messaging's NoSuchMethod is no
            # allowed remote exception.
            error = self.assertRaises(
                messaging.RemoteError, host_topic(self.hosts[0]).call,
                self.admin_context, method, **kwargs)
            self.assertEqual('NoSuchMethod', error.exc_type)
        self.assertEqual(profile.uuid, device_profile.DeviceProfile.
                         get_by_name(self.admin_context, 'dp').uuid)

    def test_new_host_is_served_after_the_next_pass(self):
        name = self.placement.hostname + '-new'
        api = rpcapi.AgentConductorAPI()
        # No conductor serves the name yet: the agent hears it at once and
        # tries its next name, or asks again later.
        self.assertRaises(exception.ResourceProviderNotFound,
                          api.compute_node_rp, self.admin_context, name, name)
        self._compute_node(name)
        self.topics.refresh(self.admin_context)
        self.assertIn(name, self.topics.hosts)
        self.assertTrue(api.compute_node_rp(self.admin_context, name, name))

    def test_new_compute_node_is_served_when_its_agent_asks(self):
        name = self.placement.hostname + '-newer'
        self._compute_node(name)
        api = rpcapi.AgentConductorAPI()
        # Unserved, the agent asks on the shared topic, where the conductor
        # finds the compute node in Placement and serves its topic at once,
        # so the agent's next try, after [agent] placement_wait_interval,
        # is answered rather than one after the conductor's next pass.
        self.assertRaises(exception.ResourceProviderNotFound,
                          api.compute_node_rp, self.admin_context, name, name)
        self.assertIn(name, self.conductor.agent_topics.hosts)
        self.assertTrue(api.compute_node_rp(self.admin_context, name, name))
        # A name Placement does not know is served no sooner.
        unknown = self.placement.hostname + '-unknown'
        self.assertRaises(exception.ResourceProviderNotFound,
                          api.compute_node_rp, self.admin_context, unknown,
                          unknown)
        self.assertNotIn(unknown, self.conductor.agent_topics.hosts)

    def test_capped_agent_uses_the_shared_topic_until_it_is_closed(self):
        host_a = self.hosts[0]
        self.conf.config(conductor='1.3', group='upgrade_levels')
        self.topics.stop()
        api = rpcapi.AgentConductorAPI()
        self.assertTrue(api.compute_node_rp(self.admin_context, host_a,
                                            host_a))
        self.assertTrue(self._tracker(host_a, api).report())
        self.conf.config(serve_agents_on_shared_topic=False,
                         group='conductor')
        error = self.assertRaises(
            exception.SharedTopicClosed, api.compute_node_rp,
            self.admin_context, host_a, host_a)
        self.assertIn('upgrade the agent of host %s' % host_a, str(error))
        self.assertRaises(exception.SharedTopicClosed,
                          self._tracker(host_a, api).report, force=True)
