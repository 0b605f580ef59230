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
"""Binds racing on a shared database: no handle shared, no patch half done.

On a SQLite file, MariaDB and PostgreSQL, whole binds in threads of
their own, as the conductor's workers run them.
"""

import time

from oslo_db.sqlalchemy import test_fixtures
from oslo_utils import uuidutils
import testtools

from cyborg.conductor import accelerator_request
from cyborg.conductor import binding
from cyborg import context
from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg import exception
from cyborg.objects import accelerator_request as arq_obj
from cyborg import states
from cyborg.tests import db_utils
from cyborg.tests.functional.conductor import test_binding
from cyborg.tests.functional.db import test_concurrency


class _BindRace:
    """Whole binds racing on a shared database share no handle."""

    THREADS = 8

    def test_handles_never_shared(self):
        ctx = context.get_admin_context()
        _, deployable, handles = db_utils.create_device_tree(
            ctx, handles=3, resource_class='FPGA',
            traits=['CUSTOM_FPGA_INTEL'])
        rp_uuid = uuidutils.generate_uuid()
        db_api.update(ctx, 'deployable', deployable.uuid,
                      {'rp_uuid': rp_uuid})
        profile = db_utils.create_profile(ctx)
        arqs = []
        for row in db_utils.create_arqs(ctx, profile, count=self.THREADS):
            started = arq_db.update_state(
                ctx, row.uuid, states.BIND_STARTED, values={
                    'hostname': 'host1', 'device_rp_uuid': rp_uuid,
                    'instance_uuid': uuidutils.generate_uuid()})
            arqs.append(arq_obj.AcceleratorRequest._from_db_object(
                ctx, started))
        deadline = time.monotonic() + 60
        # A PCI handle and no bitstream: the agent is not needed.
        results = db_utils.race(
            lambda ctx, arq: binding.bind(ctx, arq, None, deadline),
            [(arq,) for arq in arqs])
        bound = [r for r in results if r.state == states.BOUND]
        self.assertEqual(len(handles), len(bound))
        self.assertEqual({h.id for h in handles},
                         {r.attach_handle_id for r in bound})
        self.assertEqual(self.THREADS - len(handles), len(
            [r for r in results if r.state == states.BIND_FAILED]))
        self.assertEqual(len(handles), len(db_api.get_all(
            ctx, 'attach_handle', filters={'in_use': True})))

    def _race_patches(self, group):
        """Two patches racing for an ARQ of ``group``: who won, what moved.

        A second patch binds one of the first patch's ARQs while the first
        one starts moving its ARQs to BindStarted.

        :returns: the winning patch, the rows of the first patch's ARQs
            and the uuids of the binds submitted to the background.
        """
        ctx = context.get_admin_context()
        _, deployable, _ = db_utils.create_device_tree(
            ctx, handles=3, resource_class='FPGA',
            traits=['CUSTOM_FPGA_INTEL'])
        rp_uuid = uuidutils.generate_uuid()
        db_api.update(ctx, 'deployable', deployable.uuid,
                      {'rp_uuid': rp_uuid})
        arqs = db_utils.create_arqs(
            ctx, db_utils.create_profile(ctx, groups=[group]), count=3)
        submitted = test_binding.RecordingExecutor()

        def patch(arqs):
            instance = uuidutils.generate_uuid()
            return {a.uuid: {'hostname': 'host1',
                             'device_rp_uuid': rp_uuid,
                             'instance_uuid': instance} for a in arqs}

        def start(patch):
            try:
                accelerator_request.start_binds(ctx, patch, submitted)
            except exception.AcceleratorRequestInvalidState:
                return False
            return True

        first, second = patch(arqs), patch(arqs[1:2])
        with db_utils.meanwhile('UPDATE accelerator_requests',
                                start, second) as other:
            won = {'first': start(first)}
        won['second'] = other.result()
        self.assertEqual(1, sum(won.values()), won)
        winner = first if won['first'] else second
        rows = [db_api.get(ctx, 'accelerator_request', a.uuid)
                for a in arqs]
        self.assertEqual({v['instance_uuid'] for v in winner.values()},
                         {r.instance_uuid for r in rows if r.instance_uuid})
        return winner, rows, submitted.arqs

    def test_patch_all_or_nothing(self):
        """Of two patches racing for an ARQ, one wins; the other moves none.

        Whichever is refused leaves all its ARQs as they were, so every
        BindStarted ARQ is one of the winner's, with its bind submitted.
        """
        winner, rows, submitted = self._race_patches({
            'resources:FPGA': '1',
            'accel:bitstream_id': test_binding.BITSTREAM})
        self.assertEqual(sorted(winner), sorted(
            r.uuid for r in rows if r.state == states.BIND_STARTED))
        self.assertEqual(sorted(winner), sorted(submitted))

    def test_patch_bound_at_once_all_or_nothing(self):
        # Binds that need a PCI handle only: the winner's are Bound, in
        # the transaction that started them.
        winner, rows, submitted = self._race_patches({
            'resources:FPGA': '1'})
        self.assertEqual(sorted(winner), sorted(
            r.uuid for r in rows if r.state == states.BOUND))
        self.assertEqual(sorted(winner), sorted(
            r.uuid for r in rows if r.state != states.INITIAL))
        self.assertEqual([], submitted)


class TestBindRaceSQLiteFile(_BindRace,
                             test_concurrency.SQLiteFileTestCase):
    pass


class TestBindRaceMySQL(_BindRace, test_fixtures.OpportunisticDBTestMixin,
                        testtools.TestCase):
    FIXTURE = test_concurrency.MySQLFixture


class TestBindRacePostgreSQL(_BindRace,
                             test_fixtures.OpportunisticDBTestMixin,
                             testtools.TestCase):
    FIXTURE = test_concurrency.PostgreSQLFixture
