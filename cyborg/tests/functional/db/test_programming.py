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
"""Programming marks against claims and each other, on real engines.

An FPGA region with one handle of its own and a function below it with
two. Programmings racing on the region: one starts. A claim of the
function's handle while a programming starts, and a programming starting
while a claim is made: the second waits for the first and is refused,
on SQLite (a file), MariaDB and PostgreSQL alike.
"""

from oslo_db.sqlalchemy import test_fixtures
from oslo_utils import uuidutils
import testtools

from cyborg import context
from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg.db import programming
from cyborg import exception
from cyborg import states
from cyborg.tests import db_utils
from cyborg.tests.functional.db import test_concurrency


class _ProgrammingRace:

    THREADS = 6

    def setUp(self):
        super().setUp()
        self.ctx = context.get_admin_context()
        self.profile = db_utils.create_profile(self.ctx)
        device, self.region, _ = db_utils.create_device_tree(
            self.ctx, handles=1, traits=['CUSTOM_FPGA_INTEL',
                                         'CUSTOM_FPGA_FUNCTION_ID_AB12'])
        self.function = db_api.create(self.ctx, 'deployable', {
            'name': 'region-vf', 'num_accelerators': 2,
            'device_id': device.id, 'parent_id': self.region.id,
            'root_id': self.region.id})
        # MariaDB checks the tree's keys row by row as the schema fixture
        # empties the table.
        self.addCleanup(db_api.update, self.ctx, 'deployable',
                        self.function.uuid, {'parent_id': None,
                                             'root_id': None})
        cpid = db_api.get_all(self.ctx, 'controlpath_id')[0]
        for vf in (2, 3):
            db_api.create(self.ctx, 'attach_handle', {
                'deployable_id': self.function.id, 'cpid_id': cpid.id,
                'attach_type': 'PCI', 'attach_info': {
                    'domain': '0000', 'bus': '5e', 'device': '00',
                    'function': str(vf)}})

    def _arq(self):
        arq, = db_utils.create_arqs(self.ctx, self.profile)
        return arq_db.update_state(
            self.ctx, arq.uuid, states.BIND_STARTED,
            values={'hostname': 'host1',
                    'instance_uuid': uuidutils.generate_uuid()})

    def _claim(self, arq):
        try:
            return arq_db.claim_handle(context.get_admin_context(), arq.uuid,
                                       self.function.id, finish=True)
        except exception.CyborgException as e:
            return e

    def _start(self):
        try:
            return programming.start(context.get_admin_context(),
                                     self.region.id)
        except exception.CyborgException as e:
            return e

    def _in_use(self):
        return db_api.get_all(self.ctx, 'attach_handle',
                              filters={'in_use': True})

    def _marked(self):
        return programming.being_programmed(
            self.ctx, [self.region.id, self.function.id])

    def test_one_programming_at_once(self):
        results = db_utils.race(
            lambda ctx: programming.start(ctx, self.region.id),
            [()] * self.THREADS)
        started = [r for r in results if not isinstance(r, Exception)]
        self.assertEqual([[self.region.id, self.function.id]], started)
        self.assertEqual({exception.DeployableProgramming},
                         {type(r) for r in results if r not in started})
        self.assertEqual({self.region.id, self.function.id},
                         set(self._marked()))
        # The function trait went with the mark.
        self.assertEqual(['CUSTOM_FPGA_INTEL'], [
            a.value for a in db_api.get_all(
                self.ctx, 'attribute',
                filters={'deployable_id': self.region.id})
            if a.key.startswith('trait')])
        programming.finish(self.ctx, self.region.id, bitstream_id=None)
        self.assertEqual({}, self._marked())

    def test_claim_while_programming_starts_is_refused(self):
        arq = self._arq()
        with db_utils.meanwhile('UPDATE deployables', self._claim,
                                arq) as claim:
            started = self._start()
        self.assertEqual([self.region.id, self.function.id], started)
        self.assertIsInstance(claim.result(), exception.DeployableProgramming)
        self.assertEqual([], self._in_use())
        self.assertEqual(states.BIND_STARTED, db_api.get(
            self.ctx, 'accelerator_request', arq.uuid).state)

    def test_programming_while_a_claim_is_made_is_refused(self):
        arq = self._arq()
        with db_utils.meanwhile('UPDATE attach_handles',
                                self._start) as start:
            claimed = self._claim(arq)
        self.assertTrue(claimed.bound)
        self.assertIsInstance(start.result(), exception.ObjectInUse)
        self.assertEqual({}, self._marked())
        self.assertEqual(1, len(self._in_use()))


class TestProgrammingRaceSQLiteFile(_ProgrammingRace,
                                    test_concurrency.SQLiteFileTestCase):
    pass


class TestProgrammingRaceMySQL(_ProgrammingRace,
                               test_fixtures.OpportunisticDBTestMixin,
                               testtools.TestCase):
    FIXTURE = test_concurrency.MySQLFixture


class TestProgrammingRacePostgreSQL(_ProgrammingRace,
                                    test_fixtures.OpportunisticDBTestMixin,
                                    testtools.TestCase):
    FIXTURE = test_concurrency.PostgreSQLFixture
