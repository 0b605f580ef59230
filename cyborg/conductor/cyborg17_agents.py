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
"""Compute hosts that still run openstack-cyborg 17.0.0's agent.

A rolling upgrade replaces the controllers first; each compute host keeps
17.0.0's ``cyborg-agent`` until its turn, hours later. That agent shares
this release's topics and exchange but not its methods:

* it reports with ``report_data(hostname, driver_device_list)`` on the
  shared ``cyborg-conductor`` topic. :func:`report` turns the report into
  this release's (:mod:`cyborg.objects.cyborg17_report`) and applies it
  like any other (:func:`cyborg.conductor.inventory.apply_report`); the
  caller then syncs the host with Placement.
* it records, on the host's row, that its agent is 17.0.0's and the name
  it serves RPC under (:meth:`cyborg.objects.host.Host.set_cyborg17_agent`),
  learnt from the report, not from any option. An agent of this release
  clears the mark as it starts.
* :class:`HostAgents` is the agent RPC client of binds, unbinds and
  programming: it asks such a host's agent with 17.0.0's methods and
  arguments (:mod:`cyborg.agent.cyborg17_rpcapi`), any other with ours.
"""

import contextlib

from glanceclient import exc as glance_exc
from keystoneauth1 import exceptions as ks_exc
from oslo_log import log
import oslo_messaging as messaging
from oslo_utils import strutils

from cyborg.agent import bitstream
from cyborg.agent import cyborg17_rpcapi
from cyborg.agent import rpcapi as agent_rpcapi
from cyborg.clients import glance
from cyborg.clients import placement
from cyborg.common import pci_address
from cyborg.conductor import inventory
from cyborg.conductor import placement_sync
import cyborg.conf
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import attach_handle as handle_obj
from cyborg.objects import attribute as attribute_obj
from cyborg.objects import control_path as cpid_obj
from cyborg.objects import cyborg17_report
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.objects import driver_report
from cyborg.objects import host as host_obj

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)

#: The image property of a shell image (as cyborg.drivers.fpga reads it).
SHELL_IMAGE_PROPERTY = 'shell_image'


def _server(context, hostname):
    """The server name of the host's 17.0.0 agent, or None."""
    try:
        return host_obj.Host.get_by_hostname(context,
                                             hostname).cyborg17_server
    except exception.HostNotFound:
        return None


def _record(context, hostname, server, client=None):
    """Mark the host as one of a 17.0.0 agent, once.

    17.0.0's agent reports under the name of its compute node's provider,
    which it found in Placement as it started (``[agent]
    resource_provider_name``, else ``[DEFAULT] host``), and serves RPC
    under ``[DEFAULT] host``, ``server`` (17.0.0's conductor called it by
    the reported name, and missed it where the two differ). The server
    name is recorded with the provider's uuid that the Placement sync
    hangs the devices under.

    :raises ResourceProviderNotFound: Placement does not know the name.
    """
    server = _own_server(context, hostname, server)
    host = host_obj.Host.placed(context, hostname)
    if host is not None and host.cyborg17_server == server:
        return
    rp_uuid = placement_sync.compute_node_rp(
        client or placement.PlacementClient(), hostname)
    host_obj.Host.set_cyborg17_agent(context, hostname, rp_uuid, server)
    LOG.warning('Host %(host)s runs the agent of openstack-cyborg 17.0.0: '
                'its reports are converted and its binds use its RPC '
                'methods until cyborg-agent is upgraded there',
                {'host': hostname})


def _own_server(context, hostname, server):
    """``server``, unless it names another host; else ``hostname``.

    The server name comes from what the host reports (its deployables'
    names): a host may not have the conductor send its binds, and their
    control paths and tokens, to another host's agent.
    """
    if server == hostname:
        return server
    for other in host_obj.Host.list(context):
        if other.hostname != hostname and server in (
                other.hostname, other.cyborg17_server):
            LOG.warning('Host %(host)s reports deployables named after '
                        'host %(other)s; its 17.0.0 agent is called as '
                        '%(host)s', {'host': hostname, 'other': server})
            return hostname
    return server


def report(context, hostname, driver_device_list, owner, client=None):
    """Apply a 17.0.0 agent's ``report_data`` as this release's report.

    A stub device (one its driver could not read whole) stays as it is
    recorded, or unrecorded, as 17.0.0's conductor kept it.

    :param client: a :class:`cyborg.clients.placement.PlacementClient`.
    :raises InvalidHostReport: a value this release does not know.
    :raises HostLeaseHeld: another conductor reconciles the host.
    :raises ResourceProviderNotFound: Placement does not know the compute
        node the agent reported under.
    """
    stubs = cyborg17_report.stub_addresses(driver_device_list)
    host_report = cyborg17_report.host_report(
        hostname, driver_device_list,
        _recorded(context, hostname, stubs) if stubs else None)
    _record(context, hostname, cyborg17_report.server_name(
        hostname, driver_device_list), client)
    inventory.apply_report(context, host_report, owner, client)


