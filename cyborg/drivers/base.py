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
"""The contract of an accelerator driver, and how the agent loads drivers.

A driver turns what the host shows of one kind of device into report
objects (:mod:`cyborg.objects.driver_report`). Drivers are found by name in
the ``cyborg.accelerator.driver`` entry-point namespace; the agent loads
those of ``[agent] enabled_drivers`` at start and refuses to start when one
is missing or broken.
"""

import abc
import dataclasses

from oslo_log import log
from stevedore import named

from cyborg.common import placement_names
from cyborg import exception
from cyborg.i18n import _

LOG = log.getLogger(__name__)

NAMESPACE = 'cyborg.accelerator.driver'

#: Driver names of the replaced service that Cyborg spells differently:
#: ``[agent] enabled_drivers`` may still give them, with a warning.
RENAMED = {
    'pci_driver': 'generic_pci_driver',
    'inspur_nvme_ssd_driver': 'nvme_ssd_driver',
}


@dataclasses.dataclass(frozen=True)
class FpgaRegion:
    """What a bitstream must fit to be loaded into one FPGA region.

    Identifiers are lower-case hexadecimal without dashes, so that they
    compare equal to the image properties of seed 002 however those are
    spelled.
    """

    deployable_name: str
    #: Vendor and board names, as bitstream images name them.
    vendor: str
    board: str
    #: The region's type: the PR interface id that its shell exposes.
    region_type: str | None
    #: Ids of the loaded shell (partitions): a partial bitstream's
    #: ``shell_id`` must be one of them.
    shell_ids: tuple


def image_function_id(image):
    """The normalized id of the function a bitstream image implements.

    Its ``function_uuid`` (seed 002), or else the ``accel:function_id``
    property that images made for the replaced service carry; None when
    it names neither.
    """
    return placement_names.normalize_id(
        image.get('function_uuid') or image.get('accel:function_id'))


class Driver(abc.ABC):
    """Discovers, and optionally programs, one kind of accelerator.

    ``name`` is the driver's entry-point name. The ``driver_name`` recorded
    on each deployable it reports is :meth:`reported_name`'s, so keep both
    stable.
    """

    name = None

    #: (vendor_id, product_id) pairs of the PCI devices the driver takes,
    #: lower-case hex, ``*`` for any. ``cyborg-status upgrade check`` warns
    #: when Nova's PCI whitelist names one of them too.
    pci_ids = frozenset()

    #: Kernel drivers one of which a device's control path function needs
    #: bound to be healthy (:mod:`cyborg.drivers.health`); empty where the
    #: Cyborg driver does not depend on one.
    kernel_drivers = frozenset()

    #: Glob patterns, below a device's PCI function directories, of error
    #: registers that read non-zero when the device has failed.
    error_files = ()

    def reported_name(self, vendor_id):
        """The ``driver_name`` of the deployables of a device it reports.

        The driver's name unless the driver says otherwise: those of the
        replaced service recorded a vendor name (see
        :mod:`cyborg.drivers.cyborg17`), which ours keep.

        :param vendor_id: the device's PCI vendor id, lower-case hex.
        """
        return self.name

    @abc.abstractmethod
    def discover(self, pci_devices):
        """Report the devices of this driver's kind.

        :param pci_devices: the host's PCI devices, ``{address:
            PciDevice}``, scanned once per pass for every driver (see
            :mod:`cyborg.drivers.pci`).
        :returns: a list of DeviceReport, in an order that only changes
            when the devices do.
        """

    def fpga_regions(self, pci_devices):
        """The FPGA regions this driver can program, by deployable name."""
        return {}

    def check_image(self, region, image, pci_devices):
        """Refuse an image this driver must not load into ``region``.

        Called before the image is downloaded; the driver checks what the
        image says about the card (see :mod:`cyborg.drivers.fpga`).

        :raises BitstreamRejected: the image does not fit the card.
        """

    def program(self, region, bitstream_path, image, allow_shell=False):
        """Load a downloaded bitstream into an FPGA region.

        :param region: an :class:`FpgaRegion` from :meth:`fpga_regions`.
        :param bitstream_path: a private file holding the checked image.
        :param image: the Glance image, with the seed-002 properties it
            has (images made for the replaced service have none).
        :param allow_shell: whether a shell image (one with the
            ``shell_image`` property) may be flashed: only an operator's
            shell update, never a bind.
        :raises ProgrammingFailed: the vendor tool failed or timed out.
        :raises BitstreamRejected: the image does not fit the card.
        """
        raise exception.NotProgrammable(
            deployable=region.deployable_name,
            reason=_('driver %s cannot program devices') % self.name)


def _current_names(names):
    """``names`` with renamed drivers under their new names, once each."""
    current = []
    for name in names:
        if name in RENAMED:
            LOG.warning('Accelerator driver name %(old)s is deprecated; it '
                        'loads %(new)s. Write %(new)s in [agent] '
                        'enabled_drivers.',
                        {'old': name, 'new': RENAMED[name]})
            name = RENAMED[name]
        if name not in current:
            current.append(name)
    return current


def load(names):
    """Instantiate the drivers ``names``, in that order.

    A name in :data:`RENAMED` loads the driver's current name, with a
    deprecation warning.

    :raises DriverNotFound: no entry point has one of the names.
    :raises DriverLoadFailed: a driver failed to import or to start, for
        example because its configuration is invalid.
    """
    def missing(names):
        raise exception.DriverNotFound(name=', '.join(sorted(names)),
                                       namespace=NAMESPACE)

    def failed(manager, entrypoint, error):
        raise exception.DriverLoadFailed(name=entrypoint.name,
                                         reason=error) from error

    manager = named.NamedExtensionManager(
        NAMESPACE, _current_names(names), invoke_on_load=True,
        name_order=True,
        on_load_failure_callback=failed,
        on_missing_entrypoints_callback=missing)
    drivers = [ext.obj for ext in manager]
    for ext in manager:
        if not isinstance(ext.obj, Driver) or ext.obj.name != ext.name:
            raise exception.DriverLoadFailed(
                name=ext.name,
                reason=_('%s is not a Driver named after its entry point')
                % type(ext.obj).__name__)
    return drivers
