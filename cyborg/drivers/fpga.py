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
"""What the FPGA drivers share: traits, loaded bitstreams, vendor tools.

A vendor driver subclasses :class:`FpgaDriver`: it finds its cards and
their regions in sysfs and says which command loads a bitstream file. This
module turns cards into reports, remembers which Glance image each region
holds (in ``$state_path/fpga``, so that an agent restarted still reports
it), applies the image's function topology (seed 002) to the deployable
tree, and runs the vendor tool with a time limit.

A topology names only the card's own functions (see
:mod:`cyborg.drivers.card_functions`): an image whose topology reaches
another is refused before it is downloaded, and a function outside the
card is never reported whatever the loaded image said. A bind never
flashes a shell: only an image with the ``shell_image`` property, loaded
by an operator's shell update while no function of the card is
allocated, may (see :meth:`FpgaDriver.program`).
"""

import abc
import dataclasses
import json
import os
import threading

from oslo_log import log
from oslo_utils import strutils

from cyborg.common import pci_address
from cyborg.common import placement_names
import cyborg.conf
from cyborg.drivers import base
from cyborg.drivers import card_functions
from cyborg.drivers import cyborg17
from cyborg.drivers import pci
from cyborg.drivers import report
from cyborg import exception
from cyborg.i18n import _
from cyborg.privsep import vendor_tool

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)

RESOURCE_CLASS = 'FPGA'

#: The image property that marks a shell (persistent firmware) image.
SHELL_IMAGE_PROPERTY = 'shell_image'


def is_shell_image(image):
    """Whether the image declares itself a shell image.

    Only an explicit ``shell_image=true`` does: an image that merely lacks
    ``shell_id`` is a user-region image to a bind, whatever the replaced
    service made of it.
    """
    return strutils.bool_from_string(image.get(SHELL_IMAGE_PROPERTY))


@dataclasses.dataclass(frozen=True)
class Topology:
    """The physical and virtual functions a bitstream exposes.

    ``pfs`` holds, per physical function, its PCI offset and those of its
    virtual functions, relative to the region's own PCI function.
    """

    pfs: tuple

    @classmethod
    def parse(cls, text):
        """Read the ``topology`` image property.

        :raises ValueError: it is not the seed-002 JSON shape.
        """
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get('pf'),
                                                        list):
            raise ValueError(_('it has no "pf" list'))
        pfs = []
        for pf in data['pf']:
            if not isinstance(pf, dict) or not isinstance(pf.get('vf', []),
                                                          list):
                raise ValueError(_('a pf is not an object with a "vf" '
                                   'list'))
            vfs = pf.get('vf', [])
            pfs.append((_offset(pf), tuple(_offset(vf) for vf in vfs)))
        offsets = [o for pf, vfs in pfs for o in (pf,) + vfs]
        if len(set(offsets)) != len(offsets):
            raise ValueError(_('two functions share a pci_offset'))
        for key, count in (('pf_num', len(pfs)),
                           ('vf_num', sum(len(vfs) for _, vfs in pfs))):
            if key in data and str(data[key]) != str(count):
                raise ValueError(_('%(key)s is %(value)s but %(count)d are '
                                   'listed') % {'key': key,
                                                'value': data[key],
                                                'count': count})
        return cls(tuple(pfs))

    def addresses(self, port):
        """The PCI addresses of every function, counted from ``port``.

        :raises ValueError: an offset leaves the PCI domain.
        """
        return [pci_address.offset(port, o)
                for pf, vfs in self.pfs for o in (pf,) + vfs]


def _offset(function):
    try:
        offset = int(function['pci_offset'])
    except (TypeError, KeyError, ValueError):
        raise ValueError(_('a function has no integer "pci_offset"'))
    if offset < 0:
        raise ValueError(_('pci_offset %d is negative') % offset)
    return offset


@dataclasses.dataclass(frozen=True)
class Loaded:
    """The Glance image this agent loaded into a region."""

    image_id: str
    function_id: str | None
    #: The image's ``topology`` property, as it was given.
    topology_text: str | None = None

    @property
    def topology(self):
        if not self.topology_text:
            return None
        return Topology.parse(self.topology_text)


@dataclasses.dataclass(frozen=True)
class Card:
    """One FPGA card with one programmable region, as sysfs shows it."""

    #: The function that manages the card (the control path).
    controlpath: pci.PciDevice
    #: The function that instances get (or whose VFs they get); PCI offsets
    #: of a bitstream's topology count from its address.
    port: pci.PciDevice
    model: str
    region: base.FpgaRegion
    #: Ids of the accelerator functions loaded now, as sysfs shows them.
    function_ids: tuple
    vendor_board_info: dict | None = None
    #: Traits of the card besides those of its vendor, board, region type
    #: and functions.
    traits: tuple = ()


