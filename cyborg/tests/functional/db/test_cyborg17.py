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
"""Upgrading a database that openstack-cyborg 17.0.0 made and used.

openstack-cyborg 17.0.0 runs from the virtualenv that
``tools/setup-client-venvs.sh`` makes (``tools/run-tests.sh`` runs it): its
own ``cyborg-dbsync`` builds a fresh database (MariaDB from oslo.db's
provisioning, or an SQLite file) and ``cyborg17_seed.py`` fills it through
its own objects. Then our ``cyborg-status upgrade check`` and
``cyborg-dbsync upgrade`` run on it as an operator runs them, and our API
reads every row back.
"""

import json
import os
import pathlib
import subprocess
import sys

import fixtures
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
import sqlalchemy as sa
import webob

from cyborg import context
from cyborg.db import api as db_api
from cyborg.db import cyborg17
from cyborg.db import migration
from cyborg import exception
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import openstack_fixtures

VENV = openstack_fixtures.VENVS / 'openstack-cyborg-17.0.0'
SEED = pathlib.Path(__file__).with_name('cyborg17_seed.py')
CHECK = 'openstack-cyborg 17.0.0 database'
SUCCESS, WARNING, FAILURE = 0, 1, 2
# Their table -> ours.
TABLES = {'device_profiles': 'device_profiles', 'devices': 'devices',
          'deployables': 'deployables', 'attributes': 'attributes',
          'controlpath_ids': 'controlpath_ids',
          'attach_handles': 'attach_handles',
          'extended_accelerator_requests': 'accelerator_requests'}


