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
"""Runs the gabbi YAML files under gabbits/ with pytest."""

import os

from gabbi import driver
from gabbi.driver import test_pytest  # noqa: F401 (pytest collects it)
import pytest

from cyborg.tests.functional.api import gabbi_fixtures

TESTS_DIR = os.path.join(os.path.dirname(__file__), 'gabbits')

# A YAML file's tests run in order, each after its fixtures' start: one
# pytest-xdist worker runs them all (tools/run-tests.sh: --dist loadgroup).
pytestmark = pytest.mark.xdist_group('gabbi')


def pytest_generate_tests(metafunc):
    driver.py_test_generator(
        TESTS_DIR, intercept=gabbi_fixtures.setup_app,
        fixture_module=gabbi_fixtures, metafunc=metafunc,
        test_loader_name=__name__)