def _recorded(context, hostname, addresses):
    """{address: DeviceReport} of the host's devices at ``addresses``."""
    out = {}
    for device in device_obj.Device.list(context,
                                         filters={'hostname': hostname}):
        cpids = cpid_obj.ControlpathID.list(
            context, filters={'device_id': device.id})
        address = (pci_address.address_of(cpids[0].cpid_info) if cpids
                   else None)
        if device.vanished_at is not None or address not in addresses:
            continue
        deployables = deployable_obj.Deployable.list(
            context, filters={'device_id': device.id})
        names = {dep.id: dep.name for dep in deployables}
        out[address] = driver_report.DeviceReport(
            type=device.type, vendor=device.vendor, model=device.model,
            std_board_info=device.std_board_info,
            vendor_board_info=device.vendor_board_info,
            controlpath_id=driver_report.ControlpathReport(
                cpid_type=cpids[0].cpid_type,
                cpid_info=dict(cpids[0].cpid_info)),
            deployables=[driver_report.DeployableReport(
                name=dep.name, parent_name=names.get(dep.parent_id),
                num_accelerators=dep.num_accelerators,
                driver_name=dep.driver_name or '',
                bitstream_id=dep.bitstream_id,
                attributes=[driver_report.AttributeReport(
                    key=attr.key, value=attr.value)
                    for attr in attribute_obj.Attribute.list(
                        context, filters={'deployable_id': dep.id})],
                attach_handles=[driver_report.AttachHandleReport(
                    attach_type=handle.attach_type,
                    attach_info=dict(handle.attach_info))
                    for handle in handle_obj.AttachHandle.list(
                        context, filters={'deployable_id': dep.id})])
                for dep in deployables])
    return out


def _deployable(context, hostname, name):
    """The deployable ``name`` of the host, and its device's control path."""
    for device in device_obj.Device.list(context,
                                         filters={'hostname': hostname}):
        for deployable in deployable_obj.Deployable.list(
                context, filters={'device_id': device.id}):
            if deployable.name == name:
                cpids = cpid_obj.ControlpathID.list(
                    context, filters={'device_id': device.id})
                return deployable, cpids[0]
    raise exception.DeployableNotFound(uuid=name)


def _check_image(context, image_id, deployable_name, allow_shell):
    """Refuse an image that this release's agent would refuse.

    This release's agent checks the image itself; 17.0.0's loads whatever
    it is told to, so the conductor checks first, as the service: the
    image must be active and of a trusted owner (``[fpga]
    trusted_image_owners``), and a shell image needs ``allow_shell``.
    Glance not telling is a refusal.
    """
    def refuse(reason):
        return exception.BitstreamRejected(
            image=image_id, deployable=deployable_name, reason=reason)

    try:
        image = glance.get_client(CONF, context).images.get(image_id)
    except (glance_exc.ClientException, glance_exc.CommunicationError,
            ks_exc.ClientException) as e:
        raise refuse(_('Glance cannot tell what it is: %s') % e) from e
    owners = bitstream.trusted_owners()
    if not image.get('owner') or image['owner'] not in owners:
        raise refuse(_('its owner %(owner)s is not a trusted image owner '
                       '(%(trusted)s)') % {
            'owner': image.get('owner') or _('(none)'),
            'trusted': ', '.join(sorted(owners)) or _('none')})
    if image.get('status') != 'active':
        raise refuse(_('it is %s, not active') % image.get('status'))
    if not allow_shell and strutils.bool_from_string(
            image.get(SHELL_IMAGE_PROPERTY)):
        raise refuse(_('it is a shell image, and only an update of a card '
                       'with no allocated function may load one'))


