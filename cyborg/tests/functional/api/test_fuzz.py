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
"""schemathesis against the live API: no 5xx, every answer as described.

The API (noauth, an in-process conductor) serves on a free port, seeded
with a host's hardware, device profiles and accelerator requests.
schemathesis reads the OpenAPI document the API serves and sends each
operation requests made from it (at every microversion; path parameters
and the body members that name a profile or a deployable are as often as
not the uuids and names of what is seeded, so that calls reach the
resources and do not stop at 404). Every response must be no
server error, have a documented status, and match the documented schema.

Half the requests are valid, half are not (schemathesis' negative mode):
bad input must get a 4xx too. It is bounded and deterministic:
``EXAMPLES`` requests an operation, from a fixed seed. Set
``CYBORG_FUZZ_EXAMPLES`` and ``CYBORG_FUZZ_SEED`` to look harder
locally.
"""

import os

import hypothesis
from hypothesis import strategies as st
import requests
import schemathesis
from schemathesis import checks
from schemathesis import GenerationMode
from schemathesis.specs.openapi import checks as openapi_checks

from cyborg import context
from cyborg.db import api as db_api
from cyborg.tests import db_utils
from cyborg.tests.functional.api import test_clients

EXAMPLES = int(os.environ.get('CYBORG_FUZZ_EXAMPLES', '12'))
SEED = int(os.environ.get('CYBORG_FUZZ_SEED', '20261125'))

CHECKS = [checks.not_a_server_error,
          openapi_checks.status_code_conformance,
          openapi_checks.response_schema_conformance]


class TestSchemathesis(test_clients.LiveTestCase):

    def setUp(self):
        super().setUp()
        ctx = context.get_admin_context()
        profiles = [db_utils.create_profile(ctx, name=name)
                    for name in ('fuzz-a', 'fuzz-b', 'fuzz-c')]
        arqs = db_utils.create_arqs(ctx, profiles[0], count=3,
                                    project_id=self.conf.conf.api.
                                    noauth_default_project_id)
        attribute = db_api.create(ctx, 'attribute', {
            'deployable_id': self.deployable.id, 'key': 'fuzz',
            'value': 'FPGA'})
        uuids = [self.device.uuid, self.deployable.uuid, attribute.uuid]
        uuids += [p.uuid for p in profiles] + [a.uuid for a in arqs]
        self.known = {
            'uuid': uuids,
            'uuid_or_name': [p.uuid for p in profiles] +
                            [p.name for p in profiles],
        }
        # Body members that name what exists.
        self.known_members = {
            'device_profile_name': [p.name for p in profiles],
            'deployable_id': [self.deployable.id, self.deployable.uuid],
        }
        self.base_url = self.endpoint[:-len('/v2')]
        self.session = requests.Session()
        self.addCleanup(self.session.close)

    def _case(self, data, operation):
        mode = data.draw(st.sampled_from(list(GenerationMode)))
        case = data.draw(operation.as_strategy(generation_mode=mode))
        for name in list(case.path_parameters or {}):
            if name in self.known and data.draw(st.booleans()):
                case.path_parameters[name] = data.draw(
                    st.sampled_from(self.known[name]))
        if 'again' in (case.path_parameters or {}) and data.draw(
                st.booleans()):
            case.path_parameters['again'] = case.path_parameters['uuid']
        if isinstance(case.body, dict):
            for name in set(case.body) & set(self.known_members):
                if data.draw(st.booleans()):
                    case.body[name] = data.draw(
                        st.sampled_from(self.known_members[name]))
        return case

    def _fuzz(self, operation):
        @hypothesis.settings(
            max_examples=EXAMPLES, database=None,
            deadline=None, print_blob=False,
            suppress_health_check=list(hypothesis.HealthCheck))
        @hypothesis.seed(SEED)
        @hypothesis.given(data=st.data())
        def run(data):
            case = self._case(data, operation)
            case.call_and_validate(base_url=self.base_url,
                                   session=self.session, checks=CHECKS,
                                   timeout=30)
        run()

    def test_every_operation(self):
        schema = schemathesis.openapi.from_url(
            self.endpoint + '/openapi.json')
        operations = [result.ok() for result in schema.get_all_operations()]
        self.assertGreater(len(operations), 25)
        for operation in operations:
            with self.subTest(operation=operation.label):
                self._fuzz(operation)
