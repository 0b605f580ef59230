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
"""Notification objects: pinned versions, event types and payloads."""

from oslo_versionedobjects import fixture

from cyborg.objects import base as objects_base
from cyborg.objects import notification
from cyborg.tests import base

# A change to a payload's fields changes its fingerprint: bump its VERSION
# (a new field: minor; a removed or retyped one: major), say so in the
# class's history and in doc/source/admin/notifications.rst, then update
# the hash here.
EXPECTED_FINGERPRINTS = {
    'AcceleratorRequestNotification':
        '1.0-30c135bdb0e5e33f5d7c5c3ab3787c95',
    'AcceleratorRequestPayload': '1.0-20d546676ff365bb60bc0d63fa8942a7',
    'DeviceNotification': '1.0-30c135bdb0e5e33f5d7c5c3ab3787c95',
    'DevicePayload': '1.0-dee1c0327a4a2dbac2ced9d783b3fbf0',
    'DeviceProfileNotification': '1.0-30c135bdb0e5e33f5d7c5c3ab3787c95',
    'DeviceProfilePayload': '1.0-6cda96acf6691d3cf64080dcbc9c408a',
    'EventType': '1.1-9b1635ad0b6baccc3a2c4b8e76c99d1d',
    'DeviceHealthNotification': '1.0-30c135bdb0e5e33f5d7c5c3ab3787c95',
    'DeviceHealthPayload': '1.0-7b2f1649c02d52fc92afb4e275c65f59',
    'Publisher': '1.0-495134daa0ddc1bfa9e533b1e2b34d58',
}

CLASSES = notification.NotificationObjectRegistry.notification_classes


class TestNotificationObjects(base.TestCase):

    def test_versions(self):
        checker = fixture.ObjectVersionChecker(
            {cls.obj_name(): [cls] for cls in CLASSES})
        expected, actual = checker.test_hashes(EXPECTED_FINGERPRINTS)
        self.assertEqual(expected, actual,
                         'Notification fields changed; see the note above '
                         'EXPECTED_FINGERPRINTS.')

    def test_apart_from_the_rpc_objects(self):
        rpc_objects = objects_base.CyborgObjectRegistry.obj_classes()
        self.assertEqual(set(), {cls.obj_name() for cls in CLASSES} &
                         set(rpc_objects))

    def test_event_types(self):
        for expected, kwargs in (
                ('accelerator_request.bind.end',
                 dict(object='accelerator_request', action='bind',
                      phase='end')),
                ('device.delete', dict(object='device', action='delete'))):
            self.assertEqual(expected, notification.EventType(
                **kwargs).to_event_type())
        self.assertRaises(ValueError, notification.EventType,
                          object='device', action='health')

    def test_message(self):
        profile = notification.DeviceProfilePayload.of(
            notification.DeviceProfilePayload(
                uuid='5518a925-1c2c-49a2-a8bf-0927d9456f3e', name='dp',
                description=None, groups=[]),
            description='given')
        sent = notification.DeviceProfileNotification(
            priority='info',
            event_type=notification.EventType(object='device_profile',
                                              action='create'),
            publisher=notification.Publisher(
                source='cyborg-conductor', host='ctl-1'),
            payload=profile).message()
        self.assertEqual(('info', 'cyborg-conductor:ctl-1',
                          'device_profile.create'), sent[:3])
        self.assertEqual({
            'cyborg_object.name': 'DeviceProfilePayload',
            'cyborg_object.namespace': 'cyborg',
            'cyborg_object.version': '1.0',
            'cyborg_object.data': {
                'uuid': '5518a925-1c2c-49a2-a8bf-0927d9456f3e',
                'name': 'dp', 'description': 'given', 'groups': []}},
            sent[3])
