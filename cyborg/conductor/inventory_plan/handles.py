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
"""Attach handles in the plan of a report: matched as a multiset.

Handles are known by their deployable, type and attach info; a PCI
function (:func:`cyborg.common.pci_address.address_of` of the attach
info) that an accelerator request holds through a handle no longer
reported makes the host's other handles of that function busy.
"""

import collections
import itertools
import json

from cyborg.common import host_inventory
from cyborg.common import pci_address


def _handle_key(attach_type, attach_info):
    return attach_type, json.dumps(attach_info, sort_keys=True)


def function_key(attach_type, attach_info):
    """What a handle hands out: its type, function and mdev type.

    Handles of one function may differ in other attach info (a physical
    network that the configuration added).
    """
    return (attach_type, pci_address.address_of(attach_info),
            attach_info.get('asked_type'))


def held_elsewhere(host, reported):
    """Held handles their deployable no longer reports, by function.

    Such a handle is kept while its ARQ holds it, but the host may
    report its function under another deployable (a driver grouping
    functions otherwise, as openstack-cyborg 17.0.0's drivers did
    with one deployable per virtual function) or with other attach
    info: a handle reported for the same function (see
    :func:`function_key`) is in use until then, so no other ARQ gets
    it.

    :param host: the host's rows as :func:`.matching.index` keeps them.
    :param reported: {name: (id or Ref, PCI address, reported dict)}.
    """
    busy = collections.Counter()
    names = {row.id: name for name, row in host.deployables.items()}
    for deployable_id, rows in host.handles.items():
        kept = collections.Counter()
        name = names.get(deployable_id)
        if name in reported:
            kept.update(_handle_key(h['attach_type'], h['attach_info'])
                        for h in reported[name][2]['attach_handles'])
        for row in rows:
            if row.id in host.held_handles:
                key = _handle_key(row.attach_type, row.attach_info)
                if kept[key]:
                    kept[key] -= 1
                else:
                    busy[function_key(row.attach_type,
                                      row.attach_info)] += 1
    return busy


def plan_handles(host, name, deployable_id, cpid_id, reported, busy,
                 handles, in_use, kept):
    """Match handles as a multiset: equal keys are interchangeable.

    Several MDEV handles of one type share their attach info, so a key
    counts its handles. Where rows outnumber the report, the ones that
    ARQs hold or the host uses are matched first and so kept. A handle
    of a function that an unreported held handle makes ``busy`` (see
    :func:`held_elsewhere`) is in use; each such handle takes one off.

    :param in_use: gathers (handle id, in use) of the handles whose use
        follows the host's.
    :param kept: gathers the held handles no longer reported.
    :returns: whether a handle changed.
    """
    held = host.held_handles
    current, asked = {}, {}
    for handle in host.handles.get(deployable_id, ()):
        key = _handle_key(handle.attach_type, handle.attach_info)
        current.setdefault(key, []).append(handle)
    for handle in reported:
        key = _handle_key(handle['attach_type'], handle['attach_info'])
        function = function_key(handle['attach_type'],
                                handle['attach_info'])
        if busy[function] and not handle['in_use']:
            busy[function] -= 1
            handle = dict(handle, in_use=True)
        asked.setdefault(key, []).append(handle)
    touched = False
    for key, values in asked.items():
        values.sort(key=lambda handle: not handle['in_use'])
        rows = sorted(current.pop(key, []), key=lambda handle: (
            handle.id not in held, not handle.in_use))
        for row, handle in zip(rows, values):
            if row.cpid_id != cpid_id:
                handles.update.append(host_inventory.Update(
                    row.id, {'cpid_id': cpid_id}))
                touched = True
            if row.in_use != bool(handle['in_use']) and row.id not in held:
                in_use.append((row.id, bool(handle['in_use'])))
                touched = True
        for handle in values[len(rows):]:
            handles.new.append(host_inventory.New(None, {
                'deployable_id': deployable_id, 'cpid_id': cpid_id,
                'in_use': bool(handle['in_use']),
                'attach_type': handle['attach_type'],
                'attach_info': dict(handle['attach_info'])}))
            touched = True
        current[key] = rows[len(values):]
    for row in itertools.chain.from_iterable(current.values()):
        if row.id in held:
            kept.append(host_inventory.KeptHandle(row.uuid, name,
                                                  held[row.id]))
        else:
            handles.delete.append(row.id)
            touched = True
    return touched
