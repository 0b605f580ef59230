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
"""The attributes that carry a deployable's resource class and traits.

A driver reports, for each deployable it offers, attribute ``rc`` with
the resource class of the deployable's resource provider and attributes
``trait0``, ``trait1``, ... with its traits. The conductor reads them to
build the provider in Placement and to check that a deployable serves a
bind; other attributes (an admin's own) do not take part. ``traits<N>``
counts as a trait too: the fake driver of the service Cyborg replaces
spells it so, and databases upgraded from that service hold such rows.
"""

import re

from cyborg.common import placement_names
from cyborg.i18n import _

RC_KEY = 'rc'
_TRAIT_KEY = re.compile(r'^traits?[0-9]+$')


def is_trait_key(key):
    """Whether attribute ``key`` names a trait."""
    return _TRAIT_KEY.match(key) is not None


def encode(resource_class, traits):
    """The ``(key, value)`` pairs of a deployable, traits sorted."""
    pairs = [(RC_KEY, resource_class)]
    pairs.extend(('trait%d' % i, trait)
                 for i, trait in enumerate(sorted(set(traits))))
    return pairs


def decode(attributes):
    """The resource class (or None) and the traits the attributes name.

    :param attributes: ``{key: value}`` or ``(key, value)`` pairs.
    :returns: (resource class, frozenset of traits).
    """
    pairs = (attributes.items() if isinstance(attributes, dict)
             else attributes)
    resource_class, traits = None, set()
    for key, value in pairs:
        if key == RC_KEY:
            resource_class = value
        elif is_trait_key(key):
            traits.add(value)
    return resource_class, frozenset(traits)


def validate(pairs):
    """Check a driver's attributes for one deployable.

    :param pairs: ``(key, value)`` pairs.
    :raises ValueError: naming what breaks the convention: not exactly
        one ``rc``, a repeated key, another key, or a bad name.
    """
    keys = [key for key, _value in pairs]
    if keys.count(RC_KEY) != 1 or len(set(keys)) != len(keys):
        raise ValueError(_('it needs one "rc" attribute and distinct keys'))
    for key, value in pairs:
        if key == RC_KEY:
            if not placement_names.is_resource_class(value):
                raise ValueError(_('bad resource class %s') % value)
        elif not (is_trait_key(key) and placement_names.is_trait(value)):
            raise ValueError(_('bad trait %(key)s=%(value)s')
                             % {'key': key, 'value': value})
