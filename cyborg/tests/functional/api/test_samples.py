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
"""The API samples of the api-ref are what the API really answers.

Every sample under ``api-ref/source/samples`` is checked against a live
response of the same call: the same keys in the same order, the same
values except identifiers and timestamps, which only need the same form.
Request samples are sent as they are. Every response, and every sample,
also validates against the OpenAPI document's response schema of its
call and status. Set ``CYBORG_WRITE_SAMPLES=1`` to
rewrite the response samples from the live responses after a change.
"""

import json
import os
import pathlib
import re

from oslo_utils import timeutils
import webob

from cyborg import context
from cyborg.db import api as db_api
from cyborg.tests import db_utils
from cyborg.tests.functional.api import test_openapi
from cyborg.tests.functional.api import test_routes
from cyborg.tests import stand_ins

SAMPLES = pathlib.Path(__file__).resolve().parents[4] / 'api-ref' / \
    'source' / 'samples'
WRITE = os.environ.get('CYBORG_WRITE_SAMPLES') == '1'

UUID = re.compile('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  '[0-9a-f]{12}$')
TIMESTAMP = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$')
# How a device profile shown alone spells its times before 2.6.
SPACED_TIMESTAMP = re.compile(TIMESTAMP.pattern.replace('T', ' '))
LINK = re.compile('^http://controller/accelerator/(v2/)?[a-z_]+(/[0-9a-f-]+'
                  r')?(\?.*)?$')
# The fixed identifiers the request samples use.
PROFILE_UUID = '5518a925-1c2c-49a2-a8bf-0927d9456f3e'
RP_UUID = '8c2b4f1e-9d4a-4c0e-8a5f-6f7c1d2e3b4a'
INSTANCE_UUID = '1b7e3c5a-2f4d-4e6a-9b8c-0d1e2f3a4b5c'
SAMPLE_ARQ_UUID = 'a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d'
IMAGE_UUID = '9a17439a-85d0-4c53-a3d3-0f68a2eac896'


ANY_UUID = re.compile(UUID.pattern[1:-1])


def _same_form(sample, live):
    for pattern in (UUID, TIMESTAMP, SPACED_TIMESTAMP, LINK):
        if pattern.match(str(sample)):
            return bool(pattern.match(str(live)))
    if isinstance(sample, str) and isinstance(live, str):
        # Messages that name a resource by uuid.
        return ANY_UUID.sub('<uuid>', sample) == ANY_UUID.sub('<uuid>', live)
    return False


class TestSamples(test_routes.APITestCase):

    def setUp(self):
        super().setUp()
        ctx = context.get_admin_context()
        self.device, deployable, _ = db_utils.create_device_tree(
            ctx, hostname='compute-1', name='0000:5e:00.0')
        self.deployable = db_api.update(ctx, 'deployable', deployable.uuid,
                                        {'rp_uuid': RP_UUID})
        db_api.create(ctx, 'attribute', {'deployable_id': deployable.id,
                                         'key': 'rc', 'value': 'FPGA'})
        self.live = {}

    def call(self, method, path, sample=None, request=None, status=200,
             version=None, replace=None):
        """Make a call; compare its response with ``sample``."""
        body = None
        if request is not None:
            body = (SAMPLES / request).read_text()
            for old, new in (replace or {}).items():
                body = body.replace(old, new)
        req = webob.Request.blank(path, method=method,
                                  base_url='http://controller')
        req.script_name = '/accelerator'
        req.headers['Accept'] = 'application/json'
        if version:
            req.headers['OpenStack-API-Version'] = 'accelerator ' + version
        if body is not None:
            req.body = body.encode()
            req.content_type = 'application/json'
        response = req.get_response(self.app)
        self.assertEqual(status, response.status_int, response.body)
        live = response.json if response.body else None
        test_openapi.check_response(method, path, status, live)
        if sample is not None:
            self._check(sample, live)
            test_openapi.check_response(method, path, status, json.loads(
                (SAMPLES / sample).read_text()))
        return live

    def _check(self, sample, live):
        path = SAMPLES / sample
        if WRITE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(live, indent=4) + '\n')
            return
        self._compare(json.loads(path.read_text()), live, sample)

    def _compare(self, sample, live, where):
        if isinstance(sample, dict):
            self.assertIsInstance(live, dict, where)
            self.assertEqual(list(sample), list(live), where)
            for key in sample:
                self._compare(sample[key], live[key], '%s/%s' % (where, key))
        elif isinstance(sample, list):
            self.assertEqual(len(sample), len(live), where)
            for index, (s, v) in enumerate(zip(sample, live)):
                self._compare(s, v, '%s/%d' % (where, index))
        elif sample != live:
            self.assertTrue(_same_form(sample, live),
                            '%s: %r in the sample, %r live' % (
                                where, sample, live))

    def test_versions(self):
        self.call('GET', '/', 'versions/versions-list-resp.json')
        self.call('GET', '/v2', 'versions/version-show-resp.json')

    def test_device_profiles(self):
        self.call('POST', '/v2/device_profiles',
                  'device_profiles/device_profile-create-resp.json',
                  request='device_profiles/device_profile-create-req.json',
                  status=201)
        self.call('GET', '/v2/device_profiles',
                  'device_profiles/device_profiles-list-resp.json')
        self.call('GET', '/v2/device_profiles/' + PROFILE_UUID,
                  'device_profiles/device_profile-show-resp.json')
        self.call('GET', '/v2/device_profiles/' + PROFILE_UUID,
                  'device_profiles/device_profile-show-2.6-resp.json',
                  version='2.6')
        self.call('GET', '/v2/device_profiles?limit=1',
                  'device_profiles/device_profiles-list-2.4-resp.json',
                  version='2.4')
        self.call('DELETE', '/v2/device_profiles/' + PROFILE_UUID,
                  status=204)

    def test_device_profile_lifecycle(self):
        self.call('POST', '/v2/device_profiles',
                  request='device_profiles/device_profile-create-req.json',
                  status=201)
        self.call('PATCH', '/v2/device_profiles/' + PROFILE_UUID,
                  'device_profiles/device_profile-update-resp.json',
                  request='device_profiles/device_profile-update-req.json',
                  version='2.5')
        self.call('POST', '/v2/device_profiles/%s/disable' % PROFILE_UUID,
                  status=204, version='2.5')
        self.call('GET', '/v2/device_profiles/' + PROFILE_UUID,
                  'device_profiles/device_profile-show-2.5-resp.json',
                  version='2.5')
        self.call('POST', '/v2/device_profiles/%s/enable' % PROFILE_UUID,
                  status=204, version='2.5')

    def test_accelerator_requests(self):
        # The deployable serves the sample profile as it is: it has the
        # profile's trait and already holds its bitstream.
        ctx = context.get_admin_context()
        db_api.create(ctx, 'attribute', {
            'deployable_id': self.deployable.id, 'key': 'trait0',
            'value': 'CUSTOM_FPGA_INTEL_PAC_ARRIA10'})
        db_api.update(ctx, 'deployable', self.deployable.uuid,
                      {'bitstream_id': 'd5ca2f11-3108-4426-a11c-a959987565df'})
        self.call('POST', '/v2/device_profiles',
                  request='device_profiles/device_profile-create-req.json',
                  status=201)
        created = self.call(
            'POST', '/v2/accelerator_requests',
            'accelerator_requests/arq-create-resp.json',
            request='accelerator_requests/arq-create-req.json', status=201)
        arq = created['arqs'][0]['uuid']
        self.call('GET', '/v2/accelerator_requests/' + arq,
                  'accelerator_requests/arq-show-resp.json')
        self.call('PATCH', '/v2/accelerator_requests',
                  request='accelerator_requests/arq-bind-req.json',
                  replace={SAMPLE_ARQ_UUID: arq}, status=202)
        self.call('GET', '/v2/accelerator_requests?instance=%s&'
                  'bind_state=resolved' % INSTANCE_UUID,
                  'accelerator_requests/arqs-list-resp.json')
        self.call('PATCH', '/v2/accelerator_requests/' + arq,
                  request='accelerator_requests/arq-unbind-req.json',
                  replace={SAMPLE_ARQ_UUID: arq}, status=202)
        # From 2.8 the operations alone: well formed; the request is
        # Unbound already, which an unbind sent again leaves as it is.
        self.call('PATCH', '/v2/accelerator_requests/' + arq,
                  request='accelerator_requests/arq-unbind-one-req.json',
                  status=202, version='2.8')
        self.assertEqual('Unbound', self.call(
            'GET', '/v2/accelerator_requests/' + arq)['state'])
        self.call('DELETE', '/v2/accelerator_requests?arqs=' + arq,
                  status=204)
        self.call('GET', '/v2/accelerator_requests/' + arq,
                  'errors/not-found-resp.json', status=404)

    def test_devices(self):
        self.call('GET', '/v2/devices', 'devices/devices-list-resp.json',
                  version='2.3')
        self.call('GET', '/v2/devices/' + self.device.uuid,
                  'devices/device-show-resp.json', version='2.3')
        # A card its host reported unhealthy: quarantined (2.9).
        now = timeutils.utcnow()
        db_api.update(context.get_admin_context(), 'device',
                      self.device.uuid, {
                          'health': 'unhealthy', 'health_changed_at': now,
                          'health_reasons': [
                              '0000:5e:00.0: 2 new fatal AER error(s), 2 in '
                              'all'],
                          'quarantined_at': now})
        self.call('GET', '/v2/devices/' + self.device.uuid,
                  'devices/device-show-2.9-resp.json', version='2.9')
        self.call('POST', '/v2/devices/%s/release' % self.device.uuid,
                  status=204, version='2.9')

    def test_deployables(self):
        self.call('GET', '/v2/deployables',
                  'deployables/deployables-list-resp.json')
        self.call('GET', '/v2/deployables/' + self.deployable.uuid,
                  'deployables/deployable-show-resp.json')
        self.call('GET', '/v2/deployables/' + self.deployable.uuid,
                  'deployables/deployable-show-2.6-resp.json', version='2.6')
        # Programmed for real, through a stand-in of the host's agent.
        self.useFixture(stand_ins.StandInAgent('compute-1'))
        programmed = self.call(
            'PATCH', '/v2/deployables/%s/program' % self.deployable.uuid,
            'deployables/deployable-program-resp.json',
            request='deployables/deployable-program-req.json')
        # The sample check takes any UUID for the bitstream.
        self.assertEqual(IMAGE_UUID, programmed['bitstream_id'])
        self.assertEqual(IMAGE_UUID, db_api.get(
            context.get_admin_context(), 'deployable',
            self.deployable.uuid).bitstream_id)

    def test_attributes(self):
        created = self.call(
            'POST', '/v2/attributes', 'attributes/attribute-create-resp.json',
            request='attributes/attribute-create-req.json',
            replace={'"deployable_id": 1': '"deployable_id": %d' %
                     self.deployable.id}, status=201)
        self.call('GET', '/v2/attributes?key=trait0',
                  'attributes/attributes-list-resp.json')
        self.call('GET', '/v2/attributes/' + created['uuid'],
                  'attributes/attribute-show-resp.json')
        self.call('DELETE', '/v2/attributes/' + created['uuid'], status=204)
