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
"""The report of tools/bench/compare.py: its figures as reStructuredText.

:func:`render` turns the figures of one run (the ``results.json`` that
``compare.py`` writes) into the text that
``doc/source/contributor/performance_comparison.inc`` holds: what was
measured, one table per kind of figure and the targets of issue #15 with
the measured value and whether it was met. It computes nothing but ratios,
so it can be rerun on saved figures (``compare.py --render FILE``).
"""

import textwrap

#: Where compare.py measured, in the order of the tables' columns.
SHAPES = (
    ('existing', 'openstack-cyborg 17.0.0'),
    ('rabbit', 'Cyborg, --rabbit'),
    ('all_in_one', 'Cyborg, all-in-one'),
)
#: The unbound ARQs compare.py creates before the 'bind_c1_arqs' cycles.
BIND_ARQS_PRESENT = 1000
#: The calls, in the order of the tables' rows: key, label.
CALLS = (
    ('create_profile', 'create a device profile'),
    ('list_profiles', 'list 200 device profiles'),
    ('get_profile', 'get a profile by name'),
    ('create_arq', 'create an ARQ'),
    ('bind_c1', 'bind cycle'),
    ('bind_c4', 'bind cycle'),
    ('bind_c1_arqs', 'bind cycle beside {:,} ARQs'.format(
        BIND_ARQS_PRESENT)),
)
#: Throughput ratio over the existing service each call must reach.
SPEEDUP = {'list_profiles': 10, 'get_profile': 10, 'create_arq': 2,
           'bind_c1': 3, 'bind_c4': 5}
#: The largest p99 of the list, in p50s.
LIST_P99_SPREAD = 4
#: The largest share of the existing service's memory (PSS) a service may
#: take.
MEMORY_SHARE = 0.6
#: The services whose memory is compared.
SERVICES = ('api', 'conductor', 'agent')
INSTANCE_ARQS_P50_MS = 5
#: The steps of a bind cycle, in order.
STEPS = ('create', 'bind', 'event', 'unbind', 'delete')


def _fmt(value, digits=1):
    if value is None:
        return 'n/a'
    if value >= 100:
        return '%d' % round(value)
    return '%.*f' % (digits, value)


def _ratio(ours, theirs):
    if not ours or not theirs:
        return None
    return ours / theirs


def _table(header, rows, widths):
    """A list-table: ``header`` and ``rows`` are lists of cell strings."""
    lines = ['.. list-table::', '   :header-rows: 1',
             '   :widths: %s' % ' '.join(str(w) for w in widths), '']
    for row in [header] + rows:
        for index, cell in enumerate(row):
            lines.append('   %s %s' % ('* -' if index == 0 else '  -', cell))
    return lines + ['']


def _call_label(key, label, calls):
    figures = calls.get(key) or {}
    return '%s (c=%s)' % (label, figures.get('c', '?'))


def _cell(figures):
    if not figures:
        return 'n/a'
    text = '%s (%s / %s)' % (_fmt(figures['rps']), _fmt(figures['p50']),
                             _fmt(figures['p99']))
    if figures.get('errors'):
        text += ', %d error%s' % (figures['errors'],
                                  's' if figures['errors'] > 1 else '')
    return text


def _speed_table(results):
    shapes = results['shapes']
    bare = shapes.get('bare', {}).get('calls', {})
    header = ['call'] + [label for _, label in SHAPES] + [
        'bare WSGI', 'ratio']
    rows = []
    for key, label in CALLS:
        row = [_call_label(key, label, shapes['rabbit']['calls'])]
        row += [_cell(shapes.get(s, {}).get('calls', {}).get(key))
                for s, _ in SHAPES]
        row.append(_cell(bare.get(key)) if key in bare else '—')
        ratio = _ratio(_get(results, 'rabbit', key, 'rps'),
                       _get(results, 'existing', key, 'rps'))
        row.append('%s×' % _fmt(ratio) if ratio else 'n/a')
        rows.append(row)
    return _table(header, rows, (22, 17, 17, 17, 15, 8))


def _get(results, shape, call, field):
    return (results['shapes'].get(shape, {}).get('calls', {}).get(call)
            or {}).get(field)


