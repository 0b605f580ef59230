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
"""Server side of the conductor RPC API: a thin delegating manager.

Each method hands its work to one workflow module. Keep the version and
the methods in step with :mod:`cyborg.conductor.rpcapi`.
"""

import os
import time

import futurist
from oslo_log import log
import oslo_messaging as messaging

from cyborg.clients import placement
from cyborg.common import rpc
from cyborg.conductor import accelerator_request
from cyborg.conductor import attribute as attribute_flow
from cyborg.conductor import audit
from cyborg.conductor import cyborg17_agents
from cyborg.conductor import device as device_flow
from cyborg.conductor import device_profile
from cyborg.conductor import inventory
from cyborg.conductor import placement_sync
from cyborg.conductor import reconcile
import cyborg.conf
from cyborg import context as cyborg_context
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import host as host_obj

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


def own_context():
    """The conductor's own admin context, current for this thread's logs.

    The logs of an agent's call then name no identity the message
    claimed.
    """
    return cyborg_context.RequestContext(is_admin=True, roles=['admin'])


class ConductorManager:
    """The conductor's RPC endpoint."""

    RPC_API_VERSION = '1.6'

    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, host, executor=None):
        self.host = host
        self.executor = executor or futurist.ThreadPoolExecutor(
            max_workers=CONF.thread_pool_size)
        self.reconciler = reconcile.Reconciler(lambda: self.owner)
        #: The process's :class:`cyborg.conductor.agent_topics.AgentTopics`,
        #: set by whoever serves them.
        self.agent_topics = None

    @property
    def owner(self):
        """This process's name on host leases (workers fork after init)."""
        return '%s:%d' % (self.host, os.getpid())

    def _sync_placement(self, context, hostname):
        """Sync the host with Placement now, or at the next periodic pass.

        The database already holds the change, so a busy host, or a
        Placement that cannot be reached or refuses, only delays it.
        """
        try:
            reconcile.sync(context, hostname, self.owner)
        except (exception.HostLeaseHeld,
                exception.PlacementUnavailable,
                exception.PlacementRequestFailed) as e:
            LOG.warning('Placement sync of host %(host)s postponed to the '
                        'next reconciliation: %(error)s',
                        {'host': hostname, 'error': e})
            self.reconciler.stale(hostname)

    def _serve_compute_node_rp(self, context, hostname, rp_name):
        """compute_node_rp for an agent.

        Agents' calls carry no identity the conductor trusts: callers pass
        :func:`own_context`, whatever the message claimed (admin, roles,
        project, token).
        """
        rp_uuid = placement_sync.compute_node_rp(
            placement.PlacementClient(), rp_name)
        host_obj.Host.set_compute_rp(context, hostname, rp_uuid, rp_name)
        return rp_uuid

    def _serve_report(self, context, host_report):
        """report_host for an agent, in :func:`own_context`."""
        inventory.apply_report(context, host_report, self.owner)
        self._sync_placement(context, host_report.hostname)

    @staticmethod
    def _shared_topic_open(action, host):
        """Agents of the release before report here, while allowed.

        :raises SharedTopicClosed: ``[conductor]
            serve_agents_on_shared_topic`` is off.
        """
        if not CONF.conductor.serve_agents_on_shared_topic:
            LOG.warning('Refused %(action)s for host %(host)s on the shared '
                        'topic: [conductor] serve_agents_on_shared_topic is '
                        'False', {'action': action, 'host': host})
            raise exception.SharedTopicClosed(action=action, host=host)

    @rpc.expected_exceptions(exception.CyborgException)
    def compute_node_rp(self, context, hostname, rp_name):
        context = own_context()
        self._hear_new_host(hostname, rp_name)
        self._shared_topic_open('compute_node_rp', hostname)
        return self._serve_compute_node_rp(context, hostname, rp_name)

    def _hear_new_host(self, hostname, rp_name):
        """Serve a compute node's own topic now, not at the next pass.

        An agent of this release asks here when no conductor serves its
        host's topic yet (see :class:`cyborg.conductor.rpcapi.
        AgentConductorAPI`). A name that Placement knows as a compute node
        is one the periodic pass would serve anyway: serving it now grants
        nothing more, and the agent's next try on its topic is answered.
        """
        if self.agent_topics is None or hostname != rp_name or (
                hostname in self.agent_topics.hosts):
            return
        try:
            placement_sync.compute_node_rp(placement.PlacementClient(),
                                           rp_name)
        except exception.CyborgException:
            return
        self.agent_topics.serve(hostname)

    @rpc.expected_exceptions(exception.CyborgException)
    def report_host(self, context, host_report):
        context = own_context()
        self._shared_topic_open('report_host', host_report.hostname)
        self._serve_report(context, host_report)

    @rpc.expected_exceptions(exception.CyborgException)
    def report_data(self, context, hostname, driver_device_list):
        """The report of an openstack-cyborg 17.0.0 agent.

        Not in :mod:`cyborg.conductor.rpcapi`: only 17.0.0's agents call
        it, during a rolling upgrade (:mod:`cyborg.conductor.cyborg17_agents`).
        They send version 1.0, which oslo.messaging dispatches to this 1.x
        target: same major version, a minor version no higher.
        """
        context = own_context()
        self._shared_topic_open('report_data', hostname)
        cyborg17_agents.report(context, hostname, driver_device_list,
                               self.owner)
        self._sync_placement(context, hostname)

    @rpc.expected_exceptions(exception.CyborgException)
    def device_profile_create(self, context, profile):
        return device_profile.create(context, profile)

    @rpc.expected_exceptions(exception.CyborgException)
    def device_profiles_delete(self, context, uuids, names):
        device_profile.delete(context, uuids, names)

    @rpc.expected_exceptions(exception.CyborgException)
    def device_profile_update(self, context, uuid, values):
        return device_profile.update(context, uuid, values)

    @rpc.expected_exceptions(exception.CyborgException)
    def arq_create(self, context, device_profile_name, project_id):
        return accelerator_request.create(context, device_profile_name,
                                          project_id)

    @rpc.expected_exceptions(exception.CyborgException)
    def arq_apply_patch(self, context, patch, deadline=None):
        late = 0 if deadline is None else time.time() - deadline
        if late > 0:
            # The caller stopped waiting and answered that no conductor
            # did: carried out now, a bind would hold a device for an
            # instance its caller gave up.
            LOG.warning('arq_apply_patch of %(arqs)s received %(late).1f s '
                        'after its caller stopped waiting: refused',
                        {'arqs': ', '.join(sorted(patch)), 'late': late})
            raise exception.ServiceUnavailable(reason=_(
                'the call reached a conductor %.1f s after its caller '
                'stopped waiting; nothing changed') % late)
        accelerator_request.start_binds(context, patch, self.executor)

    @rpc.expected_exceptions(exception.CyborgException)
    def arq_delete(self, context, uuids=None, instance_uuid=None):
        accelerator_request.delete(context, uuids=uuids,
                                   instance_uuid=instance_uuid)

    @rpc.expected_exceptions(exception.CyborgException)
    def device_set_status(self, context, device_uuid, status):
        device = device_flow.set_status(context, device_uuid, status)
        self._sync_placement(context, device.hostname)

    @rpc.expected_exceptions(exception.CyborgException)
    def device_release(self, context, device_uuid):
        device = device_flow.release(context, device_uuid, self.owner)
        self._sync_placement(context, device.hostname)

    @rpc.expected_exceptions(exception.CyborgException)
    def deployable_program(self, context, deployable_uuid, image_uuid):
        return device_flow.program(context, deployable_uuid, image_uuid)

    @rpc.expected_exceptions(exception.CyborgException)
    def attribute_create(self, context, attribute):
        return attribute_flow.create(context, attribute)

    @rpc.expected_exceptions(exception.CyborgException)
    def attribute_delete(self, context, uuid):
        attribute_flow.delete(context, uuid)

    @rpc.expected_exceptions(exception.CyborgException)
    def audit_heal(self, context):
        return audit.heal(context, CONF, self.owner)
