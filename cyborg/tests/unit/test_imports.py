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
"""What importing Cyborg's modules does to a process, and what it loads.

Each check runs in a fresh interpreter: the test process has imported
everything already.
"""

import subprocess  # nosec B404
import sys

import testtools


def _run(code):
    done = subprocess.run([sys.executable, '-c', code],  # nosec B603
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


class TestImports(testtools.TestCase):

    def test_import_cyborg_only_defines_names(self):
        # No eventlet marker, no oslo.service backend chosen: a program
        # that imports Cyborg's modules makes its own choices.
        self.assertEqual('False False', _run(
            'import sys, cyborg; '
            'print("eventlet" in sys.modules, "oslo_service" in sys.modules)'))

    def test_entry_points_choose_native_threads(self):
        for module in ('cyborg.cmd', 'cyborg.wsgi', 'cyborg.api.wsgi_app'):
            self.assertEqual('None BackendType.THREADING', _run(
                'import sys, %s; from oslo_service import backend; '
                'print(sys.modules["eventlet"], backend.get_backend_type())'
                % module), module)

    def test_the_agent_loads_no_database_code(self):
        # The agent's RPC clients (of the conductor among them) and its
        # report objects: no SQLAlchemy, no oslo.db engine facade.
        self.assertEqual('[]', _run(
            'import sys, cyborg.agent.service, cyborg.conductor.rpcapi; '
            'print(sorted(m for m in sys.modules if m.split(".")[0] == '
            '"sqlalchemy" or m.startswith("oslo_db.sqlalchemy.engine")))'))
