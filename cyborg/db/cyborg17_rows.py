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
"""The rows of openstack-cyborg 17.0.0's tables, made rows of ours.

:func:`convert` takes the rows :mod:`cyborg.db.cyborg17` read from each of
its tables and returns the rows to write into ours, noting on the way
what stops the conversion and what an operator should know.
"""

import collections
import itertools
import json
import re

from cyborg.common import attributes as common_attributes
from cyborg.common import pci_address
from cyborg.i18n import _
from cyborg import states

#: Rows named in one problem or warning before "and N more".
EXAMPLES = 5
#: Device states of 17.0.0 in which a device must not be handed out.
_UNCLEAN = ('pending_cleaning', 'cleaning', 'error')
#: The ``driver_name`` and the name (after ``<host>_``) of the deployable
#: of 17.0.0's fake driver, and the name our fake driver reports for it.
_FAKE_DRIVER = 'fake'
_FAKE_DEPLOYABLE = 'FakeDevice'
#: Attach info that 17.0.0 keeps in MDEV handles and this release does
#: not: a mark per handle, ``<type>_<number>``, that nothing reads.
_MDEV_MARK = 'vgpu_mark'
MDEV_MARK = _MDEV_MARK
#: Device types whose deployables 17.0.0 named after the PCI function
#: they offer (one per virtual function), as this release's drivers do.
_PER_FUNCTION = ('QAT', 'NIC')
#: The PCI address that ends a deployable name of 17.0.0.
_TRAILING_ADDRESS = re.compile(
    r'[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$')


class _Notes:
    """Rows named under each of several messages."""

    def __init__(self):
        self._uuids = collections.defaultdict(list)

    def add(self, message, uuid):
        self._uuids[message].append(uuid)

    def sentences(self):
        out = []
        for message, uuids in self._uuids.items():
            names = ', '.join(map(str, uuids[:EXAMPLES]))
            if len(uuids) > EXAMPLES:
                names += _(' and %d more') % (len(uuids) - EXAMPLES)
            out.append('%s: %s' % (message, names))
        return out


def _json_object(text, kind):
    """The dict that JSON ``text`` holds; ValueError when it is none."""
    value = json.loads(text)
    if not isinstance(value, kind):
        raise ValueError(text)
    return value


def convert(read, found):
    """Our rows made of ``read``, its table -> its rows; fills ``found``.

    :returns: our table -> rows to insert.
    """
    problems, warnings = _Notes(), _Notes()
    profiles, groups = _profiles(read['device_profiles'], problems)
    rows = {
        'device_profiles': profiles,
        'devices': _devices(read['devices'], problems, warnings),
        'deployables': _deployables(read),
        'attributes': _attributes(read['attributes'], problems),
        'controlpath_ids': [
            dict(row, cpid_info=_checked_json(
                row, 'cpid_info', problems,
                _('Control path ids whose cpid_info is no JSON object')))
            for row in _checked_enum(
                read['controlpath_ids'], 'cpid_type', states.CPID_TYPES,
                problems)],
        'attach_handles': [
            dict(row, in_use=bool(row['in_use']),
                 attach_info=_handle_info(row, problems))
            for row in _checked_enum(
                read['attach_handles'], 'attach_type', states.ATTACH_TYPES,
                problems)],
    }
    rows['accelerator_requests'] = _arqs(
        read['extended_accelerator_requests'], groups, problems, found)
    found.problems.extend(problems.sentences())
    found.warnings.extend(warnings.sentences())
    return rows


def _checked_enum(rows, column, allowed, problems):
    for row in rows:
        if row[column] not in allowed:
            problems.add(_('%(column)s values this release does not know '
                           '(%(allowed)s allowed)')
                         % {'column': column,
                            'allowed': ', '.join(allowed)}, row['uuid'])
    return rows


def _checked_json(row, column, problems, message):
    """Column ``column`` of ``row`` as JSON text of an object."""
    try:
        return json.dumps(_json_object(row[column], dict))
    except (TypeError, ValueError):
        problems.add(message, row['uuid'])
        return None


def _profiles(read, problems):
    """Profiles with their groups as our JSON text; and id -> groups."""
    out, groups_by_id, seen = [], {}, set()
    for row in read:
        try:
            groups = _json_object(row['profile_json'], dict)['groups']
            if not (isinstance(groups, list) and groups and all(
                    isinstance(g, dict) and all(
                        isinstance(v, str) for v in g.values())
                    for g in groups)):
                raise ValueError(groups)
        except (KeyError, TypeError, ValueError):
            problems.add(_('Device profiles whose profile_json holds no '
                           'list of groups of strings'), row['uuid'])
            groups = []
        if row['uuid'] in seen:
            problems.add(_('Device profile uuids used more than once'),
                         row['uuid'])
        seen.add(row['uuid'])
        groups_by_id[row['id']] = groups
        values = {k: v for k, v in row.items() if k != 'profile_json'}
        out.append(dict(values, groups=json.dumps(groups)))
    return out, groups_by_id


def _devices(read, problems, warnings):
    out = []
    for row in _checked_enum(_checked_enum(
            read, 'type', states.DEVICE_TYPES, problems),
            'status', states.DEVICE_STATUSES, problems):
        values = {k: v for k, v in row.items() if k != 'device_state'}
        if row['device_state'] in _UNCLEAN:
            # This release does not clean devices: keep them from being
            # handed out until an operator enables them.
            values['status'] = states.DEVICE_MAINTAINING
            warnings.add(_(
                'Devices that openstack-cyborg 17.0.0 had not finished '
                'cleaning (device_state %s) become maintaining; enable '
                'each once it is clean') % ', '.join(_UNCLEAN), row['uuid'])
        out.append(values)
    return out


