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
"""Do the database, Placement and Nova agree? (``cyborg-manage audit``)

The periodic reconcile keeps Placement's providers in step with the
database; nothing else compares the database with Nova's servers, nor
Placement's allocations with the accelerator requests. :class:`Audit`
does, and lists what disagrees as :class:`Finding` objects, each with
the repair that ``--heal`` makes where one is safe. The kinds are
documented in ``doc/source/admin/audit.rst``.

What the hosts have is known from their agents' reports, which the
database holds; the agents have no call that lists a host's devices on
demand, so the audit reads the last report there.
"""

import dataclasses
import functools
import os
import socket

import oslo_messaging as messaging

from cyborg.clients import nova
from cyborg.clients import placement
from cyborg.conductor import binding
from cyborg.conductor import placement_sync
from cyborg.conductor import reconcile
from cyborg import exception
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.objects import host as host_obj
from cyborg import states

ORPHANED_ARQ = 'orphaned_arq'
ALLOCATION_WITHOUT_ARQ = 'allocation_without_arq'
HANDLE_WITHOUT_ARQ = 'handle_without_arq'
PROVIDER_WITHOUT_DEVICE = 'provider_without_device'
VANISHED_DEVICE = 'vanished_device'
INVENTORY_DRIFT = 'inventory_drift'
#: In the order they are checked and repaired: an ARQ unbound first
#: frees its handle, and a provider is synced once its strays are gone.
KINDS = (ORPHANED_ARQ, HANDLE_WITHOUT_ARQ, VANISHED_DEVICE,
         ALLOCATION_WITHOUT_ARQ, PROVIDER_WITHOUT_DEVICE, INVENTORY_DRIFT)

DATABASE, PLACEMENT, NOVA = 'database', 'placement', 'nova'
SOURCES = (DATABASE, PLACEMENT, NOVA)

#: ARQ states in which an ARQ names its instance (and holds or held a
#: handle for it).
_ATTACHED = frozenset((states.BIND_STARTED, states.BOUND, states.BIND_FAILED,
                       states.UNBIND_FAILED))
#: Device types whose drivers report the host's own use of a handle (a
#: mounted NVMe namespace): such a handle is in use with no ARQ by design.
_HOST_USE_TYPES = frozenset(('SSD', 'NVME'))
#: Placement's consumer type of a move operation's allocations, which
#: Nova holds under the migration's uuid, not a server's.
_MIGRATION = 'MIGRATION'

# Failures that leave one finding unrepaired; the others are still tried.
_REPAIR_ERRORS = (exception.CyborgException, messaging.MessagingException)


@dataclasses.dataclass
class Finding:
    """One disagreement between the sources.

    ``repair`` makes it right and returns what it did, or is None where
    no repair is safe: ``advice`` then says what the operator must do.
    ``action`` says what ``--heal`` would do; after :meth:`Audit.heal`,
    what it did, and ``repaired`` whether the finding is gone.
    """

    kind: str
    object: str
    host: str
    detail: str
    advice: str = ''
    repair: object = dataclasses.field(default=None, repr=False)
    action: str = ''
    repaired: bool = False

    def as_dict(self):
        return {'kind': self.kind, 'object': self.object,
                'host': self.host, 'detail': self.detail,
                'repairable': self.repair is not None,
                'action': self.action, 'repaired': self.repaired}


@dataclasses.dataclass
class Report:
    """What an audit found, and which sources it could not read.

    ``unchecked`` maps a source (:data:`SOURCES`) to why it could not be
    read; the checks that needed it were skipped.
    """

    findings: list = dataclasses.field(default_factory=list)
    unchecked: dict = dataclasses.field(default_factory=dict)
    #: Why ``--heal`` changed nothing, when it refused to.
    refused: str = ''

    @property
    def remaining(self):
        return [f for f in self.findings if not f.repaired]

    def exit_status(self):
        """0 all agree, 1 findings remain, 2 a source could not be read."""
        if self.unchecked:
            return 2
        return 1 if self.remaining else 0

    def as_dict(self):
        return {'sources': {name: {'checked': name not in self.unchecked,
                                   'reason': self.unchecked.get(name)}
                            for name in SOURCES},
                'findings': [f.as_dict() for f in self.findings],
                'heal_refused': self.refused or None,
                'exit_status': self.exit_status()}


class _NotRepaired(Exception):
    """A repair ran but left the finding as it was."""


