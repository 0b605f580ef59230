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
of the host's compute node provider. :func:`survey` reads what a sync
needs and plans it with :func:`cyborg.conductor.placement_plan.plan`,
which holds the rules (which providers are Cyborg's, what differs);
:func:`sync_host` applies that plan, both after a new inventory report
and on the periodic reconcile that repairs drift. ``cyborg-manage audit``
shows the same plan without applying it.
"""

import collections
import dataclasses

from oslo_log import log

from cyborg.common import attributes as common_attributes
from cyborg.common import placement_names
from cyborg.conductor import placement_plan
from cyborg.conductor import placement_records
from cyborg import exception
from cyborg.objects import attribute as attribute_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj

LOG = log.getLogger(__name__)

# Failures that spoil one provider only: the others are still synced and
# the next pass tries this one again.
_PROVIDER_ERRORS = (exception.ResourceProviderExists,
                    exception.ObjectInUse,
                    exception.PlacementRequestFailed,
                    exception.ResourceProviderGenerationConflict)


def compute_node_rp(client, rp_name):
    """The uuid of the compute node provider ``rp_name`` (Nova's).

    :raises ResourceProviderNotFound: Placement does not know it (yet).
    """
    rp = client.get_provider_by_name(rp_name)
    if rp is None:
        raise exception.ResourceProviderNotFound(name=rp_name)
    return rp['uuid']


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


def _apply(client, change, records, parent_uuid):
    """Create or fix a provider as ``change`` says; returns its uuid."""
    provider, rp, seen = change.provider, change.rp, change.seen
    if change.adopted:
        LOG.info('Adopting resource provider %(name)s (%(uuid)s), made by '
                 'openstack-cyborg for deployable %(dep)s: it gets trait '
                 '%(trait)s and keeps its uuid, allocations and traits',
                 {'name': rp['name'], 'uuid': rp['uuid'],
                  'dep': provider.deployable.uuid,
                  'trait': placement_plan.OWNER_TRAIT})
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


@dataclasses.dataclass(frozen=True)
class Survey:
    """What a sync of one host would do, and what it was planned from.

    ``rows``: [(deployable, device, [(attribute key, value)])] of the
    host; ``providers``: the :class:`~cyborg.conductor.placement_plan.
    Provider` (or None) of each; ``tree``: {uuid: provider} of the
    compute node's tree, the node left out; ``records``: the
    :class:`~cyborg.conductor.placement_records.Records` read (not saved);
    ``plan``: the :class:`~cyborg.conductor.placement_plan.Plan`.
    """

    rows: list
    providers: list
    tree: dict
    records: placement_records.Records
    plan: placement_plan.Plan


def survey(context, hostname, compute_rp_uuid, client):
    """Read the host's rows and tree, and plan its sync; writes nothing.

    Each provider of the tree is read from Placement unless its record
    has its generation (see :class:`~cyborg.conductor.placement_records.
    Records`).

    :raises PlacementUnavailable: Placement cannot be reached.
    """
    rows = _host_deployables(context, hostname)
    tree = _tree(client, compute_rp_uuid)
    records = placement_records.Records(context, hostname, tree)
    providers = [placement_plan.provider(hostname, *row) for row in rows]
    seen = {}
    for rp_uuid, rp in tree.items():
        try:
            seen[rp_uuid] = records.read(client, rp)
        except _PROVIDER_ERRORS as e:
            seen[rp_uuid] = e
    return Survey(rows, providers, tree, records, placement_plan.plan(
        [provider for provider in providers if provider is not None],
        tree, seen, compute_rp_uuid))


def sync_host(context, hostname, compute_rp_uuid, client):
    """Make Placement hold exactly the providers the host's rows ask for.

    Applies the plan of :func:`survey`: missing providers are created
    under the compute node, traits and inventories fixed, providers of
    vanished deployables deleted (kept while they have allocations); a
    provider without ``OWNER_CYBORG`` is never changed, unless it is
    openstack-cyborg's provider of one of the host's deployables, which is
    adopted. Of a provider's traits, only those that Cyborg put there
    itself and no longer reports are taken off. A pass that finds nothing
    to change reads the compute node's tree once and writes nothing: the
    database keeps a record of each provider of the tree (see
    :mod:`~cyborg.conductor.placement_records`), so this holds whichever
    conductor made the last pass.

    :returns: counts of providers ``created``, ``updated``, ``deleted``,
        ``unchanged`` and ``failed`` (tried again next pass).
    :raises PlacementUnavailable: Placement cannot be reached; the pass
        stopped and the next one starts over.
    """
    found = survey(context, hostname, compute_rp_uuid, client)
    records, plan = found.records, found.plan
    summary = dict.fromkeys(
        ('created', 'updated', 'deleted', 'unchanged', 'failed'), 0)
    # Deployables without a provider forget theirs.
    rp_uuids = {row[0].uuid: None for row, provider
                in zip(found.rows, found.providers) if provider is None}
    try:
        _account(plan, records, rp_uuids, summary)
        # What Cyborg is about to put on providers is recorded before it
        # is: a pass cut short in between still takes it off when due.
        for change in plan.changes:
            if change.add:
                records.set(change.rp['uuid'] if change.rp
                            else change.provider.uuid,
                            dataclasses.replace(
                                change.seen, generation=None,
                                placed=change.seen.placed | change.add))
        records.save()
        _execute(plan.changes, plan.doomed, compute_rp_uuid, client,
                 records, rp_uuids, summary)
    finally:
        records.save()
        _store_rp_uuids(context, found.rows, rp_uuids)
    LOG.debug('Placement sync of host %(host)s: %(summary)s',
              {'host': hostname, 'summary': summary})
    return summary


def _tree(client, compute_rp_uuid):
    """{uuid: provider} of the compute node's tree, the node left out."""
    return {rp['uuid']: rp for rp in client.providers_in_tree(
        compute_rp_uuid) if rp['uuid'] != compute_rp_uuid}


def _account(plan, records, rp_uuids, summary):
    """Tell what the plan leaves alone or cannot do; record what is right."""
    for provider, rp in plan.not_ours:
        LOG.error('Resource provider %(name)s (%(uuid)s) does not '
                  'have trait %(trait)s: it is not Cyborg\'s and is '
                  'left alone, so deployable %(dep)s is not offered. '
                  'Delete or rename that provider.',
                  {'name': rp['name'], 'uuid': rp['uuid'],
                   'trait': placement_plan.OWNER_TRAIT,
                   'dep': provider.deployable.uuid})
        summary['failed'] += 1
    for provider, rp, error in plan.unread:
        _failed(provider, rp, records, summary, error)
    for change in plan.unchanged:
        records.set(change.rp['uuid'], dataclasses.replace(
            change.seen, placed=change.placed))
        rp_uuids[change.provider.deployable.uuid] = change.rp['uuid']
        summary['unchanged'] += 1
    for rp, error in plan.kept:
        _kept(rp, records, summary, error)


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
