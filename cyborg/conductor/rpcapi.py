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
"""Client side of the conductor RPC API.

The API calls on topic ``cyborg-conductor``; agents send their reports on
a topic of their host's own (:class:`AgentConductorAPI`).

Versioned like a public API. Each method names the version it needs; a
rolling upgrade caps the version sent with ``[upgrade_levels] conductor``.

History:

* 1.0 - Initial version: compute_node_rp, report_host;
  device_profile_create,
  device_profiles_delete; arq_create, arq_apply_patch, arq_delete;
  device_set_status; deployable_program; attribute_create,
  attribute_delete.
* 1.1 - device_profile_update.
* 1.2 - device_release.
* 1.3 - report_host's devices may carry health (DeviceReport 1.1).
* 1.4 - compute_node_rp and report_host are served on topic
  ``cyborg-conductor-agent``, server ``<host>``: one per host, serving
  only them. Agents capped below 1.4 send them on ``cyborg-conductor``.
* 1.5 - audit_heal (``cyborg-manage audit --heal`` repairs in a
  conductor). The agents' topics serve nothing new.
* 1.6 - arq_apply_patch takes a deadline, after which a conductor that
  receives it refuses it. The agents' topics serve nothing new.
"""

import time

import oslo_messaging as messaging

from cyborg.common import rpc
import cyborg.conf
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import base as objects_base
from cyborg.objects import driver_report

CONF = cyborg.conf.CONF

TOPIC = 'cyborg-conductor'
#: Agents' reports go to this topic with their host as the server: RabbitMQ
#: routing key ``cyborg-conductor-agent.<host>``.
AGENT_TOPIC = 'cyborg-conductor-agent'

#: Seconds a caller of deployable_program waits beyond the agent's time.
PROGRAM_MARGIN = 30


class ConductorAPI:
    """What the API and the agents ask the conductor to do."""

    RPC_API_VERSION = '1.6'

    def __init__(self, topic=TOPIC):
        target = messaging.Target(topic=topic, version='1.0')
        self.client = rpc.get_client(
            target, objects_base.CyborgObjectSerializer(),
            version_cap=CONF.upgrade_levels.conductor or
            self.RPC_API_VERSION)

    def _call(self, context, version, method, timeout=None, **kwargs):
        return rpc.call(self.client.prepare(version=version, timeout=timeout),
                        context, method, _('no conductor'), **kwargs)

    def compute_node_rp(self, context, hostname, rp_name, timeout=None):
        """The uuid of the compute node's resource provider in Placement.

        An agent asks this at start, before its first report, because it
        never talks to Placement itself.

        :param hostname: the host the provider is recorded for; an agent
            gives ``rp_name``, the name it then reports under.
        :param timeout: seconds to wait for an answer; by default
            ``[DEFAULT] rpc_response_timeout``.
        :raises ResourceProviderNotFound: Placement does not know it yet.
        :raises ServiceUnavailable: no conductor answered in time.
        """
        return self._call(context, '1.0', 'compute_node_rp', timeout=timeout,
                          hostname=hostname, rp_name=rp_name)

    def report_host(self, context, host_report):
        """Apply an agent's report of its host's accelerators.

        Capped below 1.3, while conductors of a release that knows no
        DeviceReport 1.1 run, the report goes without health.
        """
        if self.client.can_send_version('1.3'):
            return self._call(context, '1.3', 'report_host',
                              host_report=host_report)
        return self._call(context, '1.0', 'report_host',
                          host_report=driver_report.HostReport.
                          obj_from_primitive(host_report.obj_to_primitive(
                              version_manifest={'DeviceReport': '1.0'})))

    def device_profile_create(self, context, profile):
        """Store a new DeviceProfile object; returns the stored one."""
        return self._call(context, '1.0', 'device_profile_create',
                          profile=profile)

    def device_profiles_delete(self, context, uuids=(), names=()):
        """Delete profiles by uuid and name, all or none."""
        return self._call(context, '1.0', 'device_profiles_delete',
                          uuids=list(uuids), names=list(names))

    def device_profile_update(self, context, uuid, values):
        """Change a profile's description, groups or enabled flag.

        :param values: {field: new value}, already validated.
        :returns: the updated DeviceProfile.
        :raises ServiceUnavailable: ``[upgrade_levels] conductor`` holds
            the conductors below 1.1 during a rolling upgrade.
        """
        if not self.client.can_send_version('1.1'):
            raise exception.ServiceUnavailable(reason=_(
                'device profiles can be changed once every conductor is '
                'upgraded ([upgrade_levels] conductor is below 1.1)'))
        return self._call(context, '1.1', 'device_profile_update',
                          uuid=uuid, values=values)

    def arq_create(self, context, device_profile_name, project_id):
        """Create the ARQs a profile asks for; returns them."""
        return self._call(context, '1.0', 'arq_create',
                          device_profile_name=device_profile_name,
                          project_id=project_id)

    def arq_apply_patch(self, context, patch, deadline=None):
        """Bind or unbind ARQs.

        Binds that need nothing but a PCI function are done when this
        returns; the others complete in the background.

        :param patch: {arq_uuid: {'hostname', 'device_rp_uuid',
            'instance_uuid'[, 'project_id']} to bind, or None to unbind}.
        :param deadline: the time (``time.time()``) after which a conductor
            that receives the call refuses it, changing nothing; by default
            when the call stops waiting (``[DEFAULT] rpc_response_timeout``
            from now). The caller has then answered that no conductor
            answered, and a bind carried out later would hold a device for
            an instance its caller gave up. Conductors capped below 1.6 get
            no deadline.
        :raises ServiceUnavailable: no conductor answered in time, or the
            one that received the call did so after the deadline.
        """
        if not self.client.can_send_version('1.6'):
            return self._call(context, '1.0', 'arq_apply_patch', patch=patch)
        if deadline is None:
            deadline = time.time() + CONF.rpc_response_timeout
        return self._call(context, '1.6', 'arq_apply_patch', patch=patch,
                          deadline=deadline)

    def arq_delete(self, context, uuids=None, instance_uuid=None):
        """Delete ARQs by uuid (all or none) or by instance."""
        return self._call(context, '1.0', 'arq_delete', uuids=uuids,
                          instance_uuid=instance_uuid)

    def device_set_status(self, context, device_uuid, status):
        """Enable or disable (maintaining) a device and its inventory."""
        return self._call(context, '1.0', 'device_set_status',
                          device_uuid=device_uuid, status=status)

    def device_release(self, context, device_uuid):
        """End a device's health quarantine and free its inventory.

        :raises ServiceUnavailable: ``[upgrade_levels] conductor`` holds
            the conductors below 1.2 during a rolling upgrade.
        """
        if not self.client.can_send_version('1.2'):
            raise exception.ServiceUnavailable(reason=_(
                'quarantined devices can be released once every conductor '
                'is upgraded ([upgrade_levels] conductor is below 1.2)'))
        return self._call(context, '1.2', 'device_release',
                          device_uuid=device_uuid)

    def deployable_program(self, context, deployable_uuid, image_uuid):
        """Program an FPGA deployable; returns the updated Deployable.

        The conductor gives the host's agent ``[DEFAULT] bind_timeout`` to
        program, so the caller waits that long and a little more.
        """
        return self._call(context, '1.0', 'deployable_program',
                          timeout=CONF.bind_timeout + PROGRAM_MARGIN,
                          deployable_uuid=deployable_uuid,
                          image_uuid=image_uuid)

    def audit_heal(self, context, timeout=None):
        """Audit, and repair what is safe to repair, in a conductor.

        See :func:`cyborg.conductor.audit.heal`.

        :param timeout: seconds to wait for the whole audit and its
            repairs; by default ``[DEFAULT] rpc_response_timeout``.
        :returns: the report, as :meth:`cyborg.conductor.audit_report.
            Report.as_dict` gives it.
        :raises ServiceUnavailable: no conductor answered in time, or
            ``[upgrade_levels] conductor`` holds the conductors below 1.5
            during a rolling upgrade.
        """
        if not self.client.can_send_version('1.5'):
            raise exception.ServiceUnavailable(reason=_(
                'the audit can heal once every conductor is upgraded '
                '([upgrade_levels] conductor is below 1.5)'))
        return self._call(context, '1.5', 'audit_heal', timeout=timeout)

    def attribute_create(self, context, attribute):
        return self._call(context, '1.0', 'attribute_create',
                          attribute=attribute)

    def attribute_delete(self, context, uuid):
        return self._call(context, '1.0', 'attribute_delete', uuid=uuid)


