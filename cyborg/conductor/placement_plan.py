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
"""What Placement should hold for a host, and what differs: one rule set.

:func:`provider` says which provider a deployable's rows ask for;
:func:`plan` compares those with the providers of the host's compute
node tree, as read, and says what a sync writes: the providers to create
or fix, and those to delete. It reads and writes nothing, so the
Placement sync (:mod:`cyborg.conductor.placement_sync`) applies it and
the audit (:mod:`cyborg.conductor.audit`) shows it as drift, without
writing. Only providers with trait ``OWNER_CYBORG`` are Cyborg's, and
those openstack-cyborg 17.0.0 made for the same deployables, which are
adopted (:mod:`cyborg.conductor.cyborg17_providers`); of their traits,
Cyborg takes off only those it put there itself, which the database
records (:mod:`cyborg.conductor.placement_records`).
"""

import dataclasses
import uuid as uuid_lib

import os_traits

from cyborg.common import attributes as common_attributes
from cyborg.common import placement_names
from cyborg.conductor import cyborg17_providers
from cyborg.conductor import placement_records
from cyborg.objects import deployable as deployable_obj
from cyborg import states

OWNER_TRAIT = os_traits.OWNER_CYBORG

#: Earlier builds of Cyborg derived provider uuids as uuid5 of the name in
#: this namespace; their providers are still recognised as Cyborg's.
_FORMER_NAMESPACE = uuid_lib.UUID('0c7ed2fa-98da-443e-8435-7eaa52b21e75')


def _derived(rp):
    """Whether ``rp``'s uuid is one Cyborg derives (or did) from its name."""
    return rp['uuid'] in (placement_names.provider_uuid(rp['name']),
                          str(uuid_lib.uuid5(_FORMER_NAMESPACE, rp['name'])))


@dataclasses.dataclass(frozen=True)
class Provider:
    """What Placement should hold for one deployable."""

    name: str
    uuid: str
    deployable: deployable_obj.Deployable
    inventories: dict
    traits: frozenset


