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
"""ARQ binds, in the RPC call or in the background.

A patch's binds that need nothing but a PCI handle (no bitstream to load,
no mdev to make) are done in the RPC call (:func:`start`): each ARQ moves
to BindStarted, claims a handle and is marked Bound, or BindFailed when
none is left, in one transaction with its event for Nova, and the event
goes to the process's sender in memory. The others are done in the
background, one BindStarted ARQ after the other, in order: a bind resumed
after a restart, or one that programs, checks again (as :func:`check` did
before the bind started) that the resource provider is a deployable of
the named host that can serve the ARQ's profile group; claim a free
attach handle (a conditional UPDATE, so never one handle for two ARQs);
program the FPGA when the group asks for a bitstream or function the
deployable does not hold; create the mediated device of an MDEV handle;
mark the ARQ Bound. A PCI handle that needs no programming is claimed and
the ARQ marked Bound in one transaction. Any failure marks it BindFailed
and gives the handle back. Once every ARQ of an instance is resolved,
Nova gets one ``accelerator-request-bound`` event per ARQ in one call.
Each ARQ bound, failed or unbound is notified once its change is
committed (:mod:`cyborg.conductor.notifications`).

The mdev of an MDEV handle is named by the handle's uuid, which is the
``attach_handle_uuid`` that the API shows and os-acc and Nova attach. A
leftover mdev is therefore reused, not duplicated, by the next bind of the
same handle.

Every step can be repeated: a conductor that restarts resumes the binds it
left in BindStarted (:func:`resume_binds`), and a bind older than
``[DEFAULT] bind_timeout`` is failed (:func:`expire_binds`). A deployable
whose FPGA region is being programmed is bound by none (see
:mod:`cyborg.conductor.programming`): the check refuses it, and so does
the claim, should the programming start after the check.
"""

import collections
import datetime
import time
import typing

from oslo_log import log
from oslo_utils import timeutils

from cyborg.clients import placement
from cyborg.common import attributes as common_attributes
from cyborg.common import pci_address
from cyborg.common import profile_group
from cyborg.conductor import cyborg17_agents
from cyborg.conductor import metric
from cyborg.conductor import notifications
from cyborg.conductor import nova_events
from cyborg.conductor import programming
from cyborg.conductor import unbinding
import cyborg.conf
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.objects import host as host_obj
from cyborg import states

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


# --- checks before anything is claimed --------------------------------------

def _refused(arq, rp_uuid, reason):
    return exception.BindRefused(uuid=arq.uuid, rp=rp_uuid, reason=reason)


def _names_host(context, name, hostname):
    """Whether ``name``, from Nova, names the host ``hostname``.

    Nova names the compute node of the instance (its node name, which its
    resource provider is named after); a host is known by the name of its
    compute node provider that its agent found at start, whatever its
    ``[DEFAULT] host``, so the two are the same. Only another name needs
    Placement: the provider may have been renamed since, and the provider
    Placement has under that name must be the one the host's devices hang
    under.
    """
    if name == hostname:
        return True
    host = host_obj.Host.placed(context, hostname)
    if host is None:
        return False
    if name in (host.compute_rp_name, host.cyborg17_server):
        return True
    rp = placement.PlacementClient().get_provider_by_name(name)
    return rp is not None and rp['uuid'] == host.compute_rp_uuid


def _check_serves(arq, rp_uuid, resource_class, traits):
    """The deployable's resource class and traits satisfy the ARQ's group."""
    group = profile_group.parse(arq.device_profile_group)
    for wanted in sorted(group.resources):
        if wanted != resource_class:
            raise _refused(arq, rp_uuid, _(
                'it offers %(rc)s, the group asks for %(wanted)s') % {
                    'rc': resource_class, 'wanted': wanted})
    lacking = sorted(group.required - traits)
    if lacking:
        raise _refused(arq, rp_uuid, _('it lacks required trait %s')
                       % ', '.join(lacking))
    forbidden = sorted(group.forbidden & traits)
    if forbidden:
        raise _refused(arq, rp_uuid, _('it has forbidden trait %s')
                       % ', '.join(forbidden))