class FpgaDriver(base.Driver):
    """Discovery and programming shared by the FPGA vendor drivers.

    Each card is reported as one device with one deployable per region:
    resource class ``FPGA``, the vendor and board traits, the region's type
    and the loaded functions. Its virtual functions are the attach handles,
    or the region's function itself when SR-IOV is off. After this agent
    loaded an image with a topology, the topology's physical functions
    other than the region's own become child deployables.
    """

    #: Vendor name as bitstream images give it, e.g. ``Intel``.
    vendor = None
    #: The vendor tool that programs the cards (a name of
    #: :data:`cyborg.privsep.vendor_tool.TOOLS`).
    tool = None

    def reported_vendor(self, vendor_id):
        """A device's ``vendor`` as the replaced service recorded it."""
        return vendor_id

    def cyborg17_traits(self, region, function_ids):
        """The replaced service's traits of a region that ours are not.

        :param function_ids: the normalized ids of the loaded functions.
        """
        return []

    def __init__(self):
        self._lock = threading.Lock()
        self._loaded = self._read_loaded()
        if self.tool is not None:
            try:
                vendor_tool.tool_path(self.tool)
            except ValueError as e:
                LOG.warning('%(driver)s cannot program devices until '
                            'this is fixed: %(error)s',
                            {'driver': self.name, 'error': e})

    @property
    def _loaded_file(self):
        """Where the agent keeps what it loaded, across its restarts."""
        return os.path.join(CONF.state_path, 'fpga', self.name + '.json')

    def _read_loaded(self):
        try:
            with open(self._loaded_file) as f:
                return {name: Loaded(**value)
                        for name, value in json.load(f).items()}
        except FileNotFoundError:
            return {}
        except (OSError, TypeError, ValueError) as e:
            LOG.warning('Ignoring %(file)s, which cannot be read: %(error)s;'
                        ' the regions are reported without their images '
                        'until programmed again',
                        {'file': self._loaded_file, 'error': e})
            return {}

    def _write_loaded(self):
        """Keep ``_loaded`` in its file; called with the lock held."""
        path = self._loaded_file
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + '.new', 'w') as f:
                json.dump({name: dataclasses.asdict(loaded)
                           for name, loaded in self._loaded.items()}, f)
            os.replace(path + '.new', path)
        except OSError as e:
            LOG.warning('Cannot keep what was loaded in %(file)s: %(error)s;'
                        ' once restarted, the agent reports the regions '
                        'without their images until programmed again',
                        {'file': path, 'error': e})

    @abc.abstractmethod
    def cards(self, pci_devices):
        """The driver's cards among ``pci_devices``, as :class:`Card`."""

    @abc.abstractmethod
    def command(self, region, bitstream_path, image, allow_shell=False):
        """What the vendor tool daemon is asked to run.

        :returns: the keyword arguments of
            :func:`cyborg.privsep.vendor_tool.run` but the timeout:
            ``tool``, ``device``, ``bitstream`` and ``partition``.
        :raises BitstreamRejected: the tool cannot load the image.
        """

    def discover(self, pci_devices):
        return [self._device(card, pci_devices)
                for card in self.cards(pci_devices)]

    def fpga_regions(self, pci_devices):
        return {card.region.deployable_name: card.region
                for card in self.cards(pci_devices)}

    def _card(self, region, pci_devices):
        for card in self.cards(pci_devices):
            if card.region.deployable_name == region.deployable_name:
                return card
        raise exception.NotProgrammable(
            deployable=region.deployable_name,
            reason=_('the card is no longer on the host'))

    def check_image(self, region, image, pci_devices):
        """Refuse an invalid topology, or one reaching outside the card."""
        if not image.get('topology'):
            return
        try:
            topology = Topology.parse(image['topology'])
        except ValueError as e:
            raise exception.BitstreamRejected(
                image=image['id'], deployable=region.deployable_name,
                reason=_('its topology is invalid: %s') % e)
        card = self._card(region, pci_devices)
        try:
            addresses = topology.addresses(card.port.address)
        except ValueError as e:
            raise exception.BitstreamRejected(
                image=image['id'], deployable=region.deployable_name,
                reason=_('its topology is invalid: %s') % e)
        outside = card_functions.foreign(card, addresses, pci_devices)
        if outside:
            raise exception.BitstreamRejected(
                image=image['id'], deployable=region.deployable_name,
                reason=_('its topology names PCI functions that are not '
                         "the card's own: %s (a topology may name only "
                         "the card's port, its virtual functions and the "
                         "functions behind the card's upstream bridge "
                         "with the card's vendor id)") % ', '.join(outside))

    def program(self, region, bitstream_path, image, allow_shell=False):
        # Checked again here, on a fresh scan: the agent checked before
        # the download, and whoever calls the driver may not have.
        self.check_image(region, image, pci.scan(CONF.agent.sysfs_root))
        command = self.command(region, bitstream_path, image,
                               allow_shell=allow_shell)
        with self._lock:
            # Whatever the tool does, the region no longer holds the old
            # image: reports say so until it is done.
            if self._loaded.pop(region.deployable_name, None):
                self._write_loaded()
        run_tool(command, region.deployable_name)
        with self._lock:
            self._loaded[region.deployable_name] = Loaded(
                image['id'], base.image_function_id(image),
                image.get('topology'))
            self._write_loaded()

    def _loaded_image(self, card):
        """What this agent loaded into the card, if the card still has it."""
        name = card.region.deployable_name
        with self._lock:
            loaded = self._loaded.get(name)
            if (loaded is not None and card.function_ids and
                    loaded.function_id not in card.function_ids):
                LOG.info('%(name)s was reprogrammed outside Cyborg; it no '
                         'longer holds bitstream %(image)s',
                         {'name': name, 'image': loaded.image_id})
                del self._loaded[name]
                self._write_loaded()
                loaded = None
        return loaded

    def _device(self, card, pci_devices):
        name = card.region.deployable_name
        loaded = self._loaded_image(card)
        function_ids = card.function_ids
        if loaded is not None and not function_ids and loaded.function_id:
            # The card cannot show its function; the image says it.
            function_ids = (loaded.function_id,)
        region = card.region
        traits = [placement_names.custom_name('FPGA', self.vendor),
                  placement_names.custom_name('FPGA', self.vendor,
                                              region.board)]
        if region.region_type:
            traits.append(placement_names.region_trait(region.region_type))
        traits.extend(placement_names.function_trait(f) for f in function_ids)
        traits.extend(card.traits)
        resource_class, traits = cyborg17.names(
            RESOURCE_CLASS, traits,
            cyborg17_traits=self.cyborg17_traits(region, function_ids))
        image_id = loaded.image_id if loaded else None
        topology = loaded.topology if loaded else None
        driver_name = self.reported_name(card.controlpath.vendor_id)
        if topology is None:
            functions = card.port.virtfns or (card.port.address,)
            deployables = [report.deployable(
                name, driver_name, resource_class, traits,
                [report.pci_handle(f) for f in functions],
                bitstream_id=image_id)]
        else:
            deployables = [
                report.deployable(dep_name, driver_name, resource_class,
                                  traits, handles, parent_name=parent,
                                  bitstream_id=image_id)
                for dep_name, parent, handles in self._topology(
                    card, topology, pci_devices)]
        return report.device(
            'FPGA', self.reported_vendor(card.controlpath.vendor_id),
            card.model,
            card.controlpath.address, deployables,
            std_board_info=report.std_board_info(card.controlpath),
            vendor_board_info=card.vendor_board_info)

    @staticmethod
    def _topology(card, topology, pci_devices):
        """The region and its functions, as the image's topology says.

        Offsets count from the card's port. Functions the topology names
        but the host does not show (yet) are left out rather than
        offered, and so are functions that are not the card's own (see
        :mod:`cyborg.drivers.card_functions`), whatever the image said.

        :returns: (name, parent name, attach handles) of each deployable,
            the region first.
        """
        name, port = card.region.deployable_name, card.port.address
        own, children = [], []
        for pf_offset, vf_offsets in topology.pfs:
            try:
                pf = pci_address.offset(port, pf_offset)
                functions = [pci_address.offset(port, o)
                             for o in vf_offsets]
            except ValueError:
                continue
            outside = card_functions.foreign(card, functions + [pf],
                                             pci_devices)
            if outside:
                LOG.warning('Not offering %(functions)s, named by the '
                            'topology of the image loaded into %(name)s: '
                            "they are not the card's own functions",
                            {'functions': ', '.join(outside),
                             'name': name})
            if pf in outside:
                continue
            handles = [report.pci_handle(f) for f in functions or [pf]
                       if f in pci_devices and f not in outside]
            if pf == port:
                own = handles
            else:
                children.append((pf, name, handles))
        return [(name, None, own)] + children


