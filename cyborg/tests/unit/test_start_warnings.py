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
"""A service that starts with a default configuration prints no warning.

A library's warning at start (oslo.db's ``NotSupportedWarning`` about an
option it does not know, for one) is noise an operator can do nothing
about. The start-up runs in a fresh interpreter, with Python's default
warning filters, as a console script would.
"""

import os
import subprocess  # nosec B404
import sys
import tempfile

import testtools

from cyborg.db import api as db_api

#: What cyborg-api and cyborg-conductor do before they serve: the entry
#: points' process choices, the configuration, the database engine.
START = '''
import sys
import cyborg.cmd
from cyborg import startup
from cyborg.db import api
startup.prepare_server("cyborg-api", ["cyborg-api", "--config-file",
                                      sys.argv[1]])
api.get_engine()
'''


class TestStartWarnings(testtools.TestCase):

    def test_no_library_warning_at_start(self):
        with tempfile.TemporaryDirectory() as state:
            conf = os.path.join(state, 'cyborg.conf')
            with open(conf, 'w') as f:
                f.write('[DEFAULT]\nstate_path = %s\n' % state)
            env = {k: v for k, v in os.environ.items()
                   if k != 'PYTHONWARNINGS'}
            done = subprocess.run(  # nosec B603
                [sys.executable, '-c', START, conf], capture_output=True,
                text=True, check=True, env=env)
        self.assertNotIn('Warning', done.stderr)

    def test_facade_gets_only_oslo_db_options(self):
        # The replaced service's mysql_engine is registered (and ignored)
        # in [database]; oslo.db would warn about it.
        options = db_api.facade_options(
            {'connection': 'mysql+pymysql://db/cyborg',
             'mysql_engine': 'InnoDB', 'max_retries': 3})
        self.assertEqual({'connection': 'mysql+pymysql://db/cyborg',
                          'max_retries': 3}, options)