class Checked(typing.NamedTuple):
    """What :func:`check` found behind the resource provider."""

    #: The deployable.
    deployable: deployable_obj.Deployable
    #: Its device.
    device: device_obj.Device
    #: Its traits.
    traits: frozenset
    #: Whether a handle of it is an MDEV one.
    mdev: bool


def check(context, arq, hostname, rp_uuid, targets=None):
    """Whether ``arq`` can be bound to ``rp_uuid`` on ``hostname``.

    Checked before a bind starts, so that the PATCH itself is refused
    (Nova then aborts the boot at once), and again when a conductor
    resumes a bind, as the inventory may have changed meanwhile, or runs
    one that programs. A bind that just started and programs nothing uses
    what the first check found.

    :param targets: {rp_uuid: :class:`~cyborg.objects.accelerator_request.
        BindTarget`} as read for the whole patch; None reads this one.
    :returns: a :class:`Checked`.
    :raises BindRefused: no deployable has the resource provider, it is
        on another host (the host's compute node, as Nova names it) or
        no longer reported, it (or its FPGA region) is being programmed,
        or its resource class or traits do not fit the ARQ's profile
        group.
    """
    if targets is None:
        targets = arq_obj.AcceleratorRequest.bind_targets(context, [rp_uuid])
    target = targets.get(rp_uuid)
    if target is None:
        raise _refused(arq, rp_uuid, _('no deployable has it'))
    deployable, device = target.deployable, target.device
    if not _names_host(context, hostname, device.hostname):
        raise _refused(arq, rp_uuid, _('it is on host %(other)s, not on '
                                       '%(host)s') % {
            'other': device.hostname, 'host': hostname})
    if device.vanished_at is not None:
        raise _refused(arq, rp_uuid, _('its device %s is no longer reported '
                                       'by its host') % device.uuid)
    since = target.programming_since
    # A resumed bind holding a handle of it programmed it itself.
    if since is not None and not (arq.attach_handle_id is not None and
                                  arq.deployable_id == deployable.id):
        # What it will hold is not what its traits said; the claim refuses
        # it too, should the programming start after this check.
        raise _refused(arq, rp_uuid, _(
            'its FPGA region is being programmed since %s') %
            since.isoformat())
    resource_class, traits = common_attributes.decode(target.attributes)
    _check_serves(arq, rp_uuid, resource_class, traits)
    return Checked(deployable, device, traits, target.mdev)


# --- one ARQ -----------------------------------------------------------------

def _remaining(arq, deadline):
    left = deadline - time.monotonic()
    if left <= 0:
        raise exception.BindFailed(uuid=arq.uuid, reason=_(
            'not done within [DEFAULT] bind_timeout (%d s)')
            % CONF.bind_timeout)
    return left


def _bind_steps(context, arq, agent, deadline, made, checked):
    _remaining(arq, deadline)
    if checked is None or programming.asked(arq.device_profile_group):
        # What an earlier ARQ of the instance loaded counts.
        checked = check(context, arq, arq.hostname, arq.device_rp_uuid)
    deployable, device = checked.deployable, checked.device
    bitstream = programming.needed(context, arq.device_profile_group,
                                   deployable, checked.traits)
    # A PCI handle needing no bitstream is all: Bound as it is claimed.
    if arq.claim_handle(context, deployable.id, finish=bitstream is None):
        return
    handle = handle_obj.AttachHandle.get_by_id(context, arq.attach_handle_id)
    if bitstream is not None:
        programming.program(context, deployable, device, agent,
                            timeout=_remaining(arq, deadline),
                            keep=handle.id, **bitstream)
    if handle.attach_type == states.ATTACH_MDEV:
        _remaining(arq, deadline)
        made['mdev'] = handle
        agent.create_mdev(context, device.hostname, handle.uuid,
                          handle.attach_info['asked_type'],
                          pci_address.join(handle.attach_info))
    _remaining(arq, deadline)
    arq.update_state(context, states.BOUND, expected=[states.BIND_STARTED])


