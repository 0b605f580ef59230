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
"""What the Placement sync knows of the providers of a host's tree.

One record per provider, kept in the database: what the provider looked
like after the last pass that read or wrote it, and the traits Cyborg put
on it. See :mod:`cyborg.conductor.placement_sync`.
"""

import dataclasses

from cyborg.objects import host as host_obj


@dataclasses.dataclass(frozen=True)
class Record:
    """What Cyborg knows of one provider of a host's tree.

    ``generation``, ``traits`` and ``inventories``: the provider as the
    last pass read or wrote it (``generation`` None: read it again, as
    after two reads that saw different generations). ``placed``: the
    traits Cyborg put on it, the only ones it may take off again.
    """

    generation: object
    traits: frozenset
    inventories: dict
    placed: frozenset


#: The record of a provider that Cyborg is about to create.
UNBORN = Record(None, frozenset(), {}, frozenset())


class Records:
    """The records of the providers of a host's tree, kept in the database.

    A pass loads them once and writes back those it changed, so a
    provider whose generation in the tree listing matches its record is
    not read again whichever conductor made the last pass, and what
    Cyborg put on a provider outlives the process that put it there.

    :param tree: the tree as this pass listed it: the records of
        providers gone from it since are deleted.
    """

    def __init__(self, context, hostname, tree):
        self._context = context
        self._hostname = hostname
        self._records = {}
        self._changed = set()
        self._gone = set()
        for rp_uuid, row in host_obj.Host.placement_providers(
                context, hostname).items():
            if rp_uuid not in tree:
                self._gone.add(rp_uuid)
                continue
            self._records[rp_uuid] = Record(
                row['generation'], frozenset(row['traits']),
                row['inventories'], frozenset(row['placed_traits']))

    def set(self, rp_uuid, record):
        """Make ``record`` the provider's; it is saved if it changed."""
        if self._records.get(rp_uuid) != record:
            self._records[rp_uuid] = record
            self._changed.add(rp_uuid)
            self._gone.discard(rp_uuid)

    def read(self, client, rp):
        """``rp``'s record, from Placement if its generation moved."""
        record = self._records.get(rp['uuid'])
        if record is not None and record.generation == rp['generation']:
            return record
        trait_gen, traits = client.get_traits(rp['uuid'])
        inv_gen, inventories = client.get_inventories(rp['uuid'])
        record = Record(inv_gen if inv_gen == trait_gen else None,
                        frozenset(traits), inventories,
                        record.placed if record else frozenset())
        self.set(rp['uuid'], record)
        return record

    def stale(self, rp_uuid):
        """Read the provider again at the next pass."""
        record = self._records.get(rp_uuid)
        if record is not None:
            self.set(rp_uuid, dataclasses.replace(record, generation=None))

    def forget(self, rp_uuid):
        """The provider is deleted: so is its record."""
        self._records.pop(rp_uuid, None)
        self._changed.discard(rp_uuid)
        self._gone.add(rp_uuid)

    def save(self):
        """Write the records changed since the last save."""
        if not self._changed and not self._gone:
            return
        rows = {}
        for rp_uuid in self._changed:
            record = self._records[rp_uuid]
            rows[rp_uuid] = {'generation': record.generation,
                             'traits': sorted(record.traits),
                             'inventories': record.inventories,
                             'placed_traits': sorted(record.placed)}
        host_obj.Host.set_placement_providers(self._context, self._hostname,
                                              rows, self._gone)
        self._changed.clear()
        self._gone.clear()
