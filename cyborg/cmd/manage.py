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
"""``cyborg-manage``: operator tasks on stored data.

Usage::

    cyborg-manage device-profile migrate --map OLD=NEW [--map ...] [--apply]
    cyborg-manage audit [--heal] [--format table|json]

``device-profile migrate`` renames resource classes and traits in every
stored device profile, for an upgrade in which a custom name became a
standard one (seed 001, "Versioning and upgrades"). Without ``--apply`` it
only reports what it would change. Accelerator requests keep the groups
they were created with.

``audit`` compares the database with Placement and Nova and lists what
disagrees, changing nothing; ``--heal`` asks a conductor, over RPC, to
audit again and repair what is safe to repair
(:mod:`cyborg.conductor.audit`, ``doc/source/admin/audit.rst``). It exits
0 when all agree, 1 when findings remain, 2 when Placement or Nova could
not be read (Nova also when it does not show every project's servers to
``[nova]``'s user), in which case ``--heal`` refuses to change anything,
or when no conductor answered ``--heal``.
"""

import json
import re
import sys

from oslo_config import cfg
from oslo_log import log

from cyborg.common import profile_group
from cyborg.common import rpc
from cyborg.conductor import audit
from cyborg.conductor import rpcapi
import cyborg.conf
from cyborg import context
from cyborg import exception
from cyborg.objects import device_profile
from cyborg import startup

CONF = cyborg.conf.CONF

_NAME = re.compile(r'^[A-Z0-9_]+$')


def _parse_map(pairs):
    """{'OLD': 'NEW'} from OLD=NEW strings; ValueError names a bad one."""
    mapping = {}
    for pair in pairs:
        old, sep, new = pair.partition('=')
        old = profile_group.normalize_name(old)
        new = profile_group.normalize_name(new)
        if not sep or not _NAME.match(old) or not _NAME.match(new):
            raise ValueError('--map %s: expected OLD=NEW, each an upper-case '
                             'trait or resource class name' % pair)
        mapping[old] = new
    return mapping


def _migrate():
    try:
        mapping = _parse_map(CONF.category.map)
    except ValueError as e:
        print('cyborg-manage: %s' % e, file=sys.stderr)
        return 2
    ctx = context.get_admin_context()
    changed = refused = 0
    for profile in device_profile.DeviceProfile.list(ctx, sort_key='name'):
        groups, report, conflicts = [], [], []
        for index, group in enumerate(profile.groups):
            new, changes, clash = profile_group.rename(group, mapping)
            groups.append(new)
            report += ['  group %d: %s -> %s' % (index, old, renamed)
                       for old, renamed in changes]
            conflicts += ['  group %d: %s would get two values'
                          % (index, key) for key in clash]
        if conflicts:
            refused += 1
            print('%s (%s): left alone, the renames collide:'
                  % (profile.name, profile.uuid))
            print('\n'.join(conflicts))
            continue
        if not report:
            continue
        changed += 1
        print('%s (%s):' % (profile.name, profile.uuid))
        print('\n'.join(report))
        if CONF.category.apply:
            profile.groups = groups
            profile.save(ctx)
    verb = 'changed' if CONF.category.apply else 'would change'
    print('%d device profile(s) %s, %d refused.' % (changed, verb, refused))
    if changed and not CONF.category.apply:
        print('Nothing was written; run again with --apply to write.')
    return 1 if refused else 0


_COLUMNS = ('kind', 'object', 'host', 'detail', 'action')


def _table(rows):
    """Rows of dicts as aligned columns, the header first."""
    rows = [{c: c.upper() for c in _COLUMNS}] + rows
    widths = {c: max(len(str(r[c])) for r in rows) for c in _COLUMNS[:-1]}
    return '\n'.join('  '.join([str(r[c]).ljust(widths[c])
                                for c in _COLUMNS[:-1]] + [r['action']])
                     for r in rows)


def _audit():
    heal = CONF.category.heal
    ctx = context.get_admin_context()
    if heal:
        # The conductor repairs with its own workflows (unbinds tell the
        # agents and Nova; syncs run under the hosts' leases).
        rpc.init(CONF)
        if (CONF.transport_url or '').startswith('fake:'):
            print('cyborg-manage audit: --heal asks a conductor over the '
                  'message bus, which [DEFAULT] transport_url = fake:// '
                  '(the all-in-one) keeps inside its process: audit '
                  'without --heal and repair as the findings advise',
                  file=sys.stderr)
            return 2
        try:
            report = rpcapi.ConductorAPI().audit_heal(ctx)
        except exception.ServiceUnavailable as e:
            print('cyborg-manage audit: --heal: %s' % e, file=sys.stderr)
            return 2
        if report['heal_refused']:
            print('cyborg-manage audit: --heal refused: %s'
                  % report['heal_refused'], file=sys.stderr)
    else:
        report = audit.Audit(ctx, CONF).run().as_dict()
    if CONF.category.format == 'json':
        print(json.dumps(dict(report, healed=heal), indent=2,
                         sort_keys=True))
        return report['exit_status']
    findings = report['findings']
    remaining = [f for f in findings if not f['repaired']]
    if findings:
        print(_table(findings))
    for source, state in sorted(report['sources'].items()):
        if not state['checked']:
            print('%s not checked: %s' % (source.capitalize(),
                                          state['reason']))
    print('%d finding(s), %d remaining.' % (len(findings), len(remaining)))
    if not heal and any(f['repairable'] for f in remaining):
        print('Nothing was changed; run again with --heal to repair.')
    return report['exit_status']


def _add_parsers(subparsers):
    parser = subparsers.add_parser(
        'device-profile', help='Work on stored device profiles.')
    actions = parser.add_subparsers(dest='action', required=True)
    migrate = actions.add_parser(
        'migrate', help='Rename traits and resource classes in profiles.')
    migrate.add_argument(
        '--map', action='append', required=True, metavar='OLD=NEW',
        help='A trait or resource class name and its replacement; repeat '
             'for several.')
    migrate.add_argument(
        '--apply', action='store_true',
        help='Write the changes; without it, only report them.')
    migrate.set_defaults(func=_migrate)
    checker = subparsers.add_parser(
        'audit', help='Compare the database with Placement and Nova.')
    checker.add_argument(
        '--heal', action='store_true',
        help='Repair what is safe to repair, and say what was done.')
    checker.add_argument(
        '--format', choices=('table', 'json'), default='table',
        help='A table for people (default) or JSON for tools.')
    checker.set_defaults(func=_audit)


_CATEGORY = cfg.SubCommandOpt('category', title='Commands',
                              handler=_add_parsers)


def main(argv=None):
    CONF.register_cli_opt(_CATEGORY)
    # Standard output is the command's (a table, JSON); the log goes
    # beside it, unless the configuration says otherwise.
    log.register_options(CONF)
    CONF.set_default('use_stderr', True)
    startup.prepare_service(sys.argv if argv is None else argv)
    return CONF.category.func()