class HostAgents:
    """The agent RPC API, asking each host's agent in its own words.

    It has the methods of :class:`cyborg.agent.rpcapi.AgentAPI`: a host
    whose agent is 17.0.0's is asked with 17.0.0's methods instead.
    """

    def __init__(self, agent=None, legacy=None):
        self._agent = agent or agent_rpcapi.AgentAPI()
        self._legacy = legacy or cyborg17_rpcapi.AgentAPI()

    def program(self, context, host, deployable_name, bitstream_id=None,
                function_id=None, function_name=None, timeout=None,
                allow_shell=False):
        """See :meth:`cyborg.agent.rpcapi.AgentAPI.program`.

        17.0.0's agent loads a Glance image by its id, into the card
        behind the deployable's control path; it knows no function ids or
        names nor shell updates, and sends no report when it is done.
        """
        def ours():
            return self._agent.program(
                context, host, deployable_name, bitstream_id=bitstream_id,
                function_id=function_id, function_name=function_name,
                timeout=timeout, allow_shell=allow_shell)
        return self._asked(context, host, ours, lambda server: self._program(
            context, host, server, deployable_name, bitstream_id,
            function_id or function_name, timeout, allow_shell))

    def _program(self, context, host, server, deployable_name, bitstream_id,
                 function, timeout, allow_shell):
        """Ask 17.0.0's agent ``server`` to load ``bitstream_id``."""
        if bitstream_id is None:
            raise exception.BitstreamRejected(
                image=function,
                deployable=deployable_name, reason=_(
                    "host %s runs openstack-cyborg 17.0.0's agent, which "
                    "loads bitstreams by image id only; upgrade "
                    "cyborg-agent there") % host)
        _check_image(context, bitstream_id, deployable_name, allow_shell)
        deployable, cpid = _deployable(context, host, deployable_name)
        token = None
        if CONF.conductor.cyborg17_agents_glance_token:
            token = glance.service_token(CONF)
        try:
            loaded = self._legacy.fpga_program(
                context, server,
                {'uuid': cpid.uuid, 'cpid_type': cpid.cpid_type,
                 'cpid_info': dict(cpid.cpid_info)},
                bitstream_id, deployable.driver_name, timeout=timeout,
                glance_token=token)
        except exception.CyborgException:
            raise
        except Exception as e:
            # Whatever it raised, as it arrives: a RemoteError, or a
            # builtin exception oslo.messaging rebuilds.
            loaded = (str(e).splitlines() or [''])[0]
        if loaded is not True:
            if token is not None:
                raise exception.ProgrammingFailed(
                    deployable=deployable_name,
                    reason=_("openstack-cyborg 17.0.0's agent on %(host)s "
                             "did not load it (%(ret)s)") % {
                        'host': host, 'ret': loaded})
            # Its likeliest failure: it downloads the image from Glance
            # with the token of the request, and no Cyborg service sends
            # one unless told to (no credentials on the bus).
            raise exception.ProgrammingFailed(
                deployable=deployable_name,
                reason=_("openstack-cyborg 17.0.0's agent on %(host)s did "
                         "not load it (%(ret)s); it downloads the image "
                         "with the token of the request, which Cyborg "
                         "sends only with [conductor] "
                         "cyborg17_agents_glance_token = True: upgrade "
                         "cyborg-agent there to program its FPGAs") % {
                    'host': host, 'ret': loaded})
        return bitstream_id

    def create_mdev(self, context, host, mdev_uuid, mdev_type,
                    parent_address):
        """See :meth:`cyborg.agent.rpcapi.AgentAPI.create_mdev`."""
        def legacy(server):
            with _mdev_failure('create', mdev_uuid):
                return self._legacy.create_vgpu_mdev(
                    context, server, pci_addr=parent_address,
                    asked_type=mdev_type, ah_uuid=mdev_uuid)
        return self._asked(context, host, lambda: self._agent.create_mdev(
            context, host, mdev_uuid, mdev_type, parent_address), legacy)

    def remove_mdev(self, context, host, mdev_uuid):
        """See :meth:`cyborg.agent.rpcapi.AgentAPI.remove_mdev`.

        17.0.0's agent is told the parent and type too, from the handle
        the mediated device is named after.
        """
        def legacy(server):
            info = handle_obj.AttachHandle.get_by_uuid(context,
                                                       mdev_uuid).attach_info
            with _mdev_failure('remove', mdev_uuid):
                return self._legacy.remove_vgpu_mdev(
                    context, server, pci_addr=pci_address.join(info),
                    asked_type=info.get('asked_type'), ah_uuid=mdev_uuid)
        return self._asked(context, host, lambda: self._agent.remove_mdev(
            context, host, mdev_uuid), legacy)

    @staticmethod
    def _asked(context, host, ours, legacy):
        """``legacy(server)`` where the host's agent is 17.0.0's, else ours.

        A 17.0.0 agent that does not answer may have been stopped for
        this release's, which took the host over while the call waited in
        the old agent's queue (the host's agent upgraded under a bind):
        then this release's agent is asked instead.

        :param ours: asks this release's agent.
        :param legacy: asks 17.0.0's agent, given its server name.
        """
        server = _server(context, host)
        if server is None:
            return ours()
        try:
            return legacy(server)
        except exception.ServiceUnavailable:
            if _server(context, host) is not None:
                raise
            LOG.info("openstack-cyborg 17.0.0's agent %(server)s did not "
                     "answer and this release's agent has taken %(host)s "
                     "over meanwhile: asking it", {'server': server,
                                                   'host': host})
            return ours()


@contextlib.contextmanager
def _mdev_failure(action, mdev_uuid):
    """What a 17.0.0 agent raised about a mediated device, as MdevFailed.

    It raises whatever its sysfs write raised (a ``FileNotFoundError``
    where the device is already gone), which oslo.messaging rebuilds as
    it arrives: the conductor's callers handle Cyborg's errors.
    """
    try:
        yield
    except (exception.CyborgException, messaging.MessagingException):
        raise
    except Exception as e:
        raise exception.MdevFailed(
            action=action, uuid=mdev_uuid,
            reason=(str(e).splitlines() or [repr(e)])[0]) from e
