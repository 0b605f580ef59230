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
"""``cyborg-status upgrade check``: is this deployment ready to upgrade?

Checks, each ending in success, a warning or a failure:

* the database schema is at the newest migration this code knows;
* a database of openstack-cyborg 17.0.0, if that is what is there, can be
  converted, and what the conversion carries over;
* every trait and resource class that a device profile asks for is
  reported by some deployable, so the profile can still be scheduled, and
  which profiles name those of openstack-cyborg 17.0.0 that ``[agent]
  placement_names = descriptive`` would drop;
* no PCI device claimed by an enabled Cyborg driver is also in Nova's PCI
  whitelist (``[nova] nova_conf`` or ``--nova-conf`` names nova.conf);
* which compute hosts still run the agent of openstack-cyborg 17.0.0
  (:mod:`cyborg.conductor.cyborg17_agents`).
"""

import collections
import json
import sys

from oslo_config import cfg
from oslo_upgradecheck import upgradecheck

from cyborg.common import attributes as common_attributes
from cyborg.common import profile_group
import cyborg.conf
from cyborg import context
from cyborg.db import api as db_api
from cyborg.db import cyborg17
from cyborg.db import migration
from cyborg.drivers import base as drivers_base
from cyborg.drivers import cyborg17 as cyborg17_names
from cyborg.i18n import _
from cyborg import objects
from cyborg.objects import attribute
from cyborg.objects import device_profile
from cyborg.objects import host as host_obj

CONF = cyborg.conf.CONF
Code = upgradecheck.Code
Result = upgradecheck.Result

_NOVA_CONF = cfg.StrOpt(
    'nova-conf', dest='nova_conf_path',
    help="Nova's configuration file; overrides [nova] nova_conf.")


def _needs(group):
    """Resource classes and required traits of a profile group."""
    parsed = profile_group.parse(group)
    return set(parsed.resources) | parsed.required


def _nova_pci_ids(path):
    """(vendor_id, product_id) pairs of Nova's PCI whitelist entries."""
    nova = cfg.ConfigOpts()
    nova.register_opt(cfg.MultiStrOpt(
        'device_spec', default=[],
        deprecated_opts=[cfg.DeprecatedOpt('passthrough_whitelist',
                                           group='pci')]), group='pci')
    nova(args=[], default_config_files=[path], use_env=False)
    ids = set()
    for text in nova.pci.device_spec:
        entries = json.loads(text)
        for entry in entries if isinstance(entries, list) else [entries]:
            ids.add(tuple(str(entry.get(key, '*')).lower().removeprefix('0x')
                          for key in ('vendor_id', 'product_id')))
    return ids


def _retired(profiles):
    """What descriptive names would take from ``profiles``, as a sentence.

    :returns: None when they name none of 17.0.0's retired names.
    """
    by_profile, maps, unmapped = [], set(), set()
    for profile in profiles:
        names = sorted(name for group in profile.groups
                       for name in _needs(group)
                       if cyborg17_names.retired(name)[0])
        if not names:
            continue
        by_profile.append('%s: %s' % (profile.name, ', '.join(names)))
        for name in names:
            new = cyborg17_names.retired(name)[1]
            if new:
                maps.add('--map %s=%s' % (name, new))
            else:
                unmapped.add(name)
    if not by_profile:
        return None
    sentence = _(
        'These device profiles name resource classes or traits of '
        'openstack-cyborg 17.0.0 that [agent] placement_names = '
        'descriptive stops reporting: %s. Before choosing it, rename them '
        'with "cyborg-manage device-profile migrate"') % '; '.join(
            by_profile)
    if maps:
        sentence += ' ' + ' '.join(sorted(maps))
    if unmapped:
        sentence += _(
            '; the descriptive names of %s depend on the device: see the '
            'upgrade guide') % ', '.join(sorted(unmapped))
    return sentence + '.'


def _overlap(ours, theirs):
    return all(a == b or '*' in (a, b) for a, b in zip(ours, theirs))