class _Upgrade:
    """Helpers for a test case with a database URL in ``self.url``."""

    def setUp(self):
        super().setUp()
        if not (VENV / 'bin' / 'cyborg-dbsync').exists():
            self.skipTest('%s is missing: run tools/setup-client-venvs.sh'
                          % VENV)
        self.state = self.useFixture(fixtures.TempDir()).path
        self.conf_file = os.path.join(self.state, 'cyborg.conf')
        self.env = {k: v for k, v in os.environ.items()
                    if k != 'PYTHONPATH'}

    def _write_conf(self, url):
        self.url = url
        self.engine = sa.create_engine(url)
        self.addCleanup(self.engine.dispose)
        with open(self.conf_file, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\ntransport_url = fake://\n'
                    '[database]\nconnection = %s\n' % (self.state, url))

    def _run(self, argv, check=True):
        result = subprocess.run(argv, capture_output=True, text=True,
                                env=self.env, cwd=self.state)
        if check and result.returncode:
            self.fail('%s exited %d:\n%s\n%s' % (
                argv, result.returncode, result.stdout, result.stderr))
        return result

    def theirs(self, *args):
        """openstack-cyborg 17.0.0's cyborg-dbsync."""
        return self._run([str(VENV / 'bin' / 'cyborg-dbsync'),
                          '--config-file', self.conf_file, *args])

    def seed(self, *args):
        """Fill the database through 17.0.0's objects; what they read.

        :param args: given to ``cyborg17_seed.py`` after the config file.
        """
        return json.loads(self._run([
            str(VENV / 'bin' / 'python'), str(SEED), self.conf_file,
            *args]).stdout)

    def dbsync(self, *args, check=True):
        """Our cyborg-dbsync."""
        return self._run([
            sys.executable, '-c', 'import sys; from cyborg.cmd import '
            'dbsync; sys.exit(dbsync.main())', '--config-file', self.conf_file,
            *args], check=check)

    def upgrade_check(self):
        """Our cyborg-status upgrade check: (result, details) of ours."""
        result = self._run([
            sys.executable, '-c', 'import sys; from cyborg.cmd import '
            'status; sys.exit(status.main())', '--config-file', self.conf_file,
            'upgrade', 'check', '--json'], check=False)
        [check] = [c for c in json.loads(result.stdout)['checks']
                   if c['check'] == CHECK]
        return check['result'], check['details']

    def tables(self):
        return set(sa.inspect(self.engine).get_table_names())

    def dump(self):
        """Every row of every table, as the database holds it."""
        with self.engine.connect() as connection:
            return {name: [tuple(row) for row in connection.execute(
                sa.text('SELECT * FROM %s ORDER BY 1' % name))]
                for name in sorted(self.tables())}

    def timestamps(self, tables):
        """Table -> {uuid: (created_at, updated_at)}."""
        with self.engine.connect() as connection:
            return {table: {row[0]: tuple(row[1:]) for row in
                            connection.execute(sa.text(
                                'SELECT uuid, created_at, updated_at '
                                'FROM %s' % table))}
                    for table in tables}

    def carried(self, theirs, ours, skip=(), only=None):
        """Each of ``theirs`` has a row of ``ours`` with its values.

        The values compared are those of ``only``, or all but ``skip``.
        """
        ours = {row['uuid']: row for row in ours}
        self.assertEqual(sorted(row['uuid'] for row in theirs),
                         sorted(ours))
        for row in theirs:
            expected = {k: v for k, v in row.items()
                        if k not in skip and (only is None or k in only)}
            self.assertEqual(
                expected, {k: ours[row['uuid']][k] for k in expected},
                row['uuid'])

    def serve(self):
        """Our conductor, on fake://, using the converted database."""
        facade = enginefacade.transaction_context()
        facade.configure(connection=self.url)
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_api.main_context_manager, facade))
        self.addCleanup(facade.writer.get_engine().dispose)
        self.useFixture(cyborg_fixtures.RPC())
        return self.useFixture(cyborg_fixtures.Conductor())

    def assert_read_back(self, theirs):
        """Our API and database show every row of ``theirs`` as it was."""
        self.serve()
        app = self.useFixture(cyborg_fixtures.API()).app

        def get(collection, key=None):
            request = webob.Request.blank('/v2/' + collection)
            request.headers['OpenStack-API-Version'] = 'accelerator latest'
            response = request.get_response(app)
            self.assertEqual(200, response.status_int, response.body)
            return response.json[key or collection]

        profiles = get('device_profiles')
        self.carried(theirs['device_profiles'], profiles)
        self.assertTrue(all(profile['enabled'] for profile in profiles))
        devices = [dict(device, status='maintaining')
                   if device['device_state'] == 'cleaning' else device
                   for device in theirs['devices']]
        self.carried(devices, get('devices'), skip=('id', 'device_state'))
        # Each is stored as our drivers name it (<host>_ goes) and shown
        # as 17.0.0 named it, by its provider's name.
        self.assertEqual(
            ['0000:5e:00.0', '0000:5e:00.0_region1', '0000:3b:00.0'],
            [row.name for row in db_api.get_all(
                context.get_admin_context(), 'deployable')])
        self.carried(theirs['deployables'], get('deployables'),
                     skip=('id',))
        self.carried(theirs['attributes'], get('attributes'))
        handles = {h['id']: h['uuid'] for h in theirs['attach_handles']}
        arqs = get('accelerator_requests', 'arqs')
        self.carried(theirs['accelerator_requests'], arqs, skip=(
            'attach_handle_id', 'deployable_id', 'device_profile_group',
            # 17.0.0 shows the handle of a Bound ARQ only.
            'attach_handle_type', 'attach_handle_info'))
        self.carried(
            [dict(arq, attach_handle_uuid=handles[arq['attach_handle_id']])
             for arq in theirs['accelerator_requests']
             if arq['state'] == 'Bound'],
            [arq for arq in arqs if arq['state'] == 'Bound'],
            skip=('attach_handle_id', 'deployable_id',
                  'device_profile_group'))
        # What the API does not show, from our database layer.
        ctx = context.get_admin_context()

        for noun, key, fields in (
                ('accelerator_request', 'accelerator_requests',
                 ('uuid', 'attach_handle_id', 'deployable_id',
                  'device_profile_group')),
                ('attach_handle', 'attach_handles', (
                    'id', 'uuid', 'deployable_id', 'cpid_id', 'attach_type',
                    'in_use', 'attach_info')),
                ('controlpath_id', 'controlpath_ids', (
                    'id', 'uuid', 'device_id', 'cpid_type', 'cpid_info')),
                ('device', 'devices', ('id', 'uuid')),
                ('deployable', 'deployables', ('id', 'uuid'))):
            self.carried(theirs[key], [
                {f: getattr(row, f) for f in fields}
                for row in db_api.get_all(ctx, noun)], only=fields)

        # A changed profile is listed as it is now.
        request = webob.Request.blank(
            '/v2/device_profiles/%s' % profiles[0]['uuid'], method='PATCH')
        request.headers['OpenStack-API-Version'] = 'accelerator latest'
        request.json = [{'op': 'replace', 'path': '/description',
                         'value': 'changed'}]
        self.assertEqual(200, request.get_response(app).status_int)
        self.assertEqual('changed',
                         get('device_profiles')[0]['description'])


class OnMariaDB(_Upgrade, test_fixtures.OpportunisticDBTestMixin):
    """A fresh database of 17.0.0 on MariaDB, which its migrations made."""

    FIXTURE = test_fixtures.MySQLOpportunisticFixture

    def setUp(self):
        super().setUp()
        engine = self._get_default_provisioned_db().engine
        self._write_conf(engine.url.render_as_string(hide_password=False))
        self.theirs('upgrade')


