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
"""Make Placement show a host's deployables, and keep it so.

Each deployable that offers accelerators becomes a child resource provider
of the host's compute node provider; this module derives their names and
uuids, and :func:`sync_host` both applies a new inventory report and
repairs drift on the periodic reconcile. Only providers with trait
``OWNER_CYBORG`` are ever changed, and those that openstack-cyborg made for
the same deployables, which Cyborg adopts (see :func:`_adoptable`).
"""

import collections
import dataclasses
import hashlib
import json
import threading
import uuid as uuid_lib

import os_traits
from oslo_log import log

from cyborg.common import attributes as common_attributes
from cyborg import exception
from cyborg.objects import attribute as attribute_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.objects import host as host_obj
from cyborg import states

LOG = log.getLogger(__name__)

OWNER_TRAIT = os_traits.OWNER_CYBORG

#: Earlier builds of Cyborg derived provider uuids as uuid5 of the name in
#: this namespace; their providers are still recognised as Cyborg's.
_FORMER_NAMESPACE = uuid_lib.UUID('0c7ed2fa-98da-443e-8435-7eaa52b21e75')

# Failures that spoil one provider only: the others are still synced and
# the next pass tries this one again.
_PROVIDER_ERRORS = (exception.ResourceProviderExists,
                    exception.ObjectInUse,
                    exception.PlacementRequestFailed,
                    exception.ResourceProviderGenerationConflict)


def provider_name(hostname, deployable_name):
    """The resource provider name of a deployable of ``hostname``."""
    return '%s_%s' % (hostname, deployable_name)


def provider_uuid(name):
    """The resource provider uuid that Cyborg gives the provider ``name``.

    A name-based uuid (version 3, DNS namespace) of the name, as
    openstack-cyborg derives it: every conductor finds the same provider
    for the same deployable, and so does the service Cyborg replaces.
    """
    return str(uuid_lib.uuid3(uuid_lib.NAMESPACE_DNS, name))


def _derived(rp):
    """Whether ``rp``'s uuid is one Cyborg derives (or did) from its name."""
    return rp['uuid'] in (provider_uuid(rp['name']),
                          str(uuid_lib.uuid5(_FORMER_NAMESPACE, rp['name'])))


@dataclasses.dataclass(frozen=True)
class Provider:
    """What Placement should hold for one deployable."""

    name: str
    uuid: str
    deployable: deployable_obj.Deployable
    inventories: dict
    traits: frozenset


@dataclasses.dataclass(frozen=True)
class _Seen:
    """A provider as it was after the last pass that read or wrote it.

    ``generation`` is None when two reads saw different generations, so
    the next pass reads it again.
    """

    generation: object
    traits: frozenset
    inventories: dict


# Provider uuid -> _Seen, shared by every pass of the process. A provider
# whose generation in the tree listing matches is not read again.
_seen = {}
_seen_lock = threading.Lock()


def _remember(rp_uuid, seen):
    with _seen_lock:
        if seen is None:
            _seen.pop(rp_uuid, None)
        else:
            _seen[rp_uuid] = seen


def forget_providers():
    """Forget what every provider looked like: the next pass reads all."""
    with _seen_lock:
        _seen.clear()


def compute_node_rp(client, rp_name):
    """The uuid of the compute node provider ``rp_name`` (Nova's).

    :raises ResourceProviderNotFound: Placement does not know it (yet).
    """
    rp = client.get_provider_by_name(rp_name)
    if rp is None:
        raise exception.ResourceProviderNotFound(name=rp_name)
    return rp['uuid']


