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
"""Cyborg's tests.

Where the database servers of the functional tests are: oslo.db's
provisioning reads ``OS_TEST_DBAPI_ADMIN_CONNECTION`` once, when it is
first imported, so the default is set here, before any test module can
import it; when it is unset, the servers that run on the development and
CI machines are used.
"""

import os

from cyborg.common import process

# What the entry points choose for their processes, chosen for the tests'
# (before a test module imports a library that looks for eventlet).
process.use_native_threads()

os.environ.setdefault(
    'OS_TEST_DBAPI_ADMIN_CONNECTION',
    'sqlite://;'
    'mysql+pymysql://root@127.0.0.1:3306/;'
    'postgresql+psycopg2://postgres@127.0.0.1:5432/postgres')