class AgentConductorAPI:
    """What an agent asks the conductor: its reports, on its host's topic.

    Each call goes to ``cyborg-conductor-agent.<host>``, ``<host>`` being
    the host the call names, where the conductor serves only these calls
    and only for that host (see :mod:`cyborg.conductor.agent_topics`). A
    message that no conductor's queue takes (no conductor serves that
    host name yet) fails at once. Capped below 1.4 (conductors of the
    release before still run) the calls go on ``cyborg-conductor``.
    """

    RPC_API_VERSION = '1.6'

    def __init__(self):
        target = messaging.Target(topic=AGENT_TOPIC, version='1.4')
        self.client = rpc.get_client(
            target, objects_base.CyborgObjectSerializer(),
            version_cap=CONF.upgrade_levels.conductor or
            self.RPC_API_VERSION, mandatory=True)
        self.shared = ConductorAPI()

    def _call(self, context, host, method, timeout=None, **kwargs):
        return rpc.call(self.client.prepare(server=host, timeout=timeout),
                        context, method, _('no conductor'), **kwargs)

    def _own_topic(self):
        return self.client.can_send_version('1.4')

    def compute_node_rp(self, context, hostname, rp_name, timeout=None):
        """See :meth:`ConductorAPI.compute_node_rp`.

        No conductor serving the host name (yet) may mean conductors that
        serve no such topic: openstack-cyborg 17.0.0's, which an agent
        upgraded too early meets. Asked on the shared topic, they answer
        that they know no such method, which the caller hears (and waits
        for an upgrade); any other answer there leaves the name unserved.

        :raises ResourceProviderNotFound: Placement does not know it, or
            no conductor serves the host name yet: conductors serve the
            names of the compute nodes Placement knows, found again on
            each of their periodic passes.
        """
        if not self._own_topic():
            return self.shared.compute_node_rp(context, hostname, rp_name,
                                               timeout=timeout)
        try:
            return self._call(context, hostname, 'compute_node_rp',
                              timeout=timeout, hostname=hostname,
                              rp_name=rp_name)
        except messaging.MessageUndeliverable as e:
            undelivered = e
        try:
            self.shared.compute_node_rp(context, hostname, rp_name,
                                        timeout=timeout)
        except messaging.RemoteError:
            raise
        except (exception.CyborgException, messaging.MessagingException):
            pass
        raise exception.ResourceProviderNotFound(
            name=rp_name) from undelivered

    def report_host(self, context, host_report):
        """See :meth:`ConductorAPI.report_host`."""
        if not self._own_topic():
            return self.shared.report_host(context, host_report)
        try:
            return self._call(context, host_report.hostname, 'report_host',
                              host_report=host_report)
        except messaging.MessageUndeliverable as e:
            raise exception.ServiceUnavailable(reason=_(
                'no conductor serves host %s yet') %
                host_report.hostname) from e