def bind(context, arq, agent, deadline, checked=None):
    """Bind one BindStarted ARQ: Bound, or BindFailed with its reason logged.

    :param agent: a :class:`cyborg.conductor.cyborg17_agents.HostAgents`
        (or :class:`cyborg.agent.rpcapi.AgentAPI`).
    :param deadline: :func:`time.monotonic` value by which it must be done.
    :param checked: what :func:`check` returned for this bind as it
        started; None checks again (a resumed bind).
    :returns: the resolved ARQ, or None when it left BindStarted by other
        hands (unbound, deleted or bound elsewhere): no event is due then.
    """
    made = {}
    # The deadline is [DEFAULT] bind_timeout after the bind started (see
    # submit): as the PATCH moved the ARQ to BindStarted, or, for a
    # resumed bind, as long ago as the ARQ has been binding.
    started = deadline - CONF.bind_timeout
    try:
        _bind_steps(context, arq, agent, deadline, made, checked)
        _bound(context, arq, started)
        return arq
    except (exception.BindFailed, exception.BindRefused) as e:
        reason = e.kwargs['reason']
    except unbinding.AGENT_ERRORS as e:
        # Includes the ARQ being unbound or deleted meanwhile.
        reason = str(e)
    except Exception as e:
        # A background bind has no caller to raise to: an unexpected
        # error must still fail the ARQ instead of leaving it binding.
        LOG.exception('Unexpected error binding accelerator request %s',
                      arq.uuid)
        reason = repr(e)
    resolved = _fail(context, arq, agent, reason, made.get('mdev'))
    if resolved is not None:
        metric.bind_resolved(context, resolved, time.monotonic() - started)
    return resolved


def _bound(context, arq, started):
    """Report a bind that ended Bound; ``started``: its monotonic start."""
    LOG.info('Accelerator request %(uuid)s is bound to %(handle)s',
             {'uuid': arq.uuid, 'handle': arq.attach_handle_uuid})
    notifications.arq_bound(context, arq)
    metric.bind_resolved(context, arq, time.monotonic() - started)


def _fail(context, arq, agent, reason, mdev_handle=None):
    LOG.warning('Binding accelerator request %(uuid)s failed: %(reason)s',
                {'uuid': arq.uuid, 'reason': reason})
    resolved = arq
    try:
        arq.fail_bind(context)
    except (exception.AcceleratorRequestNotFound,
            exception.AcceleratorRequestInvalidState) as e:
        LOG.info('Accelerator request %(uuid)s left as it is: %(err)s',
                 {'uuid': arq.uuid, 'err': e})
        resolved = None
    else:
        notifications.arq_bind_failed(context, arq)
    if mdev_handle is not None:
        handle = handle_obj.AttachHandle.get_by_id(context, mdev_handle.id)
        if not handle.in_use:
            unbinding.remove_mdev(context, agent, handle, quiet=True)
    return resolved


# --- instances: binds in the background and Nova events ----------------------

def bind_instance(context, arqs, deadline, checked=None):
    """Bind the ARQs of one instance in turn, then have Nova told.

    Each bound or failed ARQ recorded its event; the senders deliver them
    (:mod:`cyborg.conductor.nova_events`).

    :param checked: {ARQ uuid: what :func:`check` returned}, for binds
        just checked; the others are checked again.
    """
    agent = cyborg17_agents.HostAgents()
    checked = checked or {}
    for arq in arqs:
        bind(context, arq, agent, deadline, checked.get(arq.uuid))
    nova_events.due()


def _by_instance(arqs):
    groups = collections.defaultdict(list)
    for arq in arqs:
        groups[arq.instance_uuid].append(arq)
    return groups


def _at_once(arq, checked):
    """Whether a bind needs nothing but a PCI handle (no mdev, no loading)."""
    return not checked.mdev and programming.loaded(
        arq.device_profile_group, checked.deployable, checked.traits)