def _function(handle):
    """The PCI function of a handle, which several handles may share."""
    info = handle.attach_info
    return tuple(info.get(k) for k in ('domain', 'bus', 'device',
                                       'function'))


class Audit:
    """One comparison of the database with Placement and Nova.

    :param placement_client: a :class:`~cyborg.clients.placement.
        PlacementClient`; by default one from ``[placement]``.
    :param nova_client: a :class:`~cyborg.clients.nova.NovaClient`; by
        default one from ``[nova]``.
    """

    def __init__(self, context, conf, placement_client=None,
                 nova_client=None):
        self._context = context
        self._placement = placement_client or placement.PlacementClient()
        self._nova = nova_client or nova.NovaClient(conf)
        self._report = Report()
        self._servers = {}
        self._sees_all = None
        self._synced = {}
        self._owner = 'cyborg-manage-audit:%s:%d' % (socket.gethostname(),
                                                     os.getpid())

    # --- reading ------------------------------------------------------------

    def run(self):
        """Compare the sources; returns the :class:`Report`."""
        ctx = self._context
        self._arqs = arq_obj.AcceleratorRequest.list(ctx, sort_key='id')
        self._devices = {d.id: d for d in device_obj.Device.list(ctx)}
        self._deployables = {d.id: d for d in deployable_obj.Deployable.list(
            ctx)}
        self._hosts = {h.hostname: h for h in host_obj.Host.list(ctx)}
        self._check_arqs()
        self._check_handles()
        self._check_devices()
        try:
            self._check_placement()
        except (exception.PlacementUnavailable,
                exception.PlacementRequestFailed) as e:
            self._report.unchecked[PLACEMENT] = str(e)
        order = {kind: n for n, kind in enumerate(KINDS)}
        self._report.findings.sort(key=lambda f: order[f.kind])
        return self._report

    def _found(self, kind, obj, host, detail, repair=None, fix='',
               advice=''):
        """Record a finding; ``fix`` says what ``repair`` will do."""
        self._report.findings.append(Finding(
            kind, obj, host or '-', detail, advice=advice, repair=repair,
            action=('--heal: ' + fix) if repair else 'left: ' + advice))

    def _nova_sees_all(self):
        """Whether Nova's 404 for a server says it is gone.

        Only for a user Nova shows every project's servers: to any other,
        a live server of another project is 404 too, and an audit that
        took it for gone would unbind the accelerators of every server.
        Otherwise Nova counts as not read, and no server as gone.
        """
        if self._sees_all is None:
            try:
                self._sees_all = self._nova.sees_all_projects(self._context)
            except exception.NovaUnavailable as e:
                self._report.unchecked[NOVA] = str(e)
                self._sees_all = False
                return False
            if not self._sees_all:
                self._report.unchecked[NOVA] = (
                    "[nova]'s user may not list every project's servers "
                    "(GET /servers?all_tenants=1 answered 403), so Nova "
                    "answers 404 for the live servers of other projects "
                    "too: no server is taken for gone. Give that user the "
                    "admin role in Nova to audit servers")
        return self._sees_all

    def _server_known(self, server_uuid):
        """Whether Nova knows the server; None when Nova cannot tell."""
        if NOVA in self._report.unchecked or not self._nova_sees_all():
            return None
        if server_uuid not in self._servers:
            try:
                self._servers[server_uuid] = self._nova.server_exists(
                    self._context, server_uuid)
            except exception.NovaUnavailable as e:
                self._report.unchecked[NOVA] = str(e)
                return None
        return self._servers[server_uuid]

    def _device_of(self, deployable_id):
        deployable = self._deployables.get(deployable_id)
        return deployable and self._devices.get(deployable.device_id)

    def _check_arqs(self):
        """ARQs attached to a server that Nova does not know."""
        self._orphans = set()
        for arq in self._arqs:
            if arq.state not in _ATTACHED or not arq.instance_uuid:
                continue
            if self._server_known(arq.instance_uuid) is not False:
                continue
            self._orphans.add(arq.uuid)
            self._found(
                ORPHANED_ARQ, arq.uuid, arq.hostname,
                '%s for instance %s, which Nova does not know' % (
                    arq.state, arq.instance_uuid),
                repair=functools.partial(self._unbind, arq),
                fix='unbind it')

    def _check_handles(self):
        """Handles in use that no ARQ holds nor the host uses."""
        held = {a.attach_handle_id for a in self._arqs
                if a.attach_handle_id is not None}
        busy = {_function(h) for h in handle_obj.AttachHandle.list(
            self._context, filters={'id': sorted(held)})} if held else set()
        for handle in handle_obj.AttachHandle.list(
                self._context, filters={'in_use': True}, sort_key='id'):
            device = self._device_of(handle.deployable_id)
            # A report marks in use the handles the host uses itself and
            # those of a function a held handle already gives out.
            if (handle.id in held or _function(handle) in busy or
                    device is not None and device.type in _HOST_USE_TYPES):
                continue
            self._found(
                HANDLE_WITHOUT_ARQ, handle.uuid,
                device.hostname if device else None,
                'attach handle %s is in use but no ARQ holds it: no bind '
                'can get it' % handle.attach_type,
                repair=functools.partial(self._free, handle),
                fix='free it')

    def _check_devices(self):
        """Devices the host no longer reports that nothing holds."""
        held = {getattr(self._device_of(a.deployable_id), 'id', None)
                for a in self._arqs}
        for device in self._devices.values():
            if device.vanished_at is None or device.id in held:
                continue
            self._found(
                VANISHED_DEVICE, device.uuid, device.hostname,
                'no longer reported by its host since %s, and no ARQ '
                'holds it' % device.vanished_at.isoformat(),
                advice='removed by the next full report of its host; '
                       'restart its agent to send one now')

    def _check_placement(self):
        """Cyborg's providers, their inventories and allocations."""
        owned = {rp['uuid']: rp for rp in self._placement.providers_with_trait(
            placement_sync.OWNER_TRAIT)}
        wanted = {}
        for hostname in sorted({d.hostname for d in self._devices.values()}):
            for deployable, provider in placement_sync.wanted_providers(
                    self._context, hostname):
                if provider is not None:
                    wanted[deployable.id] = (hostname, provider)
        self._check_providers(owned, wanted)
        self._check_allocations()
        self._check_inventories(wanted)

    def _check_providers(self, owned, wanted):
        """Providers of Cyborg's, under its hosts, that no deployable has."""
        known = {d.rp_uuid for d in self._deployables.values()} | {
            provider.uuid for _host, provider in wanted.values()}
        by_root = {h.compute_rp_uuid: h.hostname
                   for h in self._hosts.values()}
        for rp_uuid, rp in sorted(owned.items()):
            host = by_root.get(rp['root_provider_uuid'])
            # Under a compute node of no host of this Cyborg's (another
            # deployment's, sharing Placement), it is not for us to judge.
            if rp_uuid in known or host is None:
                continue
            consumers = sorted(self._placement.provider_allocations(rp_uuid))
            detail = ('provider %s has trait %s but no deployable' % (
                rp['name'], placement_sync.OWNER_TRAIT))
            if consumers:
                self._found(
                    PROVIDER_WITHOUT_DEVICE, rp_uuid, host,
                    detail + '; consumers %s hold allocations on it'
                    % ', '.join(consumers),
                    advice='delete it once its consumers are gone')
            else:
                self._found(PROVIDER_WITHOUT_DEVICE, rp_uuid, host, detail,
                            repair=functools.partial(
                                self._delete_provider, rp_uuid, host),
                            fix='delete it')

    def _check_allocations(self):
        """Allocations on deployables' providers that no ARQ accounts for."""
        bound = {(a.device_rp_uuid, a.instance_uuid) for a in self._arqs
                 if a.device_rp_uuid and a.instance_uuid and
                 a.uuid not in self._orphans}
        for deployable in sorted(self._deployables.values(),
                                 key=lambda d: d.id):
            rp_uuid = deployable.rp_uuid
            if rp_uuid is None:
                continue
            try:
                held = self._placement.provider_allocations(rp_uuid)
            except exception.PlacementRequestFailed as e:
                if e.kwargs.get('status') == 404:
                    continue  # reported by the inventory check
                raise
            device = self._devices.get(deployable.device_id)
            for consumer, resources in sorted(held.items()):
                if (rp_uuid, consumer) not in bound:
                    self._allocation(consumer, rp_uuid, resources,
                                     device.hostname if device else None)

    def _allocation(self, consumer, rp_uuid, resources, host):
        detail = 'consumer %s holds %s on it and no ARQ is bound there' % (
            consumer, ', '.join('%s=%s' % kv for kv in
                                sorted(resources.items())))
        known = self._server_known(consumer)
        kind = self._placement.consumer_allocations(consumer).get(
            'consumer_type')
        if kind == _MIGRATION:
            why = 'it is a migration of Nova\'s'
        elif known:
            why = 'Nova knows server %s: a boot in progress, or a bind ' \
                  'lost' % consumer
        elif known is None:
            why = 'Nova was not asked of it'
        else:
            self._found(ALLOCATION_WITHOUT_ARQ, rp_uuid, host,
                        detail + '; Nova does not know the consumer',
                        repair=functools.partial(self._remove_allocation,
                                                 consumer, rp_uuid),
                        fix='remove that allocation')
            return
        self._found(ALLOCATION_WITHOUT_ARQ, rp_uuid, host,
                    '%s; %s' % (detail, why),
                    advice='audit again once Nova is done with it; if it '
                           'stays, rebuild or delete the server')

    def _check_inventories(self, wanted):
        """Providers whose inventory is not what the database says."""
        for deployable_id, (hostname, provider) in sorted(wanted.items()):
            if self._hosts.get(hostname) is None or (
                    self._hosts[hostname].compute_rp_uuid is None):
                continue  # not in Placement until its agent found its node
            rp_uuid = self._deployables[deployable_id].rp_uuid
            detail = None
            try:
                inventories = (self._placement.get_inventories(rp_uuid)[1]
                               if rp_uuid else None)
            except exception.PlacementRequestFailed as e:
                if e.kwargs.get('status') != 404:
                    raise
                inventories = None
            if inventories is None:
                detail = 'deployable %s has no provider in Placement' % (
                    provider.deployable.uuid)
            else:
                detail = _inventory_drift(inventories, provider.inventories)
            if detail:
                self._found(INVENTORY_DRIFT, rp_uuid or provider.uuid,
                            hostname, detail, repair=functools.partial(
                                self._sync, hostname),
                            fix='sync host %s with Placement' % hostname)

    # --- repairing ----------------------------------------------------------

    def heal(self, report):
        """Repair each finding that can be; says what was done in each.

        Nothing is repaired when a source could not be read (Nova not
        showing every project's servers included): a repair judged from
        part of the picture may undo live state. ``report.refused`` then
        says why.
        """
        if report.unchecked:
            report.refused = ('not every source could be read (%s): '
                              'nothing was changed' % ', '.join(
                                  sorted(report.unchecked)))
            for finding in report.findings:
                if finding.repair is not None:
                    finding.action = '--heal refused: ' + report.refused
            return report
        for finding in report.findings:
            if finding.repair is None:
                continue
            try:
                finding.action = finding.repair()
            except (_NotRepaired,) + _REPAIR_ERRORS as e:
                finding.action = 'not repaired: %s' % e
                continue
            finding.repaired = True
        return report

    def _unbind(self, arq):
        # The conductor's own unbind: handle, mdev and notification.
        binding.unbind(self._context, arq)
        return 'unbound; its attach handle is free'

    def _free(self, handle):
        if not handle_obj.AttachHandle.free_unheld(self._context, handle.id):
            raise _NotRepaired('an ARQ holds it now, or it is free')
        return 'freed'

    def _remove_allocation(self, consumer, rp_uuid):
        if not self._placement.remove_allocation(consumer, rp_uuid):
            raise _NotRepaired('the allocation is gone already')
        return 'removed consumer %s\'s allocation of this provider; its ' \
               'others stay' % consumer

    def _delete_provider(self, rp_uuid, host):
        self._placement.delete_provider(rp_uuid)
        if host is not None:
            host_obj.Host.set_placement_providers(self._context, host, {},
                                                  gone=[rp_uuid])
        return 'deleted'

    def _sync(self, hostname):
        # One sync repairs every drift of its host.
        if hostname not in self._synced:
            summary = reconcile.sync(self._context, hostname, self._owner,
                                     self._placement)
            self._synced[hostname] = summary and not summary['failed']
        if not self._synced[hostname]:
            raise _NotRepaired('the Placement sync of host %s failed; see '
                               'the log' % hostname)
        return 'synced host %s with Placement' % hostname


def _inventory_drift(actual, wanted):
    """What differs between Placement's inventories and the wanted ones."""
    problems = []
    for resource_class, inventory in sorted(wanted.items()):
        have = actual.get(resource_class)
        if have is None:
            problems.append('no %s inventory' % resource_class)
            continue
        for field in ('total', 'reserved'):
            if have.get(field) != inventory[field]:
                problems.append('%s %s is %s, the database says %s' % (
                    resource_class, field, have.get(field),
                    inventory[field]))
    return '; '.join(problems)
