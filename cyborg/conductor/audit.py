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
does, and lists what disagrees as :class:`~cyborg.conductor.audit_report.
Finding` objects, each with the repair that ``--heal`` makes where one is
safe. The kinds are documented in ``doc/source/admin/audit.rst``. Where
Placement differs from the database is what the plan of a Placement sync
(:mod:`cyborg.conductor.placement_plan`) would change: the audit shows
that plan, and ``--heal`` applies it.

``cyborg-manage audit`` runs the checks in its own process and changes
nothing; ``--heal`` asks a conductor (RPC ``audit_heal``), which runs
:func:`heal`: the checks again, then the repairs, with the conductor's
own workflows and under its host leases.

What the hosts have is known from their agents' reports, which the
database holds; the agents have no call that lists a host's devices on
demand, so the audit reads the last report there.
"""

import functools

import oslo_messaging as messaging

from cyborg.clients import nova
from cyborg.clients import placement
from cyborg.conductor import audit_report
from cyborg.conductor.inventory_plan import handles as handles_plan
from cyborg.conductor import placement_plan
from cyborg.conductor import placement_sync
from cyborg.conductor import reconcile
from cyborg.conductor import unbinding
from cyborg import exception
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.objects import host as host_obj
from cyborg import states

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


class _NotRepaired(Exception):
    """A repair ran but left the finding as it was."""


def _function(handle):
    """The PCI function a handle hands out, as the plan of a report says.

    See :func:`cyborg.conductor.inventory_plan.handles.function_key`.
    """
    return handles_plan.function_key(handle.attach_type, handle.attach_info)


class Audit:
    """One comparison of the database with Placement and Nova.

    :param placement_client: a :class:`~cyborg.clients.placement.
        PlacementClient`; by default one from ``[placement]``.
    :param nova_client: a :class:`~cyborg.clients.nova.NovaClient`; by
        default one from ``[nova]``.
    :param owner: the name the repairs take host leases under (see
        :func:`cyborg.conductor.inventory.host_lease`); only
        :meth:`heal` needs it.
    """

    def __init__(self, context, conf, placement_client=None,
                 nova_client=None, owner=None):
        self._context = context
        self._placement = placement_client or placement.PlacementClient()
        self._nova = nova_client or nova.NovaClient(conf)
        self._report = audit_report.Report()
        self._servers = {}
        self._sees_all = None
        self._synced = {}
        self._owner = owner

    # --- reading ------------------------------------------------------------

    def run(self):
        """Compare the sources; returns the :class:`audit_report.Report`."""
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
            self._report.unchecked[audit_report.PLACEMENT] = str(e)
        order = {kind: n for n, kind in enumerate(audit_report.KINDS)}
        self._report.findings.sort(key=lambda f: order[f.kind])
        return self._report

    def _found(self, kind, obj, host, detail, repair=None, fix='',
               advice=''):
        """Record a finding; ``fix`` says what ``repair`` will do."""
        self._report.findings.append(audit_report.Finding(
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
                self._report.unchecked[audit_report.NOVA] = str(e)
                self._sees_all = False
                return False
            if not self._sees_all:
                self._report.unchecked[audit_report.NOVA] = (
                    "[nova]'s user may not list every project's servers "
                    "(GET /servers?all_tenants=1 answered 403), so Nova "
                    "answers 404 for the live servers of other projects "
                    "too: no server is taken for gone. Give that user the "
                    "admin role in Nova to audit servers")
        return self._sees_all

    def _server_known(self, server_uuid):
        """Whether Nova knows the server; None when Nova cannot tell."""
        if (audit_report.NOVA in self._report.unchecked or
                not self._nova_sees_all()):
            return None
        if server_uuid not in self._servers:
            try:
                self._servers[server_uuid] = self._nova.server_exists(
                    self._context, server_uuid)
            except exception.NovaUnavailable as e:
                self._report.unchecked[audit_report.NOVA] = str(e)
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
                audit_report.ORPHANED_ARQ, arq.uuid, arq.hostname,
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
                audit_report.HANDLE_WITHOUT_ARQ, handle.uuid,
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
                audit_report.VANISHED_DEVICE, device.uuid, device.hostname,
                'no longer reported by its host since %s, and no ARQ '
                'holds it' % device.vanished_at.isoformat(),
                advice='removed by the next full report of its host; '
                       'restart its agent to send one now')

    def _check_placement(self):
        """Cyborg's providers, their inventories and allocations.

        What differs between Placement and the database is what a sync of
        each host would change: the plan of :mod:`~cyborg.conductor.
        placement_plan`, read here and not applied.
        """
        surveys = {}
        for hostname, host in sorted(self._hosts.items()):
            if host.compute_rp_uuid is None:
                continue  # not in Placement until its agent found its node
            surveys[hostname] = placement_sync.survey(
                self._context, hostname, host.compute_rp_uuid,
                self._placement)
            self._unread(surveys[hostname].plan)
        for hostname, found in surveys.items():
            self._check_providers(hostname, found.plan)
        self._check_allocations()
        for hostname, found in surveys.items():
            self._check_inventories(hostname, found.plan)

    def _unread(self, plan):
        """A provider the plan could not read leaves Placement unchecked."""
        for _provider, _rp, error in plan.unread:
            self._report.unchecked[audit_report.PLACEMENT] = str(error)
        for _rp, error in plan.kept:
            self._report.unchecked[audit_report.PLACEMENT] = str(error)

    def _check_providers(self, host, plan):
        """Providers of Cyborg's, under the host, that no deployable has."""
        for rp in sorted(plan.doomed, key=lambda rp: rp['uuid']):
            rp_uuid = rp['uuid']
            consumers = sorted(self._placement.provider_allocations(rp_uuid))
            detail = ('provider %s has trait %s but no deployable' % (
                rp['name'], placement_plan.OWNER_TRAIT))
            if consumers:
                self._found(
                    audit_report.PROVIDER_WITHOUT_DEVICE, rp_uuid, host,
                    detail + '; consumers %s hold allocations on it'
                    % ', '.join(consumers),
                    advice='delete it once its consumers are gone')
            else:
                self._found(audit_report.PROVIDER_WITHOUT_DEVICE, rp_uuid,
                            host, detail,
                            repair=functools.partial(self._sync, host),
                            fix='delete it (sync host %s with Placement)'
                            % host)

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
            self._found(audit_report.ALLOCATION_WITHOUT_ARQ, rp_uuid, host,
                        detail + '; Nova does not know the consumer',
                        repair=functools.partial(self._remove_allocation,
                                                 consumer, rp_uuid),
                        fix='remove that allocation')
            return
        self._found(audit_report.ALLOCATION_WITHOUT_ARQ, rp_uuid, host,
                    '%s; %s' % (detail, why),
                    advice='audit again once Nova is done with it; if it '
                           'stays, rebuild or delete the server')

    def _check_inventories(self, hostname, plan):
        """Providers that a sync of the host would create or fix."""
        for change in plan.changes:
            provider = change.provider
            if change.rp is None:
                detail = 'deployable %s has no provider in Placement' % (
                    provider.deployable.uuid)
            else:
                detail = _drift(change)
            self._found(audit_report.INVENTORY_DRIFT,
                        change.rp['uuid'] if change.rp else provider.uuid,
                        hostname, detail, repair=functools.partial(
                            self._sync, hostname),
                        fix='sync host %s with Placement' % hostname)
        for provider, rp in plan.not_ours:
            self._found(
                audit_report.INVENTORY_DRIFT, rp['uuid'], hostname,
                'provider %s has the name deployable %s needs but not '
                'trait %s' % (rp['name'], provider.deployable.uuid,
                              placement_plan.OWNER_TRAIT),
                advice='delete or rename that provider')

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
        unbinding.unbind(self._context, arq)
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