def _inventory(total, reserved):
    return {'total': total, 'reserved': reserved, 'min_unit': 1,
            'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}


def _host_deployables(context, hostname):
    """[(deployable, device, [(attribute key, value)])] of a host."""
    devices = {d.id: d for d in device_obj.Device.list(
        context, filters={'hostname': hostname})}
    if not devices:
        return []
    deployables = deployable_obj.Deployable.list(
        context, filters={'device_id': list(devices)})
    attributes = collections.defaultdict(list)
    if deployables:
        for attr in attribute_obj.Attribute.list(
                context,
                filters={'deployable_id': [d.id for d in deployables]}):
            attributes[attr.deployable_id].append((attr.key, attr.value))
    return [(dep, devices[dep.device_id], attributes[dep.id])
            for dep in deployables]


def _provider(hostname, deployable, device, attributes):
    resource_class, traits = common_attributes.decode(attributes)
    total = deployable.num_accelerators
    if not resource_class or total <= 0:
        return None
    # A device under maintenance, or gone from its host while an instance
    # still holds one of its accelerators, takes no new allocations.
    closed = (device.status == states.DEVICE_MAINTAINING or
              device.vanished_at is not None)
    reserved = total if closed else 0
    name = provider_name(hostname, deployable.name)
    return Provider(name=name, uuid=provider_uuid(name),
                    deployable=deployable,
                    inventories={resource_class: _inventory(total,
                                                            reserved)},
                    traits=traits | {OWNER_TRAIT})


def _read(client, rp):
    """A provider's traits and inventories, from the cache if unchanged."""
    with _seen_lock:
        seen = _seen.get(rp['uuid'])
    if seen is not None and seen.generation == rp['generation']:
        return seen
    trait_gen, traits = client.get_traits(rp['uuid'])
    inv_gen, inventories = client.get_inventories(rp['uuid'])
    seen = _Seen(inv_gen if inv_gen == trait_gen else None,
                 frozenset(traits), inventories)
    _remember(rp['uuid'], seen)
    return seen


def _owned(rp, seen):
    """Whether Cyborg may change or delete ``rp``.

    It carries ``OWNER_CYBORG``; or it is bare (no trait, no inventory)
    with a uuid Cyborg derives from its name, which only a create of
    Cyborg's cut short before its traits were set can leave.
    """
    if OWNER_TRAIT in seen.traits:
        return True
    return not seen.traits and not seen.inventories and _derived(rp)


def _adoptable(rp, provider, parent_uuid):
    """Whether ``rp`` is openstack-cyborg's provider of ``provider``.

    openstack-cyborg marked only some of its providers with
    ``OWNER_CYBORG`` (GPUs and generic PCI devices, not FPGAs, QAT, NICs
    or SSDs). A provider without it is taken over only when it is exactly
    what that service made for this deployable, directly below the compute
    node: the same name and the uuid derived from that name, or the
    provider the deployable records (see :func:`_recorded`). A provider
    of that name with any other uuid or parent is someone else's.
    """
    return (rp['parent_provider_uuid'] == parent_uuid and (
        rp['name'] == provider.name and rp['uuid'] == provider.uuid or
        _recorded_by_openstack_cyborg(rp, provider)))


def _recorded_by_openstack_cyborg(rp, provider):
    """Whether the deployable records ``rp``, whose uuid its name derives.

    openstack-cyborg named a deployable's provider after the deployable,
    and its database, converted, keeps the provider's uuid in the
    deployable's ``rp_uuid``.
    """
    return (rp['uuid'] == provider.deployable.rp_uuid and
            rp['uuid'] == provider_uuid(rp['name']))


def _recorded(tree, provider, wanted):
    """The provider the deployable records, where it has another name.

    openstack-cyborg named some deployables otherwise than Cyborg does
    (after the system's host name, an FPGA after its last virtual
    function, a vGPU without its type): the database conversion renames
    the deployable but keeps its ``rp_uuid``, so its provider is found
    and keeps its uuid and allocations. Not where another deployable of
    the host wants that provider's name or uuid.
    """
    rp = tree.get(provider.deployable.rp_uuid)
    if (rp is None or rp['name'] in wanted or rp['uuid'] in wanted or
            not _recorded_by_openstack_cyborg(rp, provider)):
        return None
    return rp


class _NotOurs(Exception):
    """The provider lacks OWNER_CYBORG: Cyborg leaves it alone."""


def _create(client, provider, parent_uuid):
    rp = client.create_provider(provider.uuid, provider.name, parent_uuid)
    # Traits first: OWNER_CYBORG marks the provider as ours at once.
    generation = client.put_traits(rp['uuid'], rp['generation'],
                                   provider.traits)
    generation = client.put_inventories(rp['uuid'], generation,
                                        provider.inventories)
    _remember(rp['uuid'], _Seen(generation, provider.traits,
                                provider.inventories))
    LOG.info('Created resource provider %(name)s (%(uuid)s)',
             {'name': provider.name, 'uuid': rp['uuid']})
    return rp['uuid']


def _update(client, provider, rp, parent_uuid):
    """Fix the traits and inventories of ``rp``; whether it changed."""
    seen = _read(client, rp)
    if not _owned(rp, seen):
        if not _adoptable(rp, provider, parent_uuid):
            raise _NotOurs()
        LOG.info('Adopting resource provider %(name)s (%(uuid)s), made by '
                 'openstack-cyborg for deployable %(dep)s: it gets trait '
                 '%(trait)s and keeps its uuid and allocations',
                 {'name': rp['name'], 'uuid': rp['uuid'],
                  'dep': provider.deployable.uuid, 'trait': OWNER_TRAIT})
    if seen.traits == provider.traits and (seen.inventories ==
                                           provider.inventories):
        return False
    generation = (rp['generation'] if seen.generation is None
                  else seen.generation)
    if seen.traits != provider.traits:
        generation = client.put_traits(rp['uuid'], generation,
                                       provider.traits)
    if seen.inventories != provider.inventories:
        generation = client.put_inventories(rp['uuid'], generation,
                                            provider.inventories)
    _remember(rp['uuid'], _Seen(generation, provider.traits,
                                provider.inventories))
    LOG.info('Updated resource provider %(name)s (%(uuid)s)',
             {'name': rp['name'], 'uuid': rp['uuid']})
    return True


def _delete_if_owned(client, rp):
    """Delete a provider no deployable needs, if it is Cyborg's."""
    if not _owned(rp, _read(client, rp)):
        return False
    client.delete_provider(rp['uuid'])
    _remember(rp['uuid'], None)
    LOG.info('Deleted resource provider %(name)s (%(uuid)s): no deployable '
             'needs it any more', {'name': rp['name'], 'uuid': rp['uuid']})
    return True


def _store_rp_uuids(context, rows, rp_uuids):
    """Record in each deployable the uuid of its provider.

    ``rp_uuids`` maps deployable uuids to provider uuids (None: it has
    none); a deployable it leaves out, because its provider failed this
    pass, keeps what it had.
    """
    for deployable, _device, _attributes in rows:
        wanted = rp_uuids.get(deployable.uuid, deployable.rp_uuid)
        if deployable.rp_uuid != wanted:
            deployable.rp_uuid = wanted
            deployable.save(context)


def sync_host(context, hostname, compute_rp_uuid, client):
    """Make Placement hold exactly the providers the host's rows ask for.

    Missing providers are created under the compute node, traits and
    inventories fixed, providers of vanished deployables deleted (kept
    while they have allocations); a provider without ``OWNER_CYBORG`` is
    never changed, unless it is openstack-cyborg's provider of one of the
    host's deployables, which is adopted. A pass that finds nothing to
    change reads the compute node's tree once and writes nothing to
    Placement: the host's row keeps a digest of what the last complete
    pass saw, so this holds whichever conductor made that pass.

    :returns: counts of providers ``created``, ``updated``, ``deleted``,
        ``unchanged`` and ``failed`` (tried again next pass).
    :raises PlacementUnavailable: Placement cannot be reached; the pass
        stopped and the next one starts over.
    """
    rows = _host_deployables(context, hostname)
    tree = _tree(client, compute_rp_uuid)
    summary = dict.fromkeys(
        ('created', 'updated', 'deleted', 'unchanged', 'failed'), 0)
    providers = [_provider(hostname, *row) for row in rows]
    digest = _digest(rows, providers, tree)
    if digest == host_obj.Host.placement_digest(context, hostname):
        summary['unchanged'] = sum(1 for p in providers if p is not None)
        LOG.debug('Placement sync of host %(host)s: nothing changed since '
                  'the last complete pass', {'host': hostname})
        return summary
    _pass(context, rows, providers, tree, compute_rp_uuid, client, summary)
    if not summary['failed']:
        if summary['created'] or summary['updated'] or summary['deleted']:
            tree = _tree(client, compute_rp_uuid)
        digest = _digest(rows, providers, tree)
    else:
        digest = None
    host_obj.Host.set_placement_digest(context, hostname, digest)
    LOG.debug('Placement sync of host %(host)s: %(summary)s',
              {'host': hostname, 'summary': summary})
    return summary


def _tree(client, compute_rp_uuid):
    """{uuid: provider} of the compute node's tree, the node left out."""
    return {rp['uuid']: rp for rp in client.providers_in_tree(
        compute_rp_uuid) if rp['uuid'] != compute_rp_uuid}


def _digest(rows, providers, tree):
    """A digest of everything a pass compares.

    The providers the rows ask for, the provider each deployable records,
    and each provider of the tree with its generation, which Placement
    changes with every change of the provider's traits, inventories or
    allocations. When it equals the digest of the last pass that left
    nothing to do, this pass has nothing to do either.
    """
    seen = [
        sorted((row[0].uuid, row[0].rp_uuid) for row in rows),
        sorted((p.uuid, p.name, sorted(p.traits), p.inventories)
               for p in providers if p is not None),
        sorted((rp['uuid'], rp['name'], rp['generation'],
                rp['parent_provider_uuid']) for rp in tree.values()),
    ]
    return hashlib.sha256(json.dumps(seen, sort_keys=True).encode(
        )).hexdigest()


def _pass(context, rows, providers, tree, compute_rp_uuid, client, summary):
    """Create, fix and delete providers; count what happened in summary."""
    by_name = {rp['name']: rp for rp in tree.values()}
    # Deployables without a provider forget theirs.
    rp_uuids = {row[0].uuid: None
                for row, provider in zip(rows, providers) if provider is None}
    needed = set()
    wanted = {key for provider in filter(None, providers)
              for key in (provider.name, provider.uuid)}
    try:
        for provider in filter(None, providers):
            rp = (tree.get(provider.uuid) or by_name.get(provider.name) or
                  _recorded(tree, provider, wanted))
            try:
                if rp is None:
                    rp_uuids[provider.deployable.uuid] = _create(
                        client, provider, compute_rp_uuid)
                    summary['created'] += 1
                    continue
                needed.add(rp['uuid'])
                changed = _update(client, provider, rp, compute_rp_uuid)
            except _NotOurs:
                LOG.error('Resource provider %(name)s (%(uuid)s) does not '
                          'have trait %(trait)s: it is not Cyborg\'s and is '
                          'left alone, so deployable %(dep)s is not offered. '
                          'Delete or rename that provider.',
                          {'name': rp['name'], 'uuid': rp['uuid'],
                           'trait': OWNER_TRAIT,
                           'dep': provider.deployable.uuid})
                summary['failed'] += 1
                continue
            except _PROVIDER_ERRORS as e:
                LOG.error('Resource provider %(name)s of deployable '
                          '%(dep)s not synced, tried again next pass: '
                          '%(error)s', {'name': provider.name,
                                        'dep': provider.deployable.uuid,
                                        'error': e})
                _remember(rp['uuid'] if rp else provider.uuid, None)
                summary['failed'] += 1
                continue
            rp_uuids[provider.deployable.uuid] = rp['uuid']
            summary['updated' if changed else 'unchanged'] += 1

        for rp in tree.values():
            if rp['uuid'] in needed:
                continue
            try:
                if _delete_if_owned(client, rp):
                    summary['deleted'] += 1
            except _PROVIDER_ERRORS as e:
                LOG.warning('Resource provider %(name)s (%(uuid)s) is no '
                            'longer needed but is kept, tried again next '
                            'pass: %(error)s',
                            {'name': rp['name'], 'uuid': rp['uuid'],
                             'error': e})
                _remember(rp['uuid'], None)
                summary['failed'] += 1
    finally:
        _store_rp_uuids(context, rows, rp_uuids)
