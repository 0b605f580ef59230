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
"""Any PCI device an operator lists in ``[pci] device_spec``.

The specs use the format of Nova's ``[pci] device_spec`` (formerly
``passthrough_whitelist``): JSON objects selecting devices by vendor and
product id, address or network interface name, and saying how to report
them. A matched device is offered whole, and so is each matched virtual
function (VF), as in the replaced service; ``[agent]
group_virtual_functions`` groups matched VFs under their physical function
instead. A physical function whose VFs are enabled is not offered.

Unless a spec names a resource class, the resource class and traits are
those of the replaced service (``CUSTOM_PCI``, ``CUSTOM_PCI_<vendor>``,
``CUSTOM_PCI_PRODUCT_ID_<product id>``), or with ``[agent] placement_names
= descriptive`` ``CUSTOM_PCI_<vendor id>_<product id>``; the device's type
is ``GPU``, as that service recorded it.
"""

import dataclasses
import json
import os
import re

import os_resource_classes
import os_traits

from cyborg.common import placement_names
import cyborg.conf
from cyborg.drivers import base
from cyborg.drivers import cyborg17
from cyborg.drivers import report
from cyborg import exception
from cyborg.i18n import _

CONF = cyborg.conf.CONF

_OPTION = '[pci] device_spec'
_KEYS = frozenset(('vendor_id', 'product_id', 'address', 'devname',
                   'physical_network', 'resource_class', 'traits'))
_ADDRESS_KEYS = ('domain', 'bus', 'slot', 'function')
_ANY = '*'
#: The resource class and device type of the replaced service.
CYBORG17_RESOURCE_CLASS = 'CUSTOM_PCI'
CYBORG17_DEVICE_TYPE = 'GPU'


def _invalid(reason):
    return exception.InvalidParameterValue(name=_OPTION, reason=reason)


def _hex_or_any(value, key):
    value = str(value).strip().lower().removeprefix('0x')
    if value == _ANY:
        return value
    if not re.fullmatch(r'[0-9a-f]{1,4}', value):
        raise _invalid(_('%(key)s %(value)r is not a hexadecimal id or *')
                       % {'key': key, 'value': value})
    return value.zfill(4)


def _address_matcher(address):
    """A function telling whether a PCI address matches ``address``.

    A string has the form ``[[domain:]bus:]slot[.function]`` where each
    part may be ``*`` or left out; an object holds a regular expression
    per part.
    """
    if isinstance(address, dict):
        unknown = set(address) - set(_ADDRESS_KEYS)
        if unknown:
            raise _invalid(_('unknown address keys %s') % sorted(unknown))
        try:
            patterns = {k: re.compile(v) for k, v in address.items()}
        except (re.error, TypeError) as e:
            raise _invalid(_('bad address expression: %s') % e)
        return lambda parts: all(p.fullmatch(parts[k])
                                 for k, p in patterns.items())
    if not isinstance(address, str):
        raise _invalid(_('address must be a string or an object'))
    left, _dot, function = address.partition('.')
    fields = left.split(':')
    if len(fields) > 3:
        raise _invalid(_('address %r has too many parts') % address)
    wanted = dict(zip(_ADDRESS_KEYS, ([''] * (3 - len(fields)) + fields +
                                      [function])))
    for key, value in wanted.items():
        if value not in ('', _ANY) and not re.fullmatch(r'[0-9a-fA-F]+',
                                                        value):
            raise _invalid(_('address %(address)r has a bad %(key)s')
                           % {'address': address, 'key': key})
    return lambda parts: all(value in ('', _ANY) or
                             int(value, 16) == int(parts[key], 16)
                             for key, value in wanted.items())


def _resource_class(name):
    name = name.strip().upper()
    if name in os_resource_classes.STANDARDS:
        return name
    return placement_names.custom_name(name.removeprefix('CUSTOM_'))


def _trait(name):
    name = name.strip().upper()
    if name in os_traits.get_traits():
        return name
    return placement_names.custom_name(name.removeprefix('CUSTOM_'))


