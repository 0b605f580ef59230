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
"""The API answers as openstack-cyborg 17.0.0 did, at 2.0 to 2.3.

17.0.0's own API application (``cyborg17_api.py``, in its virtualenv)
answers every list and show, filters and refusals included, on the
database its objects filled (``cyborg17_seed.py``); ours answers the same
requests on that database after ``cyborg-dbsync upgrade``. The bodies
must be equal field by field, formats included, but for the differences
the API reference lists ("Differences from the older Cyborg service")
and what the conversion changes in the data; each is spelt out below.
"""

import collections
import itertools
import json
import pathlib
import subprocess

import sqlalchemy as sa
import webob

from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.db import test_cyborg17

THEIR_API = pathlib.Path(__file__).with_name('cyborg17_api.py')
# devstack serves the API under this prefix.
BASE_URL = 'http://cyborg.test/accelerator'
VERSIONS = ('2.0', '2.1', '2.2', '2.3')
PROJECT_A = 'a' * 32
PROJECT_B = 'b' * 32
VENDOR_FILTERS = ('/v2/devices?vendor=0x8086', '/v2/devices?vendor=8086')
MISSING = '00000000-0000-4000-8000-00000000dead'


class TestWireOf17(test_cyborg17._Upgrade, base.TestCase):

    def setUp(self):
        super().setUp()
        self._write_conf('sqlite:///%s/cyborg.sqlite' % self.state)
        self.theirs('create_schema')
        # Two hosts as the seed writes them, and one host as 17.0.0's
        # drivers reported it (with their vendor spelling, 0x8086).
        self.seed()
        # What the second seed prints holds every row.
        self.rows = self.seed('compute-3')
        # Keystone's project ids: 17.0.0 cannot show others (a 400).
        with self.engine.begin() as connection:
            connection.execute(sa.text(
                "UPDATE extended_accelerator_requests SET project_id = "
                "CASE project_id WHEN 'project-a' THEN :a ELSE :b END"),
                {'a': PROJECT_A, 'b': PROJECT_B})

    def _requests(self):
        """Every GET worth comparing: (path, microversion)."""
        profile = self.rows['device_profiles'][0]
        deployable = self.rows['deployables'][0]
        instance = next(arq['instance_uuid'] for arq
                        in self.rows['accelerator_requests']
                        if arq['state'] == 'Bound')
        paths = [
            '/v2/device_profiles',
            '/v2/device_profiles?name=%s,gpu-dp' % profile['name'],
            '/v2/device_profiles/%s' % profile['name'],
            '/v2/device_profiles/' + MISSING,
            '/v2/devices',
            *VENDOR_FILTERS,
            '/v2/devices?vendor=10de&type=GPU',
            '/v2/devices?hostname=compute-1',
            '/v2/devices/' + MISSING,
            '/v2/deployables',
            '/v2/deployables?filters.field=name&filters.value=%s'
            % deployable['name'],
            '/v2/deployables?name=%s' % deployable['name'],
            '/v2/deployables/' + MISSING,
            '/v2/attributes',
            '/v2/attributes?deployable_id=%d&key=rc' % deployable['id'],
            '/v2/attributes/' + MISSING,
            '/v2/accelerator_requests',
            '/v2/accelerator_requests?instance=' + instance,
            '/v2/accelerator_requests/' + MISSING,
        ]
        for collection in ('device_profiles', 'devices', 'deployables',
                           'attributes', 'accelerator_requests'):
            paths += ['/v2/%s/%s' % (collection, row['uuid'])
                      for row in self.rows[collection]]
        return [(path, version) for path in paths for version in VERSIONS]

    def _their_answers(self, requests):
        argv = [str(test_cyborg17.VENV / 'bin' / 'python'), str(THEIR_API),
                self.conf_file, BASE_URL]
        result = subprocess.run(argv, input=json.dumps(requests),
                                capture_output=True, text=True,
                                env=self.env, cwd=self.state)
        if result.returncode:
            self.fail('%s exited %d:\n%s' % (argv, result.returncode,
                                             result.stderr))
        return [tuple(answer) for answer in json.loads(result.stdout)]

    def _our_answers(self, requests):
        """Our answers, on the database converted by our dbsync."""
        self.dbsync('upgrade')
        self.serve()
        app = self.useFixture(cyborg_fixtures.API()).app
        answers = []
        for path, version in requests:
            request = webob.Request.blank(path, base_url=BASE_URL)
            request.headers['OpenStack-API-Version'] = (
                'accelerator ' + version)
            request.headers['X-Roles'] = 'admin'
            request.headers['X-Project-Id'] = PROJECT_A
            response = request.get_response(app)
            answers.append((response.status_int,
                            response.json if response.body else None))
        return answers

    def _converted(self):
        """{(field, 17.0.0's value, uuid or None): what conversion made}."""
        changes = {}
        # A device being cleaned is disabled (test_cyborg17).
        for device in self.rows['devices']:
            if device['device_state'] == 'cleaning':
                changes['status', 'enabled', device['uuid']] = 'maintaining'
        # The FPGA's deployable is named after the card, as our driver
        # names it, not after its virtual function.
        changes['name', 'compute-3_0000:5e:00.2', None] = (
            'compute-3_0000:5e:00.0')
        # A trait key a deployable had twice takes a free number, in its
        # attributes and in its attributes_list.
        attributes = collections.defaultdict(list)
        for attribute in self.rows['attributes']:
            attributes[attribute['deployable_id']].append(attribute)
        for deployable in self.rows['deployables']:
            mine = attributes[deployable['id']]
            taken = {attribute['key'] for attribute in mine}
            keys = []
            for attribute in mine:
                key = attribute['key']
                if key in keys:
                    key = next(k for k in map('trait%d'.__mod__,
                                              itertools.count())
                               if k not in taken)
                    taken.add(key)
                    changes['key', attribute['key'], attribute['uuid']] = key
                keys.append(key)
            changes['attributes_list', json.dumps(
                [{a['key']: a['value']} for a in mine]),
                deployable['uuid']] = json.dumps(
                [{key: a['value']} for key, a in zip(keys, mine)])
        return changes

    def _expected(self, requests, theirs):
        """17.0.0's answers, with the differences that are expected."""
        answers = dict(zip(requests, theirs))
        converted = self._converted()

        def fix(value, uuid=None):
            if isinstance(value, list):
                return [fix(item) for item in value]
            if not isinstance(value, dict):
                return value
            uuid = value.get('uuid')
            fixed = {}
            for key, item in value.items():
                if key in ('created_at', 'updated_at') and item == 'None':
                    item = None  # a bug: an unset time is null
                for changed in ((key, item, uuid), (key, item, None)):
                    if isinstance(item, str) and changed in converted:
                        item = converted[changed]
                fixed[key] = fix(item)
            return fixed

        expected = []
        for (path, version), (status, body) in zip(requests, theirs):
            if path in VENDOR_FILTERS:
                # Either spelling finds the devices of both.
                body = {'devices': [
                    device for vendor in VENDOR_FILTERS
                    for device in answers[vendor, version][1]['devices']]}
            expected.append((status, fix(body)))
        return expected

    def test_same_bodies(self):
        requests = self._requests()
        theirs = self._their_answers(requests)
        ours = self._our_answers(requests)
        expected = self._expected(requests, theirs)
        differences = [
            '%s at %s:\n  expected %s\n  ours     %s' % (
                path, version, json.dumps(want, sort_keys=True),
                json.dumps(got, sort_keys=True))
            for (path, version), want, got in zip(
                requests, map(_comparable, expected), map(_comparable, ours))
            if want != got]
        self.assertEqual([], differences, '\n'.join(differences))

    def test_own_formats_from_2_6(self):
        profile = self.rows['device_profiles'][0]['uuid']
        deleting = next(arq for arq in self.rows['accelerator_requests']
                        if arq['state'] == 'Deleting')
        handle = next(handle for handle in self.rows['attach_handles']
                      if handle['id'] == deleting['attach_handle_id'])
        (_s, deployables), (_s, shown), (_s, arq) = self._our_answers([
            ('/v2/deployables', '2.6'),
            ('/v2/device_profiles/' + profile, '2.6'),
            ('/v2/accelerator_requests/' + deleting['uuid'], '2.6')])
        self.assertEqual([{'rc': 'FPGA'}, {'trait0': 'CUSTOM_FPGA_INTEL'},
                          {'trait1': 'CUSTOM_FPGA_REGION_1'}],
                         deployables['deployables'][0]['attributes_list'])
        self.assertEqual('compute-1_0000:5e:00.0',
                         deployables['deployables'][0]['name'])
        self.assertRegex(shown['device_profile']['created_at'],
                         r'^\d{4}-\d\d-\d\dT')
        self.assertEqual(
            (handle['attach_type'], handle['uuid'], handle['attach_info']),
            (arq['attach_handle_type'], arq['attach_handle_uuid'],
             arq['attach_handle_info']))


def _comparable(answer):
    """An answer, its lists in uuid order, its errors without prose.

    Neither release promised an order; an error's ``faultstring`` is a
    message for people.
    """
    status, body = answer

    def sort(value):
        if isinstance(value, list):
            items = [sort(item) for item in value]
            if all(isinstance(item, dict) and 'uuid' in item
                   for item in items):
                items.sort(key=lambda item: item['uuid'])
            return items
        if isinstance(value, dict):
            return {key: sort(item) for key, item in value.items()}
        return value

    if isinstance(body, dict) and 'error_message' in body:
        fault = json.loads(body['error_message'])
        fault.pop('faultstring')
        body = {'error_message': fault}
    return status, sort(body)