class Checks(upgradecheck.UpgradeCommands):

    def check(self):
        db_api.configure(CONF)
        objects.register_all()
        return super().check()

    def _check_schema(self):
        current, head = migration.version(), migration.head()
        if current == head:
            return Result(Code.SUCCESS)
        return Result(Code.FAILURE, _(
            'The database is at revision %(current)s; this code needs '
            '%(head)s. Run "cyborg-dbsync upgrade".')
            % {'current': current, 'head': head})

    def _check_cyborg17(self):
        with db_api.get_engine().connect() as connection:
            found = cyborg17.find(connection)
        if found is None:
            return Result(Code.SUCCESS, _(
                'No database of openstack-cyborg 17.0.0 to convert.'))
        details = cyborg17.summary(found)
        if found.problems:
            return Result(Code.FAILURE, '%s %s %s' % (
                details, _('"cyborg-dbsync upgrade" will refuse to convert '
                           'it:'), ' '.join(found.problems)))
        details += ' ' + _('"cyborg-dbsync upgrade" will convert it.')
        if found.warnings:
            return Result(Code.WARNING, '%s %s.' % (
                details, '. '.join(found.warnings)))
        return Result(Code.SUCCESS, details)

    def _check_profiles(self):
        if migration.version() != migration.head():
            return Result(Code.WARNING, _(
                'Skipped until the database schema is upgraded.'))
        ctx = context.get_admin_context()
        by_deployable = collections.defaultdict(list)
        for attr in attribute.Attribute.list(ctx):
            by_deployable[attr.deployable_id].append((attr.key, attr.value))
        reported = set()
        for pairs in by_deployable.values():
            resource_class, traits = common_attributes.decode(pairs)
            reported |= traits | {resource_class}
        missing = []
        profiles = device_profile.DeviceProfile.list(ctx)
        for profile in profiles:
            names = {name for group in profile.groups
                     for name in _needs(group)} - reported
            if names:
                missing.append('%s: %s' % (profile.name,
                                           ', '.join(sorted(names))))
        retired = _retired(profiles)
        if missing:
            return Result(Code.WARNING, ' '.join(filter(None, [_(
                'No deployable reports what these device profiles ask for, '
                'so Nova cannot schedule them: %s. Enable the driver that '
                'reports them, or migrate the profiles with "cyborg-manage '
                'device-profile migrate".') % '; '.join(missing), retired])))
        if retired and cyborg17_names.descriptive():
            return Result(Code.WARNING, retired)
        return Result(Code.SUCCESS, retired)

    def _check_pci_whitelist(self):
        path = CONF.nova_conf_path or CONF.nova.nova_conf
        if not path:
            return Result(Code.SUCCESS, _(
                'Skipped: neither [nova] nova_conf nor --nova-conf names '
                "Nova's configuration file."))
        try:
            theirs = _nova_pci_ids(path)
        except (cfg.Error, ValueError, AttributeError) as e:
            return Result(Code.FAILURE, _(
                'Cannot read the PCI whitelist of %(path)s: %(error)s')
                % {'path': path, 'error': e})
        clashes = sorted(
            '%s claims %s:%s' % (driver.name, *ours)
            for driver in drivers_base.load(CONF.agent.enabled_drivers)
            for ours in driver.pci_ids
            if any(_overlap(ours, entry) for entry in theirs))
        if not clashes:
            return Result(Code.SUCCESS)
        return Result(Code.WARNING, _(
            "Nova's PCI whitelist in %(path)s also names devices that "
            'enabled Cyborg drivers manage (%(clashes)s). Remove them from '
            "Nova's [pci] device_spec or disable the driver: a device must "
            'be given out by one service only.')
            % {'path': path, 'clashes': '; '.join(clashes)})

    def _check_cyborg17_agents(self):
        if migration.version() != migration.head():
            return Result(Code.WARNING, _(
                'Skipped until the database schema is upgraded.'))
        agents = host_obj.Host.cyborg17_agents(context.get_admin_context())
        if not agents:
            return Result(Code.SUCCESS, _(
                'No compute host reports with the agent of '
                'openstack-cyborg 17.0.0.'))
        return Result(Code.WARNING, _(
            'These compute hosts still run the agent of openstack-cyborg '
            '17.0.0 (host: the name it serves RPC under): %s. Their '
            'devices are reported and bound, but programming by function '
            'needs this release\'s agent: upgrade cyborg-agent there.')
            % ', '.join('%s: %s' % item for item in sorted(agents.items())))

    _upgrade_checks = (
        (_('Database schema'), _check_schema),
        (_('openstack-cyborg 17.0.0 database'), _check_cyborg17),
        (_('Device profiles'), _check_profiles),
        (_('PCI whitelist coexistence'), _check_pci_whitelist),
        (_('openstack-cyborg 17.0.0 agents'), _check_cyborg17_agents),
    )


def main(argv=None):
    CONF.register_cli_opt(_NOVA_CONF)
    return upgradecheck.main(CONF, 'cyborg', Checks(),
                             sys.argv[1:] if argv is None else argv)