class TestUpgradeMariaDB(OnMariaDB, base.TestCase):
    """The case that matters: 17.0.0 migrates only MySQL and MariaDB."""

    def test_upgrade_carries_everything(self):
        theirs = self.seed()
        stamps = self.timestamps(TABLES)

        code, details = self.upgrade_check()
        self.assertEqual(WARNING, code, details)
        for part in ('at revision %s' % cyborg17.REVISION,
                     '3 device profiles', '2 devices', '3 deployables',
                     '6 attributes', '2 controlpath ids',
                     '5 attach handles', '7 accelerator requests (1 '
                     'BindFailed, 1 BindStarted, 2 Bound, 1 Deleting, '
                     '1 Initial, 1 Unbound)',
                     'will convert it', 'become maintaining'):
            self.assertIn(part, details)
        self.assertIn(theirs['devices'][1]['uuid'], details)
        self.assertNotIn(theirs['devices'][0]['uuid'], details)

        out = self.dbsync('upgrade').stdout
        self.assertIn('Converted: A database of openstack-cyborg 17.0.0, '
                      'at revision %s' % cyborg17.REVISION, out)
        self.assertIn('Warning: Devices that openstack-cyborg 17.0.0 had '
                      'not finished cleaning', out)
        self.assertEqual(migration.head(),
                         migration.version(engine=self.engine))
        self.assertEqual(set(), {t for t in self.tables()
                                 if t.startswith(cyborg17.PREFIX)} |
                         (self.tables() & {'extended_accelerator_requests',
                                           'quota_usages', 'reservations'}))
        self.assertEqual(
            {TABLES[table]: rows for table, rows in stamps.items()},
            self.timestamps(TABLES.values()))
        self.assertEqual((SUCCESS, 'No database of openstack-cyborg 17.0.0 '
                          'to convert.'), self.upgrade_check())

        # Running it again changes nothing.
        before = self.dump()
        self.assertNotIn('Converted', self.dbsync('upgrade').stdout)
        self.assertEqual(before, self.dump())

        self.assert_read_back(theirs)

    def test_finishes_a_conversion_that_stopped(self):
        theirs = self.seed()
        # Stop after the copy, with one table set aside dropped: the
        # steps before it are found done, the rest of drop() is done.
        with self.engine.begin() as connection:
            cyborg17.set_aside(connection)
        with self.engine.begin() as connection:
            migration._build_tables_to_copy_into(connection)
        with self.engine.begin() as connection:
            cyborg17.copy(connection)
        with self.engine.begin() as connection:
            connection.exec_driver_sql(
                'DROP TABLE %sextended_accelerator_requests'
                % cyborg17.PREFIX)

        code, details = self.upgrade_check()
        self.assertEqual(SUCCESS, code, details)
        self.assertIn('whose conversion stopped midway', details)
        self.assertIn('Converted', self.dbsync('upgrade').stdout)
        self.assertFalse({t for t in self.tables()
                          if t.startswith(cyborg17.PREFIX)})
        self.assert_read_back(theirs)

    def test_refuses_rows_it_cannot_convert_and_changes_nothing(self):
        theirs = self.seed()
        [bound, _other] = [a['uuid'] for a in theirs['accelerator_requests']
                           if a['state'] == 'Bound']
        with self.engine.begin() as connection:
            connection.execute(sa.text(
                'UPDATE extended_accelerator_requests SET '
                'device_profile_group_id = 7 WHERE uuid = :uuid'),
                {'uuid': bound})
            connection.execute(sa.text(
                "UPDATE device_profiles SET profile_json = '{\"groups\": 1}'"
                " WHERE name = 'unused-dp'"))
        before = self.dump()

        code, details = self.upgrade_check()
        self.assertEqual(FAILURE, code)
        result = self.dbsync('upgrade', check=False)
        self.assertEqual(1, result.returncode)
        self.assertNotIn('Traceback', result.stderr)
        unused = [p['uuid'] for p in theirs['device_profiles']
                  if p['name'] == 'unused-dp']
        for text in (details, result.stderr):
            self.assertIn('will refuse' if text is details
                          else 'cyborg-dbsync: The database of '
                          'openstack-cyborg 17.0.0 cannot be converted',
                          text)
            self.assertIn('Accelerator requests whose device profile or '
                          'profile group does not exist: %s' % bound, text)
            self.assertIn('Device profiles whose profile_json holds no '
                          'list of groups of strings: %s' % unused[0], text)
        self.assertEqual(before, self.dump())


