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
"""Server side of the agent RPC API: what the conductor asks of a host.

Keep the version and the methods in step with :mod:`cyborg.agent.rpcapi`.
"""

from oslo_concurrency import lockutils
from oslo_log import log
import oslo_messaging as messaging
from oslo_utils import uuidutils

from cyborg.agent import bitstream
from cyborg.clients import glance
from cyborg.common import pci_address
from cyborg.common import rpc
import cyborg.conf
from cyborg.drivers import mdev
from cyborg import exception
from cyborg.i18n import _

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


def _check_uuid(mdev_uuid):
    if not uuidutils.is_uuid_like(mdev_uuid):
        raise exception.InvalidParameterValue(
            name='mdev_uuid', reason=_('%r is not a UUID') % mdev_uuid)


def _check_not_passed_through(region, pci_devices):
    """Refuse a region whose card or a VF of it a guest holds.

    A function bound to ``vfio-pci`` that the kernel shows enabled
    (sysfs ``enable`` above 0) is open through VFIO: passed through to a
    running instance. Loading another bitstream under it would change the
    device the guest uses. Functions merely bound to ``vfio-pci``, as VFs
    waiting to be assigned are, may be programmed. The conductor checks
    the database too; this check holds on the host whatever a message
    asks.

    :raises NotProgrammable: a function of the region is in use.
    """
    card = pci_devices.get(region.deployable_name)
    if card is None:
        return
    for address in (card.address,) + tuple(card.virtfns):
        function = pci_devices.get(address)
        if (function is not None and function.driver == 'vfio-pci' and
                function.read('enable', '0') not in ('', '0')):
            raise exception.NotProgrammable(
                deployable=region.deployable_name,
                reason=_('its PCI function %s is passed through to a '
                         'running instance (open through vfio-pci)') %
                address)


class AgentManager:
    """The agent's RPC endpoint."""

    RPC_API_VERSION = '1.1'

    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, tracker):
        self.tracker = tracker

    @rpc.expected_exceptions(exception.CyborgException)
    def program(self, context, deployable_name, bitstream_id=None,
                function_id=None, function_name=None, allow_shell=False):
        # One programming at a time per region; others proceed.
        with lockutils.lock('program-%s' % deployable_name):
            driver, region = self._fpga_region(deployable_name)
            # As the service, whoever asked: see cyborg.clients.glance.
            client = glance.get_client(CONF, context)
            owners = bitstream.trusted_owners()
            image = bitstream.find(client, region, owners,
                                   bitstream_id=bitstream_id,
                                   function_id=function_id,
                                   function_name=function_name)
            bitstream.check(image, region, owners)
            # The topology names only the card's own functions: refused
            # before anything is downloaded or loaded.
            driver.check_image(region, image, self.tracker.scan())
            LOG.info('Programming %(name)s with bitstream %(image)s (%(bs)s)',
                     {'name': deployable_name, 'image': image['id'],
                      'bs': image.get('bs-name') or image.get('name')})
            with bitstream.download(client, image, region) as path:
                driver.program(region, path, image,
                               allow_shell=bool(allow_shell))
        # The caller may rely on the new functions being known; the region
        # is programmed all the same when the report cannot go now (the
        # host is busy in another conductor), and the next pass sends it.
        try:
            self.tracker.report(force=True)
        except exception.CyborgException as e:
            LOG.warning('Report after programming %(name)s postponed to '
                        'the next pass: %(error)s',
                        {'name': deployable_name, 'error': e})
        return image['id']

    def _fpga_region(self, deployable_name):
        pci_devices = self.tracker.scan()
        for driver in self.tracker.drivers:
            region = driver.fpga_regions(pci_devices).get(deployable_name)
            if region is not None:
                _check_not_passed_through(region, pci_devices)
                return driver, region
        raise exception.NotProgrammable(
            deployable=deployable_name,
            reason=_('no enabled driver has an FPGA region of that name on '
                     'this host'))

    def _region_at(self, controlpath_id):
        """The FPGA region of the card behind a 17.0.0 control path."""
        address = pci_address.address_of(controlpath_id.get('cpid_info'))
        pci_devices = self.tracker.scan()
        for driver in self.tracker.drivers:
            regions = driver.fpga_regions(pci_devices)
            for device in driver.discover(pci_devices) if regions else ():
                if pci_address.address_of(
                        device.controlpath_id.cpid_info) != address:
                    continue
                for deployable in device.deployables:
                    if deployable.name in regions:
                        return deployable.name
        raise exception.NotProgrammable(
            deployable=address or controlpath_id,
            reason=_('no enabled driver has an FPGA region behind that '
                     'control path on this host'))

    # openstack-cyborg 17.0.0's methods. A conductor of this release asks
    # a host whose agent is 17.0.0's with them; where this agent replaced
    # that one under the same [DEFAULT] host, it takes over the calls
    # left in the old agent's queue. See
    # cyborg.conductor.cyborg17_agents.HostAgents.

    @rpc.expected_exceptions(exception.CyborgException)
    def fpga_program(self, context, controlpath_id, bitstream_uuid,
                     driver_name):
        """17.0.0's ``fpga_program``: :meth:`program`, by control path.

        The image is checked as any other (never a shell image), and True
        returned when it is loaded, as 17.0.0's agent did.
        """
        self.program(context, self._region_at(controlpath_id),
                     bitstream_id=bitstream_uuid)
        return True

    @rpc.expected_exceptions(exception.CyborgException)
    def create_vgpu_mdev(self, context, pci_addr, asked_type, ah_uuid):
        """17.0.0's ``create_vgpu_mdev``: :meth:`create_mdev`."""
        self.create_mdev(context, ah_uuid, asked_type, pci_addr)

    @rpc.expected_exceptions(exception.CyborgException)
    def remove_vgpu_mdev(self, context, pci_addr, asked_type, ah_uuid):
        """17.0.0's ``remove_vgpu_mdev``: :meth:`remove_mdev`."""
        self.remove_mdev(context, ah_uuid)

    @rpc.expected_exceptions(exception.CyborgException)
    def create_mdev(self, context, mdev_uuid, mdev_type, parent_address):
        _check_uuid(mdev_uuid)
        if mdev_type not in CONF.gpu_devices.enabled_vgpu_types:
            raise exception.MdevTypeNotEnabled(mdev_type=mdev_type)
        try:
            pci_address.parse(parent_address)
        except ValueError as e:
            raise exception.InvalidParameterValue(name='parent_address',
                                                  reason=e)
        mdev.create(CONF.agent.sysfs_root, parent_address, mdev_type,
                    mdev_uuid)

    @rpc.expected_exceptions(exception.CyborgException)
    def remove_mdev(self, context, mdev_uuid):
        _check_uuid(mdev_uuid)
        mdev.remove(CONF.agent.sysfs_root, mdev_uuid)
