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
"""schemathesis against the live API, the way its command line runs.

The API (an in-process conductor) serves on a free port, seeded with a
host's hardware, device profiles, accelerator requests and an attribute.
schemathesis' own command line (``st run``) reads the OpenAPI document
the API serves and runs its default phases (examples, coverage, fuzzing,
stateful: the document's links lead from a create to the show and the
delete of what it made) with every check: no server error, documented
statuses, content types, headers and schemas, schema-valid requests
accepted and schema-violating ones refused, 405 for undeclared methods,
and the resource checks of the stateful phase. Without authentication
(noauth) only the check that a missing token is refused is left out; it
runs against the API behind a real Keystone.

Requests ask for the microversion the document describes (``accelerator
latest``); the header is optional (a request without it is served at
2.0), and schemathesis drops it in the cases where it checks that. The
command is, with the port of the test's API::

    st run http://127.0.0.1:PORT/v2/openapi.json --checks all \
        --exclude-checks ignored_auth -H 'X-Auth-Token: admin' \
        -H 'X-Roles: admin' -H 'OpenStack-API-Version: accelerator latest'

The run is bounded and
deterministic: ``EXAMPLES`` cases an operation, from a fixed seed. Set
``CYBORG_FUZZ_EXAMPLES`` and ``CYBORG_FUZZ_SEED`` to look harder locally.
The command line is the public interface that runs the phases together;
schemathesis' Python API gives them to pytest only one at a time.
"""

import os
import subprocess
import sys
import tempfile

import pytest

from cyborg import context
from cyborg.db import api as db_api
from cyborg.tests import db_utils
from cyborg.tests.functional.api import test_clients
from cyborg.tests.functional.api import test_keystone

EXAMPLES = int(os.environ.get('CYBORG_FUZZ_EXAMPLES', '3'))
SEED = int(os.environ.get('CYBORG_FUZZ_SEED', '20261125'))

ST = os.path.join(os.path.dirname(sys.executable), 'st')

#: What every request sends: the microversion the document describes.
VERSION = 'OpenStack-API-Version: accelerator latest'

#: The check that a missing or bad token is refused.
AUTH_CHECK = 'ignored_auth'

#: schemathesis' default phases, as ``st run`` runs them.
PHASES = 'examples,coverage,fuzzing,stateful'


def run_schemathesis(test, url, headers, checks=(), exclude=(),
                     examples=EXAMPLES, phases=PHASES):
    """``st run`` against ``url``; ``test`` fails with its report.

    It fails if schemathesis finds anything.
    """
    with tempfile.TemporaryDirectory(prefix='schemathesis-') as tmp:
        command = [ST, 'run', url,
                   '--phases', phases,
                   '--checks', ','.join(checks) or 'all',
                   '--max-examples', str(examples), '--seed', str(SEED),
                   '--workers', '1', '--no-shrink',
                   '--request-timeout', '30',
                   '--report-dir', os.path.join(tmp, 'report')]
        if exclude:
            command += ['--exclude-checks', ','.join(exclude)]
        for header in headers + [VERSION]:
            command += ['-H', header]
        # The coverage phase alone is about 9,000 requests: a minute on a
        # quiet machine, four times that beside the rest of the suite.
        done = subprocess.run(command, cwd=tmp, capture_output=True,
                              text=True, timeout=600,
                              env=dict(os.environ, NO_COLOR='1'))
    test.assertEqual(0, done.returncode, done.stdout + done.stderr)
    return done.stdout


@pytest.mark.long(minutes=2)
class TestSchemathesis(test_clients.LiveTestCase):

    def setUp(self):
        super().setUp()
        ctx = context.get_admin_context()
        profiles = [db_utils.create_profile(ctx, name=name)
                    for name in ('fuzz-a', 'fuzz-b')]
        db_utils.create_arqs(ctx, profiles[0], count=2,
                             project_id=self.conf.conf.api.
                             noauth_default_project_id)
        db_api.create(ctx, 'attribute', {
            'deployable_id': self.deployable.id, 'key': 'fuzz',
            'value': 'FPGA'})

    def test_every_phase_and_check(self):
        run_schemathesis(self, self.endpoint + '/openapi.json',
                         ['X-Auth-Token: admin', 'X-Roles: admin'],
                         exclude=(AUTH_CHECK,))


class TestSchemathesisKeystone(test_keystone.KeystoneLiveTestCase):
    """The authentication checks, against a real Keystone's tokens."""

    def test_a_token_is_needed(self):
        # Each case is also sent without the token and with a bad one; a
        # few generated ones per operation show every route checks it
        # (test_keystone covers the policies).
        token = self.keystone_fixture.keystone.token('admin')
        run_schemathesis(self, self.endpoint + '/openapi.json',
                         ['X-Auth-Token: %s' % token],
                         checks=[AUTH_CHECK], examples=1, phases='fuzzing')