def _memory(results, shape, service, when):
    return (results['shapes'].get(shape, {}).get('memory', {}).get(service)
            or {}).get(when)


#: The memory figures: (label, key at rest, key under load).
MEMORY = (
    ('resident set (RSS)', 'rest', 'load'),
    ('proportional set (PSS)', 'pss_rest', 'pss_load'),
)


def _memory_table(results, rest_key, load_key):
    header = ['service'] + [label for _, label in SHAPES]
    rows = []
    for service in SERVICES + ('all',):
        row = [service if service != 'all' else 'all of them']
        for shape, _ in SHAPES:
            rest = _memory(results, shape, service, rest_key)
            load = _memory(results, shape, service, load_key)
            row.append('%s / %s' % (_fmt(rest, 0), _fmt(load, 0))
                       if rest is not None else '—')
        rows.append(row)
    return _table(header, rows, (22, 26, 26, 26))


#: The columns of the step tables: key in the figures, header.
STEP_COLUMNS = (('wall', 'wall'), ('api', 'API'),
                ('conductor', 'conductor'), ('agent', 'agent'),
                ('RabbitMQ', 'RabbitMQ'), ('MariaDB', 'MariaDB'),
                ('load', 'load generator'))


def _steps_tables(results):
    """Per shape measured, what each step of a bind cycle costs."""
    lines = []
    for shape, label in SHAPES:
        steps = results['shapes'].get(shape, {}).get('bind_steps')
        if not steps or 'api' not in steps['cycle']:
            continue
        rows = [[name] + [_fmt(steps[name].get(key), 2)
                          for key, _ in STEP_COLUMNS]
                for name in (*STEPS, 'cycle')]
        lines += ['%s:' % label, '']
        lines += _table(['step'] + [h for _, h in STEP_COLUMNS], rows,
                        (12, 11, 11, 11, 11, 11, 11, 11))
    return lines


def targets(results):
    """The targets (issue #24's restatement): (target, measured, met) rows.

    ``met`` is True, False or None (not measured).
    """
    rows = []

    def check(name, measured, value, ok):
        rows.append((name, measured if value is not None else 'n/a',
                     None if value is None else bool(ok)))

    for key, factor in sorted(SPEEDUP.items(), key=lambda i: [
            k for k, _ in CALLS].index(i[0])):
        ratio = _ratio(_get(results, 'rabbit', key, 'rps'),
                       _get(results, 'existing', key, 'rps'))
        label = dict(CALLS)[key]
        if key.startswith('bind'):
            label += ', c=%s' % key[-1]
        check('%s ≥%d× existing' % (label, factor),
              '%s×' % _fmt(ratio), ratio, ratio and ratio >= factor)
        if key.startswith('bind'):
            errors = _get(results, 'rabbit', key, 'errors')
            check('%s: 0 errors' % label, '%s' % errors, errors,
                  errors == 0)
    p50 = _get(results, 'rabbit', 'list_profiles', 'p50')
    p99 = _get(results, 'rabbit', 'list_profiles', 'p99')
    spread = _ratio(p99, p50)
    check('list 200 profiles: p99 ≤ %d× p50' % LIST_P99_SPREAD,
          '%s×' % _fmt(spread), spread, spread and spread <= LIST_P99_SPREAD)
    for count, figures in sorted(results.get('instance_arqs', {}).items(),
                                 key=lambda i: int(i[0])):
        check("an instance's ARQs p50 ≤ %d ms at %s ARQs" % (
            INSTANCE_ARQS_P50_MS, '{:,}'.format(int(count))),
            '%s ms' % _fmt(figures['p50'], 2), figures['p50'],
            figures['p50'] <= INSTANCE_ARQS_P50_MS)
    shares = [_ratio(_get(results, 'all_in_one', key, 'rps'),
                     _get(results, 'existing', key, 'rps'))
              for key, _ in CALLS]
    shares = [s for s in shares if s is not None]
    worst = min(shares) if shares else None
    check('all-in-one at least as fast as existing on every call',
          'worst %s×' % _fmt(worst), worst, worst and worst >= 1)
    workers = results.get('api_workers_default')
    check('cyborg-api: one worker per CPU by default', '%s' % workers,
          workers, workers == results.get('cpus'))
    for service in SERVICES + ('all',):
        for when in ('pss_rest', 'pss_load'):
            ours = _memory(results, 'rabbit', service, when)
            theirs = _memory(results, 'existing', service, when)
            share = _ratio(ours, theirs)
            check('%s PSS %s ≤ %s× existing' % (
                'all services' if service == 'all' else service,
                'at rest' if when == 'pss_rest' else 'under load',
                MEMORY_SHARE),
                '%s of %s MiB' % (_fmt(ours, 0), _fmt(theirs, 0)), share,
                share and share <= MEMORY_SHARE)
    return rows


