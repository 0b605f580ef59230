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
"""pytest hooks for the whole suite: no skips where none are allowed.

Tests skip, saying why, when a server they need (MariaDB, PostgreSQL,
RabbitMQ), a client virtualenv or a writable PCI ``uevent`` is missing.
With ``CYBORG_TEST_NO_SKIP=1`` (``tools/run-tests.sh`` sets it in CI)
every such skip fails instead, with the reason in the failure, so a
missing part fails the run rather than passing it with fewer tests.
"""

import os

import pytest

NO_SKIP = 'CYBORG_TEST_NO_SKIP'


def pytest_runtest_makereport(item, call):
    """A skip becomes a failure before pytest reports the test.

    This runs after the unittest plugin has turned a ``SkipTest`` of a
    testtools or unittest case into pytest's skip, and before pytest
    builds the report from ``call.excinfo``.
    """
    if (os.environ.get(NO_SKIP) == '1' and call.excinfo is not None and
            call.excinfo.errisinstance(pytest.skip.Exception)):
        try:
            pytest.fail('skipped, which %s=1 forbids: %s' % (
                NO_SKIP, call.excinfo.value.msg), pytrace=False)
        except pytest.fail.Exception:
            call.excinfo = pytest.ExceptionInfo.from_current()