def _handle_info(row, problems):
    """The attach info of a handle as this release's drivers report it.

    17.0.0 wrote the PCI address parts as this release does; an MDEV
    handle loses its ``vgpu_mark``. The inventory of a host matches a
    handle by its type and info, so the handle that an instance holds is
    the one its host reports again.
    """
    info = _checked_json(row, 'attach_info', problems, _(
        'Attach handles whose attach_info is no JSON object'))
    if info is None or row['attach_type'] != states.ATTACH_MDEV:
        return info
    value = json.loads(info)
    value.pop(_MDEV_MARK, None)
    return json.dumps(value)


def _json_or_none(text):
    """The dict that JSON ``text`` holds, or None."""
    try:
        return _json_object(text, dict)
    except (TypeError, ValueError):
        return None


def _deployables(read):
    """Deployables, renamed as this release's drivers name them.

    17.0.0 names a deployable ``<host>_<PCI address>`` (its fake driver
    ``<host>_FakeDevice``); this release names it after the address of its
    device's control path, or, for a QAT or NIC card, of the function it
    offers: one deployable per virtual function, as 17.0.0 made them. The
    inventory of a host matches a deployable by its name, so each is given
    the name its host reports for it: it keeps its uuid, its handles and
    the accelerator requests that hold them, and its ``rp_uuid``, by which
    the Placement sync adopts its provider where that is not named
    ``<host>_<name>``.
    """
    hosts = {row['id']: row['hostname'] for row in read['devices']}
    types = {row['id']: row['type'] for row in read['devices']}
    addresses = {}
    for row in read['controlpath_ids']:
        info = _json_or_none(row['cpid_info'])
        try:
            addresses.setdefault(row['device_id'], pci_address.join(info))
        except (KeyError, TypeError):
            continue
    roots = collections.Counter(row['device_id'] for row in
                                read['deployables']
                                if row['parent_id'] is None)
    out = []
    for row in read['deployables']:
        out.append(dict(row, name=deployable_name(
            hosts.get(row['device_id']) or '', types.get(row['device_id']),
            row['driver_name'], row['name'],
            addresses.get(row['device_id']),
            row['parent_id'] is None and roots[row['device_id']] == 1)))
    return out


def deployable_name(host, device_type, driver_name, name, address,
                    only_root):
    """The name this release's drivers give a deployable 17.0.0 named.

    Used for 17.0.0's rows (:func:`_deployables`) and for the reports of
    its agents that still run (:mod:`cyborg.objects.cyborg17_report`).

    :param host: the host its device is recorded under.
    :param address: the PCI address of its device's control path, or None.
    :param only_root: whether it is the one deployable of its device with
        no parent.
    """
    function = _TRAILING_ADDRESS.search(name)
    if driver_name == _FAKE_DRIVER and name.endswith('_' + _FAKE_DEPLOYABLE):
        return _FAKE_DEPLOYABLE
    if device_type in _PER_FUNCTION and function:
        # Named after the socket's host name and the function.
        return function[0]
    if address and only_root:
        # The one deployable of its device, whatever 17.0.0 named it:
        # after the socket's host name, a virtual function or the model
        # (Huawei Ascend); a GPU's vGPUs too, of the one type that 17.0.0
        # offered on a GPU.
        return address
    if name.startswith(host + '_'):
        return name[len(host) + 1:]
    return name


def _attributes(read, problems):
    """Attributes; a trait key a deployable has twice takes a free number.

    17.0.0's Intel FPGA driver numbers the traits of a card's virtual
    functions on from the last number of the card's own, so a card with
    SR-IOV on has ``trait<N>`` twice. Every trait is kept: this release
    reads the traits of any ``trait<N>`` keys.
    """
    keys = collections.defaultdict(set)
    for row in read:
        keys[row['deployable_id']].add(row['key'])
    out, seen = [], set()
    for row in read:
        key, taken = row['key'], keys[row['deployable_id']]
        if len(key) > 255 or len(row['value']) > 255:
            problems.add(_('Attributes whose key or value is longer than '
                           '255 characters'), row['uuid'])
        if (row['deployable_id'], key) in seen:
            if common_attributes.is_trait_key(key):
                key = next(k for k in map('trait%d'.__mod__,
                                          itertools.count())
                           if k not in taken)
                taken.add(key)
            else:
                problems.add(_('Attributes whose key their deployable has '
                               'twice'), row['uuid'])
        seen.add((row['deployable_id'], key))
        out.append(dict(row, key=key))
    return out


def _arqs(read, groups, problems, found):
    """ARQs, each with a copy of its profile group as 17.0.0 showed it."""
    out, handles = [], set()
    for row in _checked_enum(read, 'state', states.ALL_STATES, problems):
        found.arq_states[row['state']] += 1
        profile_groups = groups.get(row['device_profile_id'], [])
        group = {}
        if 0 <= row['device_profile_group_id'] < len(profile_groups):
            group = profile_groups[row['device_profile_group_id']]
        else:
            problems.add(_('Accelerator requests whose device profile or '
                           'profile group does not exist'), row['uuid'])
        handle = row['attach_handle_id']
        if handle is not None and handle in handles:
            problems.add(_('Accelerator requests holding an attach handle '
                           'that another one holds'), row['uuid'])
        handles.add(handle)
        out.append(dict(row, device_profile_group=json.dumps(group)))
    return out