def _targets_table(results):
    rows = [[name, measured, {True: 'yes', False: '**no**',
                              None: 'not measured'}[met]]
            for name, measured, met in targets(results)]
    return _table(['target (Cyborg --rabbit)', 'measured', 'met'], rows,
                  (60, 25, 15))


def render(results):
    """The comparison section's text (reStructuredText, no title)."""
    meta = results['meta']
    lines = [
        '.. This file is written by tools/bench/compare.py: rerun it '
        'rather than',
        '   edit it.', '',
        'Measured %s on %s (%d CPUs), Cyborg at commit ``%s``; the '
        'existing service and Cyborg --rabbit on %s, the all-in-one on an '
        'SQLite file. Each call '
        'ran for %d s after a warm-up, driven by %s; the bind cycles by '
        'one Python thread per connection (create, bind, wait for the '
        'bound event at the stub Nova, unbind, delete), before any other '
        'ARQ is created, and in the last row after %s unbound ones '
        'are. Cells are '
        'requests (or cycles) per second, then p50 / p99 latency in ms; '
        '"ratio" is Cyborg --rabbit over the existing service.' % (
            meta['date'], meta['machine'], results['cpus'], meta['commit'],
            'MariaDB' if meta.get('database') == 'MariaDB' else
            'SQLite files', meta['duration'], meta['load_generator'],
            '{:,}'.format(BIND_ARQS_PRESENT)),
        '',
    ]
    lines += _speed_table(results)
    lines += [
        'The list of 200 profiles is %s bytes. The load generator used '
        '%s of one CPU on average while it ran (the services share the '
        'same %d CPUs).' % ('{:,}'.format(results['list_bytes']),
                            '%d%%' % round(100 * meta['load_cpu']),
                            results['cpus']),
        '',
        'Memory of each service, summed over its processes, in MiB, at '
        'rest (seeded, before the load) / the most seen under load. The '
        'resident set (RSS) counts a page in every process that maps it, '
        'so the pages a master shares with the workers it forked count '
        'once per process; the proportional set (PSS) counts a page that n '
        'processes share 1/n in each, so once in the sum: what the service '
        'costs the machine.', '']
    for label, rest_key, load_key in MEMORY:
        lines += ['Memory, %s:' % label, '']
        lines += _memory_table(results, rest_key, load_key)
    counts = sorted(results.get('instance_arqs', {}), key=int)
    if counts:
        lines += [
            "An instance's accelerator requests (``GET "
            "/v2/accelerator_requests?instance=``, 4 of them), measured "
            'by ``tools/bench/api_bench.py`` with %s ARQs in the table: '
            'p50 %s ms.' % (
                ' and '.join('{:,}'.format(int(c)) for c in counts),
                ' and '.join(_fmt(results['instance_arqs'][c]['p50'], 2)
                             for c in counts)), '']
    steps = _steps_tables(results)
    if steps:
        lines += [
            'Where a bind cycle goes, %d cycles one at a time (no other ARQ '
            'present), ms per cycle: the wall time of each step at the '
            'load generator, then the CPU time each process group spent '
            'while it ran (the service\'s processes, its workers included; '
            'RabbitMQ and MariaDB, which the shapes share; the load '
            'generator\'s thread). "event" is from the bind\'s answer to '
            'the event at the stub Nova.' % results['step_cycles'],
            '']
        lines += steps
    lines += ['Targets:', '']
    lines += _targets_table(results)
    # Prose wrapped as the docs are; tables and directives as they are.
    text = '\n'.join(textwrap.fill(line, 79) if not line.startswith(
        ('   ', '..')) else line for line in lines)
    return text.rstrip('\n') + '\n'
