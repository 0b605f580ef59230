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
"""PCI addresses (``0000:5e:00.1``) and their parts.

Attach handles and control path ids store an address as its parts,
``domain``, ``bus``, ``device`` and ``function``; this module turns one
into the other, for the drivers that report them and the conductor that
hands them out.
"""

import re

#: The keys of an address's parts.
PARTS = ('domain', 'bus', 'device', 'function')

_ADDRESS = re.compile(
    r'^(?P<domain>[0-9a-f]{4}):(?P<bus>[0-9a-f]{2}):'
    r'(?P<device>[0-9a-f]{2})\.(?P<function>[0-7])$')


def parse(address):
    """Split ``0000:5e:00.1`` into its domain, bus, device and function.

    :raises ValueError: not a full, lower-case PCI address.
    """
    match = _ADDRESS.match(address)
    if match is None:
        raise ValueError('%r is not a PCI address' % address)
    return match.groupdict()


def join(parts):
    """The address of a dict holding its parts (and maybe other keys).

    :raises KeyError: a part is missing.
    """
    return '%(domain)s:%(bus)s:%(device)s.%(function)s' % parts


def address_of(info):
    """:func:`join`, or None where ``info`` is no dict of the parts."""
    try:
        return join(info)
    except (KeyError, TypeError):
        return None


def offset(address, count):
    """The address ``count`` routing ids after ``address``.

    SR-IOV places virtual functions at fixed routing-id offsets from their
    physical function, and bitstream topologies give PCI offsets the same
    way: the device and function numbers carry into the bus number.
    """
    parts = parse(address)
    rid = (int(parts['bus'], 16) << 8 | int(parts['device'], 16) << 3 |
           int(parts['function'], 16)) + count
    if not 0 <= rid <= 0xffff:
        raise ValueError('offset %d from %s leaves the PCI domain'
                         % (count, address))
    return '%s:%02x:%02x.%x' % (parts['domain'], rid >> 8, (rid >> 3) & 0x1f,
                                rid & 0x7)