def run_tool(command, deployable):
    """Run a vendor tool within ``[fpga] program_timeout`` seconds.

    The tool runs as root in the ``[privsep_vendor_tool]`` daemon, which
    checks the arguments, builds the command line and kills the tool with
    everything it started when it runs too long.

    :param command: what :meth:`FpgaDriver.command` returns.
    :raises ProgrammingFailed: the tool is missing, not an absolute
        ``[fpga] *_path``, refused the arguments, failed or timed out.
    """
    timeout = CONF.fpga.program_timeout
    try:
        status, stderr = vendor_tool.run(timeout=timeout, **command)
    except (OSError, ValueError) as e:
        raise exception.ProgrammingFailed(
            deployable=deployable,
            reason=_('%(tool)s cannot be run: %(error)s')
            % {'tool': command['tool'],
               'error': getattr(e, 'strerror', None) or e})
    if status is None:
        raise exception.ProgrammingFailed(
            deployable=deployable,
            reason=_('%(tool)s did not finish within %(timeout)d seconds')
            % {'tool': command['tool'], 'timeout': timeout})
    if status:
        raise exception.ProgrammingFailed(
            deployable=deployable,
            reason=_('%(tool)s exited with status %(code)s: %(stderr)s')
            % {'tool': command['tool'], 'code': status,
               'stderr': stderr.strip()})
