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
"""Compute hosts speak only for themselves, on the real RabbitMQ.

A ``cyborg-conductor`` process and ``cyborg-agent`` processes, each agent
with a broker user of its host's own, made with ``rabbitmqctl`` as the
security guide says. The test then plays a host whose credentials leaked:
it talks to the broker as host A's user.
"""

import urllib.parse
import uuid

import oslo_messaging as messaging

from cyborg.agent import rpcapi as agent_rpcapi
from cyborg.common import rpc
from cyborg.conductor import agent_topics
from cyborg.conductor import rpcapi
from cyborg import context
from cyborg import exception
from cyborg.objects import base as objects_base
from cyborg.objects import device_profile
from cyborg.objects import driver_report
from cyborg.objects import host as host_obj
from cyborg.tests import functional
from cyborg.tests.functional import services

CLAIMS = dict(user_id='claimed-user', project_id='claimed-project',
              is_admin=True, roles=['admin'], auth_token='claimed-token')


class HostUsersTestCase(services.ServicesTestCase):

    def setUp(self):
        super().setUp()
        self.use_vhost()
        self.hosts = self.host_names(2)
        for host in self.hosts:
            self.add_host(host)

    def _url(self, user, vhost):
        base_url = urllib.parse.urlsplit(functional.RABBIT_URL)
        netloc = '%s:%s@%s' % (user, 'secret', base_url.netloc.split('@')[-1])
        return base_url._replace(netloc=netloc, path='/' + vhost).geturl()

    def host_user(self, host, vhost, own_vhost=False):
        """A broker user for ``host``'s agent; its transport URL.

        In a shared virtual host the user gets the permissions of
        :func:`agent_topics.broker_permissions`; in a virtual host of the
        host's own, every permission there.
        """
        user = 'cyborg-%s-%s' % (uuid.uuid4().hex[:8], host)
        self.assertEqual(0, functional.rabbitmqctl('add_user', user,
                                                   'secret'))
        self.addCleanup(functional.rabbitmqctl, 'delete_user', user)
        if own_vhost:
            permissions, topics = ('.*', '.*', '.*'), None
        else:
            permissions, topics = agent_topics.broker_permissions(host)
        self.assertEqual(0, functional.rabbitmqctl(
            'set_permissions', '-p', vhost, user, *permissions))
        if topics:
            self.assertEqual(0, functional.rabbitmqctl(
                'set_topic_permissions', '-p', vhost, user, 'cyborg',
                *topics))
        return self._url(user, vhost)

    def client_as(self, url, topic, server=None):
        """An RPC client of ``topic`` on the broker as another user."""
        transport = messaging.get_rpc_transport(
            self.conf.conf, url=url,
            allowed_remote_exmods=[exception.__name__])
        self.addCleanup(transport.cleanup)
        client = rpc.get_client(
            messaging.Target(topic=topic, version='1.4'),
            objects_base.CyborgObjectSerializer(), mandatory=True,
            transport=transport)
        return client.prepare(server=server, timeout=30, retry=0)

    def reports_arrive(self, host):
        functional.wait('the report of %s' % host, lambda: len(
            self.children(host)) == len(self.cards[host]), timeout=120)