@dataclasses.dataclass(frozen=True)
class DeviceSpec:
    """One ``[pci] device_spec`` entry."""

    vendor_id: str
    product_id: str
    matches_address: object
    devname: str | None
    physical_network: str | None
    resource_class: str | None
    traits: tuple

    @classmethod
    def parse(cls, text):
        """Read one option value.

        :raises InvalidParameterValue: not a JSON object of known keys.
        """
        try:
            spec = json.loads(text)
        except ValueError as e:
            raise _invalid(_('%(text)r is not JSON: %(error)s')
                           % {'text': text, 'error': e})
        if not isinstance(spec, dict):
            raise _invalid(_('%r is not a JSON object') % text)
        unknown = set(spec) - _KEYS
        if unknown:
            raise _invalid(_('unknown keys %(keys)s; known keys are '
                             '%(known)s') % {'keys': sorted(unknown),
                                             'known': sorted(_KEYS)})
        traits = spec.get('traits', '')
        if not isinstance(traits, str):
            raise _invalid(_('traits must be a comma-separated string'))
        return cls(
            vendor_id=_hex_or_any(spec.get('vendor_id', _ANY), 'vendor_id'),
            product_id=_hex_or_any(spec.get('product_id', _ANY),
                                   'product_id'),
            matches_address=_address_matcher(spec.get('address', _ANY)),
            devname=spec.get('devname'),
            physical_network=spec.get('physical_network'),
            resource_class=(_resource_class(spec['resource_class'])
                            if spec.get('resource_class') else None),
            traits=tuple(_trait(t) for t in traits.split(',')
                         if t.strip()))

    def matches(self, dev):
        parts = dict(zip(_ADDRESS_KEYS, dev.address.replace('.', ':')
                         .split(':')))
        if self.devname and self.devname not in [
                os.path.basename(p) for p in dev.glob('net/*')]:
            return False
        return (self.vendor_id in (_ANY, dev.vendor_id) and
                self.product_id in (_ANY, dev.product_id) and
                self.matches_address(parts))


class GenericPciDriver(base.Driver):
    """PCI devices selected by ``[pci] device_spec``."""

    name = 'generic_pci_driver'

    def __init__(self):
        self.specs = [DeviceSpec.parse(text)
                      for text in CONF.pci.device_spec]
        self.pci_ids = frozenset((s.vendor_id, s.product_id)
                                 for s in self.specs)

    def reported_name(self, vendor_id):
        return cyborg17.vendor_name(cyborg17.PCI_VENDORS, vendor_id)

    def _spec_for(self, dev):
        return next((s for s in self.specs if s.matches(dev)), None)

    def discover(self, pci_devices):
        # Group matched functions by the device whose address names them:
        # the matched device itself, or a VF's physical function.
        group = CONF.agent.group_virtual_functions
        groups = {}
        for dev in pci_devices.values():
            spec = self._spec_for(dev)
            if spec is None or dev.virtfns:
                continue
            name = (dev.physfn if group else None) or dev.address
            groups.setdefault(name, []).append((dev, spec))
        return [self._device(name, members, pci_devices.get(name))
                for name, members in groups.items()]

    def _device(self, name, members, owner):
        first, spec = members[0]
        if spec.resource_class:
            resource_class, traits = spec.resource_class, spec.traits
        else:
            resource_class, traits = cyborg17.names(
                placement_names.custom_name('PCI', first.vendor_id,
                                            first.product_id),
                spec.traits, CYBORG17_RESOURCE_CLASS,
                cyborg17.vendor_product_traits('PCI', cyborg17.PCI_VENDORS,
                                               first))
        extra = ({'physical_network': spec.physical_network}
                 if spec.physical_network else {})
        owner = owner or first
        deployable = report.deployable(
            name, self.reported_name(owner.vendor_id), resource_class,
            traits,
            [report.pci_handle(dev.address, **extra) for dev, _ in members])
        return report.device(
            CYBORG17_DEVICE_TYPE, owner.vendor_id,
            '%s:%s' % (owner.vendor_id, owner.product_id), name,
            [deployable], std_board_info=report.std_board_info(owner))
