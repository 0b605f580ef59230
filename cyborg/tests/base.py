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
"""Base test case: isolated configuration, objects registered."""

import fixtures
import hypothesis
from oslo_config import fixture as config_fixture
import testtools

from cyborg.conductor import rpcapi
import cyborg.conf
from cyborg import context
from cyborg import objects
from cyborg.tests import fixtures as cyborg_fixtures

objects.register_all()


def property_settings(max_examples):
    """hypothesis settings for the suite's property tests.

    Deterministic (the same examples every run, no example database), at
    most ``max_examples`` examples, and no deadline: how long an example
    takes depends on the machine's load, not on the code under test.
    """
    return hypothesis.settings(max_examples=max_examples, derandomize=True,
                               database=None, deadline=None,
                               print_blob=False)


class TestCase(testtools.TestCase):
    """Every test gets its own configuration; DB tests set USES_DB."""

    USES_DB = False

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(
            config_fixture.Config(cyborg.conf.CONF))
        # What a service keeps on disk (an agent's loaded bitstreams).
        self.conf.config(state_path=self.useFixture(fixtures.TempDir()).path)
        self.context = context.RequestContext(
            user_id='fake-user', project_id='fake-project',
            roles=['member', 'reader'])
        self.admin_context = context.get_admin_context()
        self.useFixture(cyborg_fixtures.PrivsepInProcess())
        if self.USES_DB:
            self.useFixture(cyborg_fixtures.Database())


class ConductorTestCase(TestCase):
    """A conductor serving on fake:// in this process; ``api`` calls it."""

    USES_DB = True

    def setUp(self):
        super().setUp()
        self.useFixture(cyborg_fixtures.RPC())
        self.conductor = self.useFixture(cyborg_fixtures.Conductor())
        self.api = rpcapi.ConductorAPI()