class TestHostUsers(HostUsersTestCase):
    """Per-host users in the one virtual host, with topic permissions."""

    def test_hosts_speak_only_for_themselves(self):
        host_a, host_b = self.hosts
        conductor = self.start_conductor(0)
        url_a = self.host_user(host_a, self.vhost)
        self.start_agent(host_a, DEFAULT={'transport_url': url_a})
        self.reports_arrive(host_a)

        # As host A: a report that names host B, with identity claims.
        claimed = context.RequestContext(**CLAIMS)
        own_topic = self.client_as(url_a, rpcapi.AGENT_TOPIC, host_a)
        self.assertRaises(
            exception.ReportForOtherHost, own_topic.call, claimed,
            'report_host', host_report=driver_report.HostReport(
                hostname=host_b, devices=[]))
        self.assertRaises(
            exception.ReportForOtherHost, own_topic.call, claimed,
            'compute_node_rp', hostname=host_b, rp_name=host_b)
        self.assertNotIn(host_b, [h.hostname for h in host_obj.Host.list(
            self.ctx)])
        (refused,) = [line for line in conductor.log().splitlines()
                      if 'Refused report_host for host %s' % host_b in line]
        self.assertIn('WARNING', refused)
        # The conductor served it as itself, not as the claimed identity.
        self.assertNotIn('claimed', conductor.log())

        # The API's calls are not served on the host's topic.
        profile = self.rpc.device_profile_create(
            self.ctx, device_profile.DeviceProfile(
                self.ctx, name='dp', groups=[services.PROFILE]))
        for method, kwargs in (
                ('device_profiles_delete', dict(uuids=[profile.uuid],
                                                names=[])),
                ('arq_delete', dict(uuids=None, instance_uuid=None))):
            error = self.assertRaises(messaging.RemoteError, own_topic.call,
                                      claimed, method, **kwargs)
            self.assertEqual('NoSuchMethod', error.exc_type)
        self.assertEqual(profile.uuid, device_profile.DeviceProfile.
                         get_by_name(self.ctx, 'dp').uuid)

        # The broker refuses host A's user host B's topic and the API's.
        for topic, server in ((rpcapi.AGENT_TOPIC, host_b),
                              (rpcapi.TOPIC, None)):
            error = self.assertRaises(
                messaging.MessageDeliveryFailure,
                self.client_as(url_a, topic, server).call, claimed,
                'device_profiles_delete', uuids=[profile.uuid], names=[])
            self.assertIn('ACCESS_REFUSED', str(error))
        self.assertEqual(profile.uuid, device_profile.DeviceProfile.
                         get_by_name(self.ctx, 'dp').uuid)


class TestHostVirtualHosts(HostUsersTestCase):
    """Each host's agent in a virtual host of its own."""

    def test_host_reaches_nothing_but_its_own_virtual_host(self):
        host_a, host_b = self.hosts
        vhosts = {}
        for host in self.hosts:
            vhosts[host] = '%s-%s' % (self.vhost, host)
            self.assertEqual(0, functional.rabbitmqctl('add_vhost',
                                                       vhosts[host]))
            self.addCleanup(functional.rabbitmqctl, 'delete_vhost',
                            vhosts[host])
            self.assertEqual(0, functional.rabbitmqctl(
                'set_permissions', '-p', vhosts[host], 'guest', '.*', '.*',
                '.*'))
        base_url = urllib.parse.urlsplit(self.rabbit)
        self.start_conductor(0, conductor={
            'agent_transport_url': base_url._replace(
                path='/%s-{host}' % self.vhost).geturl()})
        url_a = self.host_user(host_a, vhosts[host_a], own_vhost=True)
        self.start_agent(host_a, DEFAULT={'transport_url': url_a})
        self.reports_arrive(host_a)
        # The conductor calls the agent in the host's virtual host: here
        # the test, with the conductor's option (the agent answers that
        # it has no such mdev type enabled).
        self.conf.config(agent_transport_url=base_url._replace(
            path='/%s-{host}' % self.vhost).geturl(), group='conductor')
        self.addCleanup(rpc.cleanup_agent_transports)
        self.assertRaises(exception.MdevTypeNotEnabled,
                          agent_rpcapi.AgentAPI().create_mdev, self.ctx,
                          host_a, str(uuid.uuid4()), 'nvidia-1',
                          '0000:3b:00.0')

        claimed = context.RequestContext(**CLAIMS)
        self.assertRaises(
            exception.ReportForOtherHost,
            self.client_as(url_a, rpcapi.AGENT_TOPIC, host_a).call, claimed,
            'report_host', host_report=driver_report.HostReport(
                hostname=host_b, devices=[]))
        # Host A's user opens neither host B's virtual host nor the API's.
        for vhost in (vhosts[host_b], self.vhost):
            user = urllib.parse.urlsplit(url_a).username
            # amqp's NotAllowed, through oslo.messaging unwrapped.
            client = self.client_as(self._url(user, vhost), rpcapi.TOPIC)
            try:
                client.call(claimed, 'arq_delete', uuids=None,
                            instance_uuid=None)
            except Exception as e:
                error = e
            else:
                self.fail('host A opened virtual host %s' % vhost)
            self.assertIn("NOT_ALLOWED - access to vhost '%s' refused" %
                          vhost, str(error))
