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
"""Keeping Placement in step with every host's inventory.

The conductor syncs a host's providers right after its agent's report and
after a device is enabled or disabled; on top of that, a periodic pass
(:class:`Reconciler`) syncs every known host once per ``[conductor]
reconcile_interval``. That pass repairs drift (providers, traits or
inventory changed by hand) and finishes syncs that failed, for example
while Placement was down: the database holds the truth, so nothing is
lost in the meantime. Every sync runs under the host's inventory lease.
The same pass releases the quarantined devices that have been healthy for
``[conductor] quarantine_quiet_period`` (:mod:`cyborg.conductor.health`).
"""

import time

from oslo_log import log

from cyborg.clients import placement
from cyborg.conductor import health
from cyborg.conductor import inventory
from cyborg.conductor import metric
from cyborg.conductor import placement_sync
import cyborg.conf
from cyborg import exception
from cyborg.objects import device as device_obj
from cyborg.objects import host as host_obj

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


def sync(context, hostname, owner, client=None):
    """Sync the host's providers now, under its inventory lease.

    :returns: the summary of :func:`placement_sync.sync_host`, or None
        while the host's compute node provider is unknown (its agent asks
        for it before its first report, so a host no agent ever started
        on has none).
    :raises HostLeaseHeld: another conductor is working on the host.
    :raises PlacementUnavailable: Placement cannot be reached.
    """
    host = host_obj.Host.placed(context, hostname)
    if host is None:
        LOG.info('Host %s has no compute node provider yet; its devices '
                 'reach Placement once its agent has found it', hostname)
        return None
    with inventory.host_lease(context, hostname, owner), \
            metric.placement_sync(context) as timed:
        summary = placement_sync.sync_host(
            context, hostname, host.compute_rp_uuid,
            client or placement.PlacementClient())
        timed.failed = bool(summary['failed'])
    changes = {k: v for k, v in summary.items() if v and k != 'unchanged'}
    if changes:
        LOG.info('Placement sync of host %(host)s: %(changes)s',
                 {'host': hostname, 'changes': changes})
    return summary


class Reconciler:
    """The periodic pass over all hosts; one per conductor process.

    :param owner: a callable returning this process's lease owner name.
    """

    def __init__(self, owner):
        self._owner = owner
        self._synced = {}  # host name -> time.monotonic() of its last sync

    def stale(self, hostname):
        """Sync ``hostname`` at the next pass, whatever the interval."""
        self._synced.pop(hostname, None)

    def _due(self, hostname, now):
        last = self._synced.get(hostname)
        return last is None or now - last >= CONF.conductor.reconcile_interval

    def release_recovered(self, context):
        """Release the quarantined devices healthy for the quiet period.

        Their hosts are synced at this pass's :meth:`run`; a host another
        conductor works on is left to a later pass.
        """
        for hostname in health.recovered_hosts(context):
            try:
                with inventory.host_lease(context, hostname, self._owner()):
                    # Read again under the lease: a report may have come.
                    devices = health.release_due(
                        context, device_obj.Device.list(
                            context, filters={'hostname': hostname}))
            except exception.HostLeaseHeld:
                continue
            health.notify(context, devices)
            self.stale(hostname)

    def run(self, context):
        """Sync every host whose interval has passed.

        A host another conductor is working on is left to it, a host
        whose request Placement refuses is tried again next pass; when
        Placement cannot be reached the pass stops and the next one
        starts over.
        """
        client = placement.PlacementClient()
        for host in host_obj.Host.list(context):
            now = time.monotonic()
            if not self._due(host.hostname, now):
                continue
            try:
                sync(context, host.hostname, self._owner(), client)
            except exception.HostLeaseHeld:
                continue
            except exception.PlacementRequestFailed as e:
                # This host's request was refused; the others may go on.
                LOG.warning('Placement sync of host %(host)s failed, tried '
                            'again next pass: %(error)s',
                            {'host': host.hostname, 'error': e})
                continue
            except exception.PlacementUnavailable as e:
                LOG.warning('Placement reconciliation stopped, tried again '
                            'in %(interval)d s: %(error)s',
                            {'interval': CONF.periodic_interval,
                             'error': e})
                return
            self._synced[host.hostname] = now
