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
"""The conductor's versioned notifications, heard by a real listener.

The conductor serves on fake://, its notifier sends through oslo.messaging
(on fake://, or on a RabbitMQ virtual host of its own) and an oslo.messaging
notification listener hears what it sent. Every
sample under ``doc/notification_samples`` is checked against a live
notification: the same keys, the same values but uuids, which only need
the same form. Set ``CYBORG_WRITE_SAMPLES=1`` to rewrite the samples from
the live notifications after a change.
"""

import json
import os
import pathlib
import re
import threading

import fixtures
import oslo_messaging as messaging
from oslo_utils import uuidutils

from cyborg.common import pci_address
from cyborg.common import rpc
from cyborg.conductor import inventory
from cyborg.db import api as db_api
from cyborg.drivers import report
from cyborg.objects import device_profile
from cyborg.objects import driver_report
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import functional

SAMPLES = pathlib.Path(__file__).resolve().parents[4] / 'doc' / \
    'notification_samples'
WRITE = os.environ.get('CYBORG_WRITE_SAMPLES') == '1'
UUID = re.compile('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  '[0-9a-f]{12}$')
# How long a notification may take to arrive.
TIMEOUT = 10
ADDRESS = '0000:5e:00.0'


class Listener(fixtures.Fixture):
    """An oslo.messaging notification listener on ``url``.

    ``heard`` holds a dict per notification: ``priority``,
    ``publisher_id``, ``event_type`` and ``payload``, as they came.
    """

    def __init__(self, conf, url):
        super().__init__()
        self.conf = conf
        self.url = url

    def _setUp(self):
        self.heard = []
        self._arrived = threading.Condition()
        transport = messaging.get_notification_transport(self.conf,
                                                         url=self.url)
        self.addCleanup(transport.cleanup)
        listener = messaging.get_notification_listener(
            transport, [messaging.Target(topic='notifications')], [self],
            executor='threading')
        listener.start()
        self.addCleanup(listener.wait)
        self.addCleanup(listener.stop)

    def _hear(self, priority, publisher_id, event_type, payload):
        with self._arrived:
            self.heard.append({'priority': priority,
                               'publisher_id': publisher_id,
                               'event_type': event_type,
                               'payload': payload})
            self._arrived.notify_all()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self._hear('INFO', publisher_id, event_type, payload)

    def error(self, ctxt, publisher_id, event_type, payload, metadata):
        self._hear('ERROR', publisher_id, event_type, payload)

    def wait_for(self, count):
        """The first ``count`` notifications, once they have arrived."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self.heard) >= count,
                                          TIMEOUT):
                raise AssertionError('%d notification(s) heard, %d wanted: '
                                     '%s' % (len(self.heard), count,
                                             self.heard))
            return self.heard[:count]


def fpga(*reasons):
    """The FPGA of host2; unhealthy for ``reasons``, if any."""
    handles = [report.pci_handle(pci_address.offset(ADDRESS, vf + 1))
               for vf in range(2)]
    device = report.device(
        'FPGA', '8086', 'PAC', ADDRESS,
        [report.deployable(ADDRESS, 'intel_fpga', 'FPGA', [], handles)],
        std_board_info={'product_id': '09c4'})
    if reasons:
        device.health = states.DEVICE_UNHEALTHY
        device.health_reasons = list(reasons)
    return device


class NotificationTestCase(base.ConductorTestCase):
    """The conductor, a device of host1 with two handles, and a listener."""

    #: Whether the conductor sends notifications.
    NOTIFY = True

    def setUp(self):
        super().setUp()
        self.conf.config(host='ctl-1')
        self.url = self.bus()
        if self.NOTIFY:
            self.notify()
        self.listener = self.useFixture(Listener(self.conf.conf, self.url))
        _, deployable, _ = db_utils.create_device_tree(
            self.admin_context, hostname='host1', resource_class='FPGA')
        self.rp_uuid = uuidutils.generate_uuid()
        db_api.update(self.admin_context, 'deployable', deployable.uuid,
                      {'rp_uuid': self.rp_uuid})

    def bus(self):
        """The transport URL of the notifications."""
        return 'fake://'

    def notify(self):
        """Notifications on, as ``[oslo_messaging_notifications]`` sets."""
        self.conf.config(driver=['messagingv2'], transport_url=self.url,
                         group='oslo_messaging_notifications')
        rpc.init_notifier(self.conf.conf, url='fake://')
        self.addCleanup(rpc.cleanup_notifier)

    def profile(self, name='dp', units=1):
        return self.api.device_profile_create(
            self.admin_context, device_profile.DeviceProfile(
                self.admin_context, name=name, description='an FPGA',
                groups=[{'resources:FPGA': str(units)}]))

    def bind(self, arqs, instance):
        self.api.arq_apply_patch(self.admin_context, {arq.uuid: {
            'hostname': 'host1', 'device_rp_uuid': self.rp_uuid,
            'instance_uuid': instance} for arq in arqs})

    def report(self, *devices):
        inventory.apply_report(
            self.admin_context,
            driver_report.HostReport(hostname='host2', devices=list(devices)),
            'conductor-test')


class TestNotifications(NotificationTestCase):

    def test_bind_and_unbind(self):
        self.profile()
        arq = self.api.arq_create(self.admin_context, 'dp', 'p1')[0]
        instance = uuidutils.generate_uuid()
        self.bind([arq], instance)
        self.api.arq_apply_patch(self.admin_context, {arq.uuid: None})
        _, bound, unbound = self.listener.wait_for(3)
        self.assertEqual(('INFO', 'cyborg-conductor:ctl-1',
                          'accelerator_request.bind.end'),
                         (bound['priority'], bound['publisher_id'],
                          bound['event_type']))
        self.assertEqual('AcceleratorRequestPayload',
                         bound['payload']['cyborg_object.name'])
        expected = {
            'uuid': arq.uuid, 'state': states.BOUND,
            'device_profile_name': 'dp', 'device_profile_group_id': 0,
            'hostname': 'host1', 'device_rp_uuid': self.rp_uuid,
            'instance_uuid': instance, 'project_id': 'p1',
            'attach_handle_type': states.ATTACH_PCI}
        self.assertEqual(expected, bound['payload']['cyborg_object.data'])
        # What it was bound to, as it was; the ARQ holds no handle now.
        self.assertEqual(('INFO', 'accelerator_request.unbind.end'),
                         (unbound['priority'], unbound['event_type']))
        self.assertEqual(dict(expected, state=states.UNBOUND,
                              attach_handle_type=''),
                         unbound['payload']['cyborg_object.data'])

    def test_bind_failure_is_an_error(self):
        self.profile(units=3)
        arqs = self.api.arq_create(self.admin_context, 'dp', 'p1')
        self.bind(arqs, uuidutils.generate_uuid())
        heard = self.listener.wait_for(4)[1:]
        # The device has two handles: one ARQ, whichever binds last, gets
        # none.
        self.assertEqual(
            [('ERROR', 'accelerator_request.bind.error',
              states.BIND_FAILED)] +
            [('INFO', 'accelerator_request.bind.end', states.BOUND)] * 2,
            sorted((n['priority'], n['event_type'],
                    n['payload']['cyborg_object.data']['state'])
                   for n in heard))
        failed = [n['payload']['cyborg_object.data'] for n in heard
                  if n['priority'] == 'ERROR'][0]
        self.assertEqual('', failed['attach_handle_type'])

    def test_profile_create_and_delete(self):
        created = self.profile()
        self.api.device_profiles_delete(self.admin_context, names=['dp'])
        heard = self.listener.wait_for(2)
        self.assertEqual(['device_profile.create', 'device_profile.delete'],
                         [n['event_type'] for n in heard])
        for notification in heard:
            self.assertEqual({'uuid': created.uuid, 'name': 'dp',
                              'description': 'an FPGA',
                              'groups': [{'resources:FPGA': '1'}]},
                             notification['payload']['cyborg_object.data'])

    def test_device_reported_then_gone(self):
        self.report(fpga())
        self.report(fpga())  # nothing new: no notification
        self.report()
        heard = self.listener.wait_for(2)
        self.assertEqual(['device.create', 'device.delete'],
                         [n['event_type'] for n in heard])
        self.assertEqual(heard[0]['payload'], heard[1]['payload'])
        data = heard[0]['payload']['cyborg_object.data']
        self.assertTrue(uuidutils.is_uuid_like(data.pop('uuid')))
        self.assertEqual({'type': 'FPGA', 'vendor': '8086', 'model': 'PAC',
                          'hostname': 'host2',
                          'std_board_info': '{"product_id": "09c4"}'},
                         data)

    def test_a_lost_notification_fails_nothing(self):
        self.useFixture(fixtures.MockPatchObject(
            rpc.NOTIFIER, 'prepare', autospec=True,
            side_effect=messaging.MessageDeliveryFailure('down')))
        log = self.useFixture(fixtures.FakeLogger())
        created = self.profile()
        stored = device_profile.DeviceProfile.get_by_name(
            self.admin_context, 'dp')
        self.assertEqual(created.uuid, stored.uuid)
        self.assertIn('Notification device_profile.create could not be sent',
                      log.output)


class TestOnRabbitMQ(NotificationTestCase):
    """Notifications on a RabbitMQ of their own; RPC stays on fake://."""

    def bus(self):
        vhost = 'cyborg-notify-%s' % uuidutils.generate_uuid()[:12]
        url = functional.vhost(vhost)
        if url is None:
            self.skipTest('needs rabbitmqctl to give the test a virtual '
                          'host')
        self.addCleanup(functional.rabbitmqctl, 'delete_vhost', vhost)
        return url

    def test_profile_create(self):
        created = self.profile()
        heard = self.listener.wait_for(1)[0]
        self.assertEqual(('INFO', 'cyborg-conductor:ctl-1',
                          'device_profile.create', created.uuid),
                         (heard['priority'], heard['publisher_id'],
                          heard['event_type'],
                          heard['payload']['cyborg_object.data']['uuid']))

    def test_samples(self):
        """Each documented sample is what arrives on RabbitMQ."""
        self.profile()
        self.report(fpga())
        self.report(fpga('0000:5e:00.0: 1 new fatal AER error(s), 1 in all'))
        self.report()
        self.profile(name='dp3', units=3)
        arqs = self.api.arq_create(self.admin_context, 'dp3', 'p1')
        self.bind(arqs, uuidutils.generate_uuid())
        self.api.arq_apply_patch(self.admin_context, {arqs[0].uuid: None})
        self.api.device_profiles_delete(self.admin_context, names=['dp'])
        live = {}
        for notification in self.listener.wait_for(10):
            live.setdefault(notification['event_type'], notification)
        samples = {path.stem: path for path in SAMPLES.glob('*.json')}
        if WRITE:
            for event_type, notification in live.items():
                path = SAMPLES / (event_type + '.json')
                path.write_text(json.dumps(notification, indent=4) + '\n')
                samples[event_type] = path
        self.assertEqual(sorted(live), sorted(samples))
        for event_type, path in samples.items():
            self._compare(event_type, json.loads(path.read_text()),
                          live[event_type])

    def _compare(self, where, sample, live):
        if isinstance(sample, dict) and isinstance(live, dict):
            self.assertEqual(list(sample), list(live), where)
            for key in sample:
                self._compare('%s.%s' % (where, key), sample[key], live[key])
        elif isinstance(sample, str) and UUID.match(sample):
            self.assertRegex(live, UUID, where)
        else:
            self.assertEqual(sample, live, where)


class TestOffByDefault(NotificationTestCase):

    NOTIFY = False

    def test_noop_is_off(self):
        self.conf.config(driver=['noop'],
                         group='oslo_messaging_notifications')
        rpc.init_notifier(self.conf.conf, url='fake://')
        self.assertIsNone(rpc.NOTIFIER)

    def test_nothing_is_sent(self):
        self.assertIsNone(rpc.NOTIFIER)
        self.profile(name='unheard')
        arq = self.api.arq_create(self.admin_context, 'unheard', 'p1')[0]
        self.bind([arq], uuidutils.generate_uuid())
        self.report(fpga())
        # The first notification heard is the first sent once they are on:
        # anything sent before would have arrived first.
        self.notify()
        self.profile(name='heard')
        heard = self.listener.wait_for(1)
        self.assertEqual('heard',
                         heard[0]['payload']['cyborg_object.data']['name'])
