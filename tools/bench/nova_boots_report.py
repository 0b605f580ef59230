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
"""The figures of tools/bench/nova_boots.py: Nova's logs read, summed up,
judged against the goal and rendered as a table.

Pure functions of text and numbers, so that a unit test can check them.
"""

import datetime
import math
import re

#: The services, in the order they run and appear in the table.
SERVICES = (('existing', 'openstack-cyborg 17.0.0'), ('ours', 'Cyborg'))
#: What ours may add to a boot, as a share of what 17.0.0 adds.
GOAL_SHARE = 0.1

# oslo.log's default format starts with the local time to the millisecond.
_STAMP = r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) '
_UUID = r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
#: nova-conductor, as it asks Cyborg to create the ARQs of a server.
CREATE = re.compile(_STAMP + r'.*Calling Cyborg to get ARQs\. .*instance=('
                    + _UUID + ')')
#: nova-api, as Cyborg's bound event for one ARQ of a server arrives:
#: passed on to the server's compute host, or dropped because the
#: conductor has not given the server a host yet (a bind done before
#: nova-compute is asked to build; nova-compute then finds the ARQ bound
#: when it asks Cyborg).
BOUND = re.compile(
    _STAMP + r'.*(?:Creating event accelerator-request-bound:\S+ for '
    r'instance (' + _UUID + r')|Unable to find a host for instance (' +
    _UUID + r')\. Dropping event accelerator-request-bound)')


def _time(stamp):
    return datetime.datetime.strptime(stamp, '%Y-%m-%d %H:%M:%S.%f')


def cyborg_waits(conductor_log, api_log):
    """Seconds from create-ARQs to the last bound event, per server.

    :param conductor_log: nova-conductor's log lines (DEBUG).
    :param api_log: nova-api's log lines (INFO).
    :returns: ``{server uuid: seconds}`` for each server both logs name:
        from the first "Calling Cyborg to get ARQs" for it (a reschedule
        asks again) to the last bound event Nova's API took for it.
    """
    created, bound = {}, {}
    for line in conductor_log:
        found = CREATE.match(line)
        if found:
            created.setdefault(found.group(2), _time(found.group(1)))
    for line in api_log:
        found = BOUND.match(line)
        if found:
            bound[found.group(2) or found.group(3)] = _time(found.group(1))
    return {server: (bound[server] - start).total_seconds()
            for server, start in created.items() if server in bound}


def percentile(values, share):
    """The ``share`` (0 to 1) percentile, interpolated; None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = share * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(seconds):
    """p50, p99 and max of ``seconds``, and how many there are."""
    return {'n': len(seconds),
            'p50': percentile(seconds, 0.5),
            'p99': percentile(seconds, 0.99),
            'max': max(seconds) if seconds else None}


def _share(ours, theirs):
    if ours is None or not theirs:
        return None
    return ours / theirs


def goal(results):
    """The issue's goal, per concurrency, from a run's ``results``.

    Ours adds at most :data:`GOAL_SHARE` of what 17.0.0 adds to a boot
    (the p50 of Nova's wait for Cyborg, compared) and fails no boot where
    17.0.0 fails any.
    """
    verdict = {}
    services = results['services']
    for key in sorted(services.get('existing', {}),
                      key=lambda k: int(k[1:])):
        theirs = services['existing'][key]['boot']
        ours = services.get('ours', {}).get(key, {}).get('boot')
        if ours is None:
            continue
        share = _share(ours['cyborg_wait']['p50'],
                       theirs['cyborg_wait']['p50'])
        verdict[key] = {
            'cyborg_wait_share': share,
            'share_met': share is not None and share <= GOAL_SHARE,
            'failed_existing': theirs['failed'],
            'failed_ours': ours['failed'],
            'failures_met': ours['failed'] == 0,
        }
    return verdict


def _fmt(value):
    if value is None:
        return 'n/a'
    return '%.2f' % value


def _pair(figures):
    return '%s / %s' % (_fmt(figures['p50']), _fmt(figures['p99']))


def _failed(figures):
    return '%d of %d' % (figures['failed'], figures['n'])


def table(results):
    """A list-table of a run: per service and concurrency, seconds."""
    header = ['service', 'boots at once', 'boot p50 / p99',
              'waiting for Cyborg p50 / p99', 'boots failed',
              'delete p50 / p99', 'deletes failed']
    rows = []
    for name, label in SERVICES:
        runs = results['services'].get(name, {})
        for key in sorted(runs, key=lambda k: int(k[1:])):
            boot, delete = runs[key]['boot'], runs[key]['delete']
            rows.append([label, key[1:], _pair(boot['seconds']),
                         _pair(boot['cyborg_wait']), _failed(boot),
                         _pair(delete['seconds']), _failed(delete)])
    lines = ['.. list-table::', '   :header-rows: 1',
             '   :widths: 22 10 14 18 10 14 12', '']
    for row in [header] + rows:
        for index, cell in enumerate(row):
            lines.append('   %s %s' % ('* -' if index == 0 else '  -', cell))
    return '\n'.join(lines) + '\n'


def verdict_lines(results):
    """One sentence per concurrency: the goal met, or the distance."""
    lines = []
    for key, found in goal(results).items():
        share = found['cyborg_wait_share']
        lines.append(
            'c=%s: ours waits %s of what 17.0.0 waits for Cyborg (goal '
            '<= %.2f: %s); boots failed: 17.0.0 %d, ours %d (%s)' % (
                key[1:], 'n/a' if share is None else '%.3f' % share,
                GOAL_SHARE, 'met' if found['share_met'] else 'not met',
                found['failed_existing'], found['failed_ours'],
                'met' if found['failures_met'] else 'not met'))
    return lines
