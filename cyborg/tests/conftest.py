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
"""pytest hooks for the whole suite: no skips where none are allowed, a
RabbitMQ virtual host for each pytest-xdist worker, each test process's
databases migrated once, and the longest tests first.

Tests skip, saying why, when a server they need (MariaDB, PostgreSQL,
RabbitMQ), a client virtualenv or a writable PCI ``uevent`` is missing.
With ``CYBORG_TEST_NO_SKIP=1`` (``tools/run-tests.sh`` sets it in CI)
every such skip fails instead, with the reason in the failure, so a
missing part fails the run rather than passing it with fewer tests.
"""

import os
import urllib.parse

from oslo_db.sqlalchemy import test_fixtures
import pytest

RABBIT = 'CYBORG_TEST_RABBIT_URL'

NO_SKIP = 'CYBORG_TEST_NO_SKIP'


#: The mark of a test (or class) that takes a minute or more; its
#: argument, if any, is about how many minutes it (or its
#: ``xdist_group``) takes.
LONG = 'long'


def pytest_configure(config):
    """Each pytest-xdist worker gets a virtual host of the run's own.

    RabbitMQ names queues after RPC topics, whatever the exchange, so two
    tests on one virtual host at once would answer each other's calls.
    ``tools/run-tests.sh`` makes one virtual host for the run; tests that
    need a broker of their own make one per test.
    """
    config.addinivalue_line(
        'markers', '%s(minutes=1): takes a minute or more; runs before the '
        'others, the longest first' % LONG)
    worker = os.environ.get('PYTEST_XDIST_WORKER')
    if not worker or not os.environ.get(RABBIT):
        return
    url = urllib.parse.urlsplit(os.environ[RABBIT])
    vhost = '%s-%s' % (url.path.lstrip('/') or 'cyborg-test', worker)
    os.environ[RABBIT] = url._replace(path='/' + vhost).geturl()
    # Imported once the variable is set: it is read at import.
    from cyborg.tests import functional
    if (functional.rabbitmqctl('add_vhost', vhost) or
            functional.rabbitmqctl('set_permissions', '-p', vhost, 'guest',
                                   '.*', '.*', '.*')):
        raise pytest.UsageError('cannot make the RabbitMQ virtual host %s '
                                'of worker %s' % (vhost, worker))
    config.add_cleanup(lambda: functional.rabbitmqctl('delete_vhost',
                                                      vhost))


def pytest_collection_modifyitems(config, items):
    """The tests marked ``long`` first, the longest first, then the others.

    pytest-xdist hands the tests (an ``xdist_group`` at once) to its
    workers in this order: a long test started last would keep one
    worker busy while the others sit idle. Started first, the short tests
    fill the other workers meanwhile, and the run ends sooner.
    """
    items.sort(key=_minutes, reverse=True)
    _short_behind_the_first(
        items, int(os.environ.get('PYTEST_XDIST_WORKER_COUNT', '0')))


def _minutes(item):
    mark = item.get_closest_marker(LONG)
    return 0 if mark is None else mark.kwargs.get('minutes', 1)


def _unit(item):
    """What pytest-xdist's loadgroup hands a worker at once."""
    mark = item.get_closest_marker('xdist_group')
    if mark is None:
        return item.nodeid
    return mark.kwargs.get('name', mark.args[0] if mark.args else None)


def _short_behind_the_first(items, workers):
    """Short tests as the second unit of each worker.

    loadgroup hands the units (a test, or an ``xdist_group``) out the
    largest first, then in this order; each worker gets two at the start,
    and another each time it finishes a test, so the second waits for the
    first. Behind the longest, a long unit would wait many minutes while
    other workers run out of work.
    """
    sizes, first_item = {}, {}
    for index, item in enumerate(items):
        sizes[_unit(item)] = sizes.get(_unit(item), 0) + 1
        first_item.setdefault(_unit(item), index)
    queue = sorted(sizes, key=lambda unit: -sizes[unit])
    started = [first_item[unit] for unit in queue[:workers]
               if sizes[unit] == 1]
    if len(queue) <= workers or sizes[queue[workers]] > 1 or not started:
        return
    after = max(started)
    short = [item for item in items[after + 1:]
             if _minutes(item) == 0 and sizes[_unit(item)] == 1][:workers]
    for item in short:
        items.remove(item)
    items[after + 1:after + 1] = short


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


@pytest.fixture(scope='session')
def _kept_databases():
    """The provisioned databases a test process keeps until it ends.

    oslo.db's opportunistic fixtures create, migrate and drop a database
    for every test unless something holds it across tests (testresources'
    optimising suite does, under testr). This holds it: a database whose
    fixture resets its data after each test (``ResetsData``) is created
    and migrated once per test process.
    """
    kept = {}
    yield kept
    for manager, resource in reversed(list(kept.items())):
        manager.finishedWith(resource)


@pytest.fixture(autouse=True)
def _keep_database(request):
    test = request.instance
    if (isinstance(test, test_fixtures.OpportunisticDBTestMixin) and
            issubclass(test.FIXTURE, test_fixtures.ResetsData)):
        kept = request.getfixturevalue('_kept_databases')
        for _name, manager in test.resources:
            if manager not in kept:
                kept[manager] = manager.getResource()