def _drift(change):
    """What differs between a provider in Placement and what it should be.

    :param change: a :class:`~cyborg.conductor.placement_plan.Change`.
    """
    actual, wanted = change.seen.inventories, change.provider.inventories
    problems = []
    for resource_class, inventory in sorted(wanted.items()):
        have = actual.get(resource_class)
        if have is None:
            problems.append('no %s inventory' % resource_class)
            continue
        for field in sorted(inventory):
            if have.get(field) != inventory[field]:
                problems.append('%s %s is %s, the database says %s' % (
                    resource_class, field, have.get(field),
                    inventory[field]))
    problems += ['no %s inventory is due' % resource_class
                 for resource_class in sorted(set(actual) - set(wanted))]
    if change.add:
        problems.append('traits %s missing' % ', '.join(sorted(change.add)))
    if change.remove:
        problems.append('traits %s no longer reported' % ', '.join(
            sorted(change.remove)))
    return '; '.join(problems) or 'differs from what the database says'


def heal(context, conf, owner):
    """Audit, then repair what is safe: ``cyborg-manage audit --heal``.

    The conductor runs it (RPC ``audit_heal``), so the repairs are its own
    workflows: an unbind tells the host's agent and Nova, a Placement
    sync runs under the host's lease. Nothing is repaired when a source
    could not be read (see :meth:`Audit.heal`).

    :param owner: the conductor's name on host leases.
    :returns: the :class:`~cyborg.conductor.audit_report.Report` as
        :meth:`~cyborg.conductor.audit_report.Report.as_dict` gives it.
    """
    checker = Audit(context, conf, owner=owner)
    return checker.heal(checker.run()).as_dict()
