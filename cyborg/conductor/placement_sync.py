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
the same deployables, which Cyborg adopts (see :func:`_adoptable`); and of
their traits, Cyborg takes off only those it put there itself, which the
database records (see :mod:`cyborg.conductor.placement_records`).
"""

import collections
import dataclasses
import uuid as uuid_lib

import os_traits
from oslo_log import log

from cyborg.common import attributes as common_attributes
from cyborg.common import placement_names
from cyborg.conductor import placement_records
from cyborg import exception
from cyborg.objects import attribute as attribute_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
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


def _withheld(attr, programming):
    """Whether a trait says what a region being programmed held.

    The database lost such traits as the programming started; a report
    the host sent meanwhile may have brought them back, untrue still.
    """
    return (attr.deployable_id in programming and
            common_attributes.is_trait_key(attr.key) and
            placement_names.names_loaded(attr.value))


def _host_deployables(context, hostname):
    """[(deployable, device, [(attribute key, value)])] of a host.

    Deployables being programmed lack the traits of what they held.
    """
    devices = {d.id: d for d in device_obj.Device.list(
        context, filters={'hostname': hostname})}
    if not devices:
        return []
    deployables = deployable_obj.Deployable.list(
        context, filters={'device_id': list(devices)})
    attributes = collections.defaultdict(list)
    if deployables:
        ids = [d.id for d in deployables]
        programming = deployable_obj.Deployable.being_programmed(context,
                                                                 ids)
        for attr in attribute_obj.Attribute.list(
                context, filters={'deployable_id': ids}):
            if not _withheld(attr, programming):
                attributes[attr.deployable_id].append((attr.key,
                                                       attr.value))
    return [(dep, devices[dep.device_id], attributes[dep.id])
            for dep in deployables]


def wanted_providers(context, hostname):
    """[(deployable, its :class:`Provider` or None)] of a host's rows.

    What a sync would make Placement hold; None for a deployable that
    offers nothing (no resource class, or no accelerator).
    """
    return [(row[0], _provider(hostname, *row))
            for row in _host_deployables(context, hostname)]


def _provider(hostname, deployable, device, attributes):
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
    return Provider(name=name, uuid=provider_uuid(name),
                    deployable=deployable,
                    inventories={resource_class: _inventory(total,
                                                            reserved)},
                    traits=traits | {OWNER_TRAIT})


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


@dataclasses.dataclass(frozen=True)
class _Change:
    """What a pass does to the provider of one deployable.

    ``rp`` is None for a provider to create. ``add`` are the traits to
    put on it, ``remove`` those Cyborg put on it earlier and no longer
    reports; every other trait stays. ``placed``: what Cyborg has put on
    it once this is done.
    """

    provider: Provider
    rp: dict
    seen: placement_records.Record
    add: frozenset
    remove: frozenset
    placed: frozenset

    @property
    def writes(self):
        """Whether Placement must be written to."""
        return bool(self.rp is None or self.add or self.remove or
                    self.seen.inventories != self.provider.inventories)


def _change(provider, rp, seen, parent_uuid):
    """What makes ``rp``, as ``seen``, the provider of ``provider``.

    :raises _NotOurs: it is neither Cyborg's nor adoptable.
    """
    if not _owned(rp, seen):
        if not _adoptable(rp, provider, parent_uuid):
            raise _NotOurs()
        LOG.info('Adopting resource provider %(name)s (%(uuid)s), made by '
                 'openstack-cyborg for deployable %(dep)s: it gets trait '
                 '%(trait)s and keeps its uuid, allocations and traits',
                 {'name': rp['name'], 'uuid': rp['uuid'],
                  'dep': provider.deployable.uuid, 'trait': OWNER_TRAIT})
    add = provider.traits - seen.traits
    return _Change(provider, rp, seen, add=add,
                   remove=(seen.placed & seen.traits) - provider.traits,
                   placed=(seen.placed & provider.traits) | add)


def _apply(client, change, records, parent_uuid):
    """Create or fix a provider as ``change`` says; returns its uuid."""
    provider, rp, seen = change.provider, change.rp, change.seen
    if rp is None:
        rp = client.create_provider(provider.uuid, provider.name,
                                    parent_uuid)
        # Traits first: OWNER_CYBORG marks the provider as ours at once.
        generation = client.put_traits(rp['uuid'], rp['generation'],
                                       provider.traits)
        traits = provider.traits
        action = 'Created'
    else:
        generation = (rp['generation'] if seen.generation is None
                      else seen.generation)
        traits = seen.traits
        if change.add or change.remove:
            generation, traits = client.change_traits(
                rp['uuid'], generation, seen.traits, change.add,
                change.remove)
        action = 'Updated'
    if seen.inventories != provider.inventories:
        generation = client.put_inventories(rp['uuid'], generation,
                                            provider.inventories)
    records.set(rp['uuid'], placement_records.Record(
        generation, frozenset(traits), provider.inventories, change.placed))
    LOG.info('%(action)s resource provider %(name)s (%(uuid)s)',
             {'action': action, 'name': rp['name'], 'uuid': rp['uuid']})
    return rp['uuid']


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
    host's deployables, which is adopted. Of a provider's traits, only
    those that Cyborg put there itself and no longer reports are taken
    off. A pass that finds nothing to change reads the compute node's
    tree once and writes nothing: the database keeps a record of each
    provider of the tree (see :mod:`~cyborg.conductor.placement_records`),
    so this holds whichever conductor made the last pass.

    :returns: counts of providers ``created``, ``updated``, ``deleted``,
        ``unchanged`` and ``failed`` (tried again next pass).
    :raises PlacementUnavailable: Placement cannot be reached; the pass
        stopped and the next one starts over.
    """
    rows = _host_deployables(context, hostname)
    tree = _tree(client, compute_rp_uuid)
    records = placement_records.Records(context, hostname, tree)
    summary = dict.fromkeys(
        ('created', 'updated', 'deleted', 'unchanged', 'failed'), 0)
    providers = [_provider(hostname, *row) for row in rows]
    # Deployables without a provider forget theirs.
    rp_uuids = {row[0].uuid: None
                for row, provider in zip(rows, providers) if provider is None}
    try:
        changes, doomed = _plan(providers, tree, compute_rp_uuid, client,
                                records, rp_uuids, summary)
        # What Cyborg is about to put on providers is recorded before it
        # is: a pass cut short in between still takes it off when due.
        for change in changes:
            if change.add:
                records.set(change.rp['uuid'] if change.rp
                            else change.provider.uuid,
                            dataclasses.replace(
                                change.seen, generation=None,
                                placed=change.seen.placed | change.add))
        records.save()
        _execute(changes, doomed, compute_rp_uuid, client, records,
                 rp_uuids, summary)
    finally:
        records.save()
        _store_rp_uuids(context, rows, rp_uuids)
    LOG.debug('Placement sync of host %(host)s: %(summary)s',
              {'host': hostname, 'summary': summary})
    return summary


