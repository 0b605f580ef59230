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
"""Names of resource classes, traits and providers, as Placement takes them.

A name is either one of Placement's standard ones (os-resource-classes,
os-traits) or ``CUSTOM_`` followed by upper-case letters, digits and
underscores. Cyborg's drivers make their custom names with
:func:`custom_name`; the FPGA region and function traits, which both the
FPGA drivers and the conductor's programming decision read, are made here
from their normalised ids; so are the names and uuids of the providers of
deployables.
"""

import re
import uuid

import os_resource_classes
import os_traits

_CUSTOM = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_MAX_LENGTH = 255
_STANDARD_CLASSES = frozenset(os_resource_classes.STANDARDS)
_STANDARD_TRAITS = frozenset(os_traits.get_traits())


def _any_of(standard):
    return '(%s|%s)' % ('|'.join(sorted(standard)), _CUSTOM.pattern[1:-1])


#: Regular expressions (Python's and ECMA 262's alike, to be anchored)
#: of the names :func:`is_resource_class` and :func:`is_trait` take; the
#: length, at most 255, is not in them.
RESOURCE_CLASS_PATTERN = _any_of(_STANDARD_CLASSES)
TRAIT_PATTERN = _any_of(_STANDARD_TRAITS)


def _valid(name, standard):
    return name in standard or bool(_CUSTOM.match(name) and
                                    len(name) <= _MAX_LENGTH)


def is_resource_class(name):
    """Whether ``name`` is a standard or a well-formed custom class."""
    return _valid(name, _STANDARD_CLASSES)


def is_trait(name):
    """Whether ``name`` is a standard or a well-formed custom trait."""
    return _valid(name, _STANDARD_TRAITS)


def custom_name(*parts):
    """A custom trait or resource class name made of ``parts``.

    ``CUSTOM_`` and the parts, upper-cased and joined by ``_``; characters
    that Placement names cannot hold become ``_``.
    """
    name = '_'.join(str(part) for part in parts if part)
    return 'CUSTOM_' + re.sub(r'[^A-Z0-9_]', '_', name.upper())


def normalize_id(text):
    """An FPGA id as lower-case hexadecimal without dashes or ``0x``.

    Bitstream, region type and function ids are compared in this form,
    however sysfs or a Glance image spells them.

    :returns: None for an empty or all-zero id, which sysfs shows for a
        region without a function.
    """
    value = (text or '').strip().lower().replace('-', '')
    value = value.removeprefix('0x')
    if not value.strip('0'):
        return None
    return value


def normalize_ids(texts):
    """The distinct non-empty ids among ``texts``, normalized and sorted."""
    return tuple(sorted({i for i in map(normalize_id, texts) if i}))


def region_trait(region_type):
    """The trait of an FPGA region of type ``region_type`` (normalized)."""
    return custom_name('FPGA_REGION', region_type)


def function_trait(function_id):
    """The trait of an FPGA region holding a function (normalized id)."""
    return custom_name('FPGA_FUNCTION_ID', function_id)


#: The prefixes of the traits that say what an FPGA region holds: its
#: function (``CUSTOM_FPGA_FUNCTION_ID_<id>``, and 17.0.0's
#: ``CUSTOM_FPGA_FUNCTION_ID_INTEL_<id>``) and the type the loaded image
#: gave it (``CUSTOM_FPGA_REGION_<id>``, ``CUSTOM_FPGA_REGION_INTEL_<id>``).
_LOADED_PREFIXES = (custom_name('FPGA_FUNCTION_ID') + '_',
                    custom_name('FPGA_REGION') + '_')


def names_loaded(trait):
    """Whether ``trait`` says what an FPGA region holds.

    Programming a region makes such traits untrue until its host reports
    it again: they are withheld meanwhile
    (:mod:`cyborg.conductor.programming`).
    """
    return trait.startswith(_LOADED_PREFIXES)


def provider_name(hostname, deployable_name):
    """The resource provider name of a deployable of ``hostname``.

    The API shows it as the deployable's name, which is how the releases
    before ours named deployables.
    """
    return '%s_%s' % (hostname, deployable_name)


def provider_uuid(name):
    """The resource provider uuid that Cyborg gives the provider ``name``.

    A name-based uuid (version 3, DNS namespace) of the name, as
    openstack-cyborg derives it: every conductor finds the same provider
    for the same deployable, and so does the service Cyborg replaces.
    """
    return str(uuid.uuid3(uuid.NAMESPACE_DNS, name))