def start(context, binds, checked, executor):
    """Start checked binds; finish them at once when a handle is all.

    When no bind of the patch has a bitstream to load or an mdev to make,
    every ARQ is moved to BindStarted, given a PCI handle and marked Bound
    in one transaction, with its event for Nova, which this process's
    sender gets at once (:func:`cyborg.conductor.nova_events.due`): the
    ARQs are Bound when the PATCH is answered. Otherwise, or when one of
    them finds no handle (that transaction then changes nothing), they
    move to BindStarted together and are bound in the background
    (:func:`submit`): a bind that cannot be done ends BindFailed there,
    with its reason, and the events of an instance are sent together once
    all its ARQs are resolved.

    :param binds: {ARQ uuid: (the ARQ, its bind values)}.
    :param checked: {ARQ uuid: what :func:`check` returned}.
    :raises AcceleratorRequestInvalidState: an ARQ changed since it was
        read; none moved.
    """
    events = None
    if all(_at_once(arq, checked[uuid])
           for uuid, (arq, _values) in binds.items()):
        started = time.monotonic()
        try:
            events = arq_obj.AcceleratorRequest.start_binds(
                context, binds, claims={uuid: checked[uuid].deployable.id
                                        for uuid in binds},
                hold=nova_events.hold())
        except (exception.AttachHandleUnavailable,
                exception.DeployableProgramming) as e:
            LOG.info('Accelerator requests %(uuids)s are bound in the '
                     'background: %(err)s', {'uuids': sorted(binds),
                                             'err': e})
    if events is None:
        arq_obj.AcceleratorRequest.start_binds(context, binds)
    else:
        for arq, _values in binds.values():
            if arq.state == states.BOUND:
                _bound(context, arq, started)
        if events:
            nova_events.due(events)
    # An MDEV handle claimed at once, though none was seen, is made in the
    # background.
    left = [arq for arq, _values in binds.values()
            if arq.state == states.BIND_STARTED]
    if left:
        submit(context, left, executor, checked=checked)


def submit(context, arqs, executor, deadline=None, checked=None):
    """Bind BindStarted ARQs in the background, one task per instance.

    :param deadline: :func:`time.monotonic` value by which the binds must
        be done; ``[DEFAULT] bind_timeout`` from now by default.
    :param checked: {ARQ uuid: what :func:`check` returned} for binds
        checked as they started, which are not checked again; the others
        (resumed binds) are.
    :returns: the futures of the tasks.
    """
    if deadline is None:
        deadline = time.monotonic() + CONF.bind_timeout
    return [executor.submit(bind_instance, context, group, deadline,
                            checked)
            for group in _by_instance(arqs).values()]


# --- binds a conductor left behind -------------------------------------------

def _cutoff():
    return timeutils.utcnow() - datetime.timedelta(seconds=CONF.bind_timeout)


def expire_binds(context):
    """Fail the binds that outlived ``[DEFAULT] bind_timeout``.

    Meant for a periodic task. Nova is told of the failed ARQs.

    :returns: the ARQs that were failed.
    """
    # Programmings a dead conductor left: their binds fail here too.
    programming.expire(context)
    arqs = arq_obj.AcceleratorRequest.list_bind_started(
        context, updated_before=_cutoff())
    if not arqs:
        return []
    agent = cyborg17_agents.HostAgents()
    expired = []
    for arq in arqs:
        started = arq.updated_at or arq.created_at
        resolved = _fail(context, arq, agent,
                         _('not done within [DEFAULT] bind_timeout '
                           '(%d s)') % CONF.bind_timeout,
                         unbinding.mdev_of(context, arq))
        if resolved is not None:
            metric.bind_resolved(context, resolved, timeutils.delta_seconds(
                started, resolved.updated_at))
            expired.append(resolved)
    nova_events.due()
    return expired


def resume_binds(context, executor):
    """Finish or fail every bind left in BindStarted, at service start.

    Binds past ``[DEFAULT] bind_timeout`` fail; the others run again in the
    background within what is left of their time. Every step of a bind can
    be repeated, so a bind that another conductor is still running only
    ends once: the last transition is conditional.

    :returns: the futures of the resumed binds.
    """
    expire_binds(context)
    now = timeutils.utcnow()
    futures = []
    for group in _by_instance(arq_obj.AcceleratorRequest.list_bind_started(
            context)).values():
        started = min(a.updated_at or a.created_at for a in group)
        age = (now - started.replace(tzinfo=None)).total_seconds()
        deadline = time.monotonic() + max(CONF.bind_timeout - age, 0)
        LOG.info('Resuming binds of accelerator requests %s',
                 [a.uuid for a in group])
        futures.extend(submit(context, group, executor, deadline=deadline))
    return futures