def _tree(client, compute_rp_uuid):
    """{uuid: provider} of the compute node's tree, the node left out."""
    return {rp['uuid']: rp for rp in client.providers_in_tree(
        compute_rp_uuid) if rp['uuid'] != compute_rp_uuid}


def _plan(providers, tree, compute_rp_uuid, client, records, rp_uuids,
          summary):
    """Decide what each provider needs, reading only what moved.

    :returns: the :class:`_Change` of each provider that Placement must
        be written to, and the providers of the tree to delete.
    """
    by_name = {rp['name']: rp for rp in tree.values()}
    needed = set()
    wanted = {key for provider in filter(None, providers)
              for key in (provider.name, provider.uuid)}
    changes = []
    for provider in filter(None, providers):
        rp = (tree.get(provider.uuid) or by_name.get(provider.name) or
              _recorded(tree, provider, wanted))
        if rp is None:
            changes.append(_Change(provider, None,
                                   placement_records.UNBORN,
                                   add=provider.traits, remove=frozenset(),
                                   placed=provider.traits))
            continue
        needed.add(rp['uuid'])
        try:
            change = _change(provider, rp, records.read(client, rp),
                             compute_rp_uuid)
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
            _failed(provider, rp, records, summary, e)
            continue
        if change.writes:
            changes.append(change)
            continue
        records.set(rp['uuid'], dataclasses.replace(change.seen,
                                                    placed=change.placed))
        rp_uuids[provider.deployable.uuid] = rp['uuid']
        summary['unchanged'] += 1

    doomed = []
    for rp in tree.values():
        if rp['uuid'] in needed:
            continue
        try:
            if _owned(rp, records.read(client, rp)):
                doomed.append(rp)
        except _PROVIDER_ERRORS as e:
            _kept(rp, records, summary, e)
    return changes, doomed


def _execute(changes, doomed, compute_rp_uuid, client, records, rp_uuids,
             summary):
    """Write the changes and delete the doomed providers."""
    for change in changes:
        try:
            rp_uuid = _apply(client, change, records, compute_rp_uuid)
        except _PROVIDER_ERRORS as e:
            _failed(change.provider, change.rp, records, summary, e)
            continue
        rp_uuids[change.provider.deployable.uuid] = rp_uuid
        summary['created' if change.rp is None else 'updated'] += 1
    for rp in doomed:
        try:
            client.delete_provider(rp['uuid'])
        except _PROVIDER_ERRORS as e:
            _kept(rp, records, summary, e)
            continue
        records.forget(rp['uuid'])
        LOG.info('Deleted resource provider %(name)s (%(uuid)s): no '
                 'deployable needs it any more',
                 {'name': rp['name'], 'uuid': rp['uuid']})
        summary['deleted'] += 1


def _failed(provider, rp, records, summary, error):
    LOG.error('Resource provider %(name)s of deployable %(dep)s not '
              'synced, tried again next pass: %(error)s',
              {'name': provider.name, 'dep': provider.deployable.uuid,
               'error': error})
    records.stale(rp['uuid'] if rp else provider.uuid)
    summary['failed'] += 1


def _kept(rp, records, summary, error):
    LOG.warning('Resource provider %(name)s (%(uuid)s) is no longer needed '
                'but is kept, tried again next pass: %(error)s',
                {'name': rp['name'], 'uuid': rp['uuid'], 'error': error})
    records.stale(rp['uuid'])
    summary['failed'] += 1