class TestUpgradeSQLite(_Upgrade, base.TestCase):
    """A database that 17.0.0's ``create_schema`` made on SQLite.

    Its migrations fail on SQLite; ``create_schema`` builds the tables
    from its models and records its newest revision.
    """

    def setUp(self):
        super().setUp()
        self._write_conf('sqlite:///%s/cyborg.sqlite' % self.state)
        self.theirs('create_schema')

    def test_recognised_by_its_tables_without_a_revision(self):
        theirs = self.seed()
        # As its models' create_all() leaves a database, where the
        # revision was not recorded (or was recorded elsewhere).
        with self.engine.begin() as connection:
            connection.exec_driver_sql('DROP TABLE alembic_version')
        self.assertIsNone(migration.version(engine=self.engine))
        code, details = self.upgrade_check()
        self.assertEqual(WARNING, code, details)
        self.assertIn('recognised by its tables', details)
        self.assertIn('Converted: A database of openstack-cyborg 17.0.0, '
                      'recognised by its tables',
                      self.dbsync('upgrade').stdout)
        self.assert_read_back(theirs)

    def test_deployables_renamed_as_our_drivers_report_them(self):
        self.seed()
        with self.engine.begin() as connection:
            # The GPU offers one vGPU type, with 17.0.0's marks; the FPGA
            # card gets a second top-level deployable.
            connection.execute(sa.text(
                "UPDATE attach_handles SET attach_type = 'MDEV', "
                "attach_info = :info WHERE attach_info LIKE '%3b%'"),
                {'info': json.dumps({
                    'domain': '0000', 'bus': '3b', 'device': '00',
                    'function': '0', 'asked_type': 'nvidia-222',
                    'vgpu_mark': 'nvidia-222_0'})})
            connection.execute(sa.text(
                "INSERT INTO deployables (uuid, name, num_accelerators, "
                "device_id) SELECT :uuid, 'compute-1_0000:5e:00.4', 1, "
                "device_id FROM deployables WHERE name = :name"),
                {'uuid': 'd0d0d0d0-0000-4000-8000-000000000004',
                 'name': 'compute-1_0000:5e:00.0'})
        code, details = self.upgrade_check()
        self.assertNotIn('d0d0d0d0-0000-4000-8000-000000000004', details)
        self.dbsync('upgrade')
        # A GPU's vGPU deployable is named after the GPU, as our driver
        # names that of a GPU offering one type.
        with self.engine.connect() as connection:
            self.assertEqual(
                ['0000:3b:00.0', '0000:5e:00.0',
                 '0000:5e:00.0_region1', '0000:5e:00.4'],
                sorted(connection.execute(sa.text(
                    'SELECT name FROM deployables')).scalars()))
            infos = [json.loads(info) for info in connection.execute(
                sa.text("SELECT attach_info FROM attach_handles WHERE "
                        "attach_type = 'MDEV'")).scalars()]
        self.assertEqual(2, len(infos))
        self.assertEqual([{'domain': '0000', 'bus': '3b', 'device': '00',
                           'function': '0', 'asked_type': 'nvidia-222'}] * 2,
                         infos)

    def test_revisions_it_does_not_convert(self):
        before = self.dump()
        for revision, says in (
                ('a35b4295a0e5', 'older than 17.0.0: upgrade it to '
                 'b47c8f2d1e3a with the "cyborg-dbsync upgrade" of '
                 'openstack-cyborg 17.0.0 first'),
                ('0123456789ab', 'at revision 0123456789ab, which is not '
                 'one of openstack-cyborg')):
            with self.engine.begin() as connection:
                connection.execute(sa.text(
                    'UPDATE alembic_version SET version_num = :v'),
                    {'v': revision})
            error = self.assertRaises(exception.DatabaseNotConvertible,
                                      migration.upgrade, engine=self.engine)
            self.assertIn(says, str(error))
        # As an operator sees the last one:
        code, details = self.upgrade_check()
        self.assertEqual(FAILURE, code)
        self.assertIn(says, details)
        result = self.dbsync('upgrade', check=False)
        self.assertEqual(1, result.returncode)
        self.assertIn(says, result.stderr)
        self.assertNotIn('Traceback', result.stderr)
        with self.engine.begin() as connection:
            connection.execute(sa.text(
                'UPDATE alembic_version SET version_num = :v'),
                {'v': cyborg17.REVISION})
        self.assertEqual(before, self.dump())
        error = self.assertRaises(exception.DatabaseNotConvertible,
                                  migration.upgrade, '0001',
                                  engine=self.engine)
        self.assertIn('ask for that revision or a later one', str(error))
        self.assertEqual(before, self.dump())


class TestRefusedOnPostgreSQL(test_fixtures.OpportunisticDBTestMixin,
                              base.TestCase):
    """17.0.0 cannot build its schema on PostgreSQL: nothing to convert."""

    FIXTURE = test_fixtures.PostgresqlOpportunisticFixture

    def test_refused(self):
        engine = self._get_default_provisioned_db().engine
        with engine.begin() as connection:
            connection.exec_driver_sql(
                'CREATE TABLE extended_accelerator_requests (id INTEGER)')
        error = self.assertRaises(exception.DatabaseNotConvertible,
                                  migration.upgrade, engine=engine)
        self.assertIn('cannot build its schema on postgresql', str(error))
        self.assertEqual(['extended_accelerator_requests'],
                         sa.inspect(engine).get_table_names())