def _inventory(total, reserved):
    return {'total': total, 'reserved': reserved, 'min_unit': 1,
            'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}


def provider(hostname, deployable, device, attributes):
    """The :class:`Provider` a deployable's rows ask for, or None.

    None for a deployable that offers nothing (no resource class, or no
    accelerator).

    :param attributes: the deployable's (key, value) attributes.
    """
    resource_class, traits = common_attributes.decode(attributes)
    total = deployable.num_accelerators
    if not resource_class or total <= 0:
        return None
    # A device under maintenance, quarantined as unhealthy, or gone from
    # its host while an instance still holds one of its accelerators,
    # takes no new allocations.
    closed = (device.status == states.DEVICE_MAINTAINING or
              device.quarantined_at is not None or
              device.vanished_at is not None)
    reserved = total if closed else 0
    name = placement_names.provider_name(hostname, deployable.name)
    return Provider(name=name, uuid=placement_names.provider_uuid(name),
                    deployable=deployable,
                    inventories={resource_class: _inventory(total,
                                                            reserved)},
                    traits=traits | {OWNER_TRAIT})


def owned(rp, seen):
    """Whether Cyborg may change or delete ``rp``.

    It carries ``OWNER_CYBORG``; or it is bare (no trait, no inventory)
    with a uuid Cyborg derives from its name, which only a create of
    Cyborg's cut short before its traits were set can leave.
    """
    if OWNER_TRAIT in seen.traits:
        return True
    return not seen.traits and not seen.inventories and _derived(rp)


class NotOurs(Exception):
    """The provider lacks OWNER_CYBORG: Cyborg leaves it alone."""


@dataclasses.dataclass(frozen=True)
class Change:
    """What a pass does to the provider of one deployable.

    ``rp`` is None for a provider to create. ``add`` are the traits to
    put on it, ``remove`` those Cyborg put on it earlier and no longer
    reports; every other trait stays. ``placed``: what Cyborg has put on
    it once this is done. ``adopted``: it is openstack-cyborg 17.0.0's,
    taken over.
    """

    provider: Provider
    rp: dict
    seen: placement_records.Record
    add: frozenset
    remove: frozenset
    placed: frozenset
    adopted: bool = False

    @property
    def writes(self):
        """Whether Placement must be written to."""
        return bool(self.rp is None or self.add or self.remove or
                    self.seen.inventories != self.provider.inventories)


def change(provider, rp, seen, parent_uuid):
    """What makes ``rp``, as ``seen``, the provider of ``provider``.

    :raises NotOurs: it is neither Cyborg's nor adoptable.
    """
    adopted = not owned(rp, seen)
    if adopted and not cyborg17_providers.adoptable(rp, provider,
                                                    parent_uuid):
        raise NotOurs()
    add = provider.traits - seen.traits
    return Change(provider, rp, seen, add=add,
                  remove=(seen.placed & seen.traits) - provider.traits,
                  placed=(seen.placed & provider.traits) | add,
                  adopted=adopted)


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a sync of one host does; see :func:`plan`.

    ``changes``: the :class:`Change` of each provider Placement must be
    written to (``rp`` None: created), in the order of the providers;
    ``unchanged`` those of the providers that are right already.
    ``doomed``: the providers of the tree to delete. ``not_ours``:
    (provider, rp) where a provider that is not Cyborg's has the name or
    uuid a deployable needs. ``unread``: (provider, rp, error) where the
    provider a deployable needs could not be read; ``kept``: (rp, error)
    where a provider no deployable needs could not be read, and so is
    kept.
    """

    changes: tuple = ()
    unchanged: tuple = ()
    doomed: tuple = ()
    not_ours: tuple = ()
    unread: tuple = ()
    kept: tuple = ()


def plan(providers, tree, seen, parent_uuid):
    """What makes the compute node's tree hold exactly ``providers``.

    A provider is found by its uuid, else its name, else the one its
    deployable records (openstack-cyborg 17.0.0's); one that is missing
    is created. A provider of the tree that no deployable needs is
    deleted if it is Cyborg's (see :func:`owned`).

    :param providers: the :class:`Provider` objects wanted (see
        :func:`provider`).
    :param tree: {uuid: provider} of the compute node's tree, the node
        itself left out.
    :param seen: {uuid: :class:`~cyborg.conductor.placement_records.
        Record`, or the exception that reading it raised} of each provider
        of the tree.
    :param parent_uuid: the compute node's provider.
    :returns: a :class:`Plan`.
    """
    by_name = {rp['name']: rp for rp in tree.values()}
    wanted = {key for wanted_provider in providers
              for key in (wanted_provider.name, wanted_provider.uuid)}
    needed = set()
    found = {name: [] for name in (
        'changes', 'unchanged', 'not_ours', 'unread', 'kept')}
    for wanted_provider in providers:
        rp = (tree.get(wanted_provider.uuid) or
              by_name.get(wanted_provider.name) or
              cyborg17_providers.recorded(tree, wanted_provider, wanted))
        if rp is None:
            found['changes'].append(Change(
                wanted_provider, None, placement_records.UNBORN,
                add=wanted_provider.traits, remove=frozenset(),
                placed=wanted_provider.traits))
            continue
        needed.add(rp['uuid'])
        record = seen[rp['uuid']]
        if isinstance(record, Exception):
            found['unread'].append((wanted_provider, rp, record))
            continue
        try:
            result = change(wanted_provider, rp, record, parent_uuid)
        except NotOurs:
            found['not_ours'].append((wanted_provider, rp))
            continue
        found['changes' if result.writes else 'unchanged'].append(result)
    doomed = []
    for rp in tree.values():
        if rp['uuid'] in needed:
            continue
        record = seen[rp['uuid']]
        if isinstance(record, Exception):
            found['kept'].append((rp, record))
        elif owned(rp, record):
            doomed.append(rp)
    return Plan(doomed=tuple(doomed),
                **{name: tuple(items) for name, items in found.items()})
