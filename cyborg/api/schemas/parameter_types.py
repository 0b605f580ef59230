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
"""Parameter types shared by the schemas of every resource.

Request schemas check what clients send; response schemas (from
:func:`resource` and :func:`collection`) describe what the API answers,
for :mod:`cyborg.api.openapi`.
"""

import copy

from cyborg.api import microversion

UUID_PATTERN = ('^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                '[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')

uuid = {'type': 'string', 'pattern': UUID_PATTERN,
        'description_for_errors': 'must be a UUID'}

nullable_uuid = {'anyOf': [{'type': 'null'}, uuid],
                 'description_for_errors': 'must be a UUID or null'}

# A comma-separated list of UUIDs, as one query string value.
uuid_list = {
    'type': 'string',
    'pattern': '^%s(,%s)*$' % (UUID_PATTERN[1:-1], UUID_PATTERN[1:-1]),
    'description_for_errors': 'must be a comma-separated list of UUIDs'}

name = {'type': 'string', 'minLength': 1, 'maxLength': 255,
        'pattern': '^[A-Za-z0-9_-]+$',
        'description_for_errors': (
            'must be 1 to 255 letters, digits, underscores or hyphens')}

# Python's \s also matches \x1c-\x1f and \x85, ECMA-262's (the OpenAPI
# document's readers) does not: both spelled out, so the two agree.
hostname = {'type': 'string', 'minLength': 1, 'maxLength': 255,
            'pattern': r'^[^\s\x1c-\x1f\x85]+$',
            'description_for_errors': 'must be a host name of 1 to 255 '
                                      'characters without spaces'}

non_empty_string = {'type': 'string', 'minLength': 1, 'maxLength': 255}

#: The largest id an INTEGER column holds on every database (32 bits).
MAX_ID = 2 ** 31 - 1


def _up_to(number):
    """A regular expression of the decimal integers 1 to ``number``."""
    digits = str(number)
    options = []
    if len(digits) > 1:
        options.append('[1-9][0-9]{0,%d}' % (len(digits) - 2))
    for index, digit in enumerate(digits):
        lowest = 1 if index == 0 else 0
        if int(digit) > lowest:
            options.append('%s[%d-%d][0-9]{%d}' % (
                digits[:index], lowest, int(digit) - 1,
                len(digits) - index - 1))
    options.append(digits)
    return '^(%s)$' % '|'.join(options)


#: A database id: a positive integer that fits the column.
db_id = {'type': 'integer', 'minimum': 1, 'maximum': MAX_ID}

#: A database id in a string (a query string value, or as clients send).
db_id_string = {'type': 'string', 'pattern': _up_to(MAX_ID),
                'description_for_errors': 'must be an id from 1 to %d'
                                          % MAX_ID}

# Query string values are strings; these accept what the API converts.
positive_integer_string = {
    'type': 'string', 'pattern': '^[1-9][0-9]{0,8}$',
    'description_for_errors': 'must be a positive integer'}

sort_dir = {'type': 'string', 'enum': ['asc', 'desc']}


def paging(sort_keys):
    """The 2.4 paging parameters for a list sortable by ``sort_keys``."""
    return {'limit': positive_integer_string, 'marker': uuid,
            'sort_key': {'type': 'string', 'enum': list(sort_keys)},
            'sort_dir': sort_dir}


def paging_query(sort_keys):
    """The schema of the paging parameters alone."""
    return {'type': 'object', 'properties': paging(sort_keys),
            'additionalProperties': False}


def list_query(version, properties, sort_keys, since=None):
    """The query string schema of a list at ``version``.

    ``since`` maps a microversion (named for what it allows, see
    :mod:`cyborg.api.microversion`) to the parameters it adds, or
    replaces; from :data:`~cyborg.api.microversion.PAGING` a list takes
    the paging parameters too.
    """
    props = copy.deepcopy(properties)
    if version >= microversion.PAGING:
        props.update(paging(sort_keys))
    for gate, added in sorted((since or {}).items()):
        if version >= gate:
            props.update(added)
    return {'type': 'object', 'properties': props,
            'additionalProperties': False}


no_query = {'type': 'object', 'properties': {},
            'additionalProperties': False}


# The pieces of response schemas (what the API answers).

nullable_string = {'type': ['string', 'null']}
nullable_integer = {'type': ['integer', 'null']}
string_dict = {'type': 'object', 'additionalProperties': {'type': 'string'}}

timestamp = {'type': 'string', 'format': 'date-time'}
nullable_timestamp = {'type': ['string', 'null'], 'format': 'date-time'}

#: A resource's ``self`` link, and for some its unversioned ``bookmark``.
links = {
    'type': 'array', 'minItems': 1,
    'items': {
        'type': 'object',
        'properties': {'href': {'type': 'string', 'minLength': 1},
                       'rel': {'type': 'string',
                               'enum': ['self', 'bookmark']}},
        'required': ['href', 'rel'],
        'additionalProperties': False,
    },
}


def resource(properties, since=()):
    """The response schema of a resource with ``properties``.

    Every field is always shown but those of ``since``, which a later
    microversion added.
    """
    return {'type': 'object', 'properties': properties,
            'required': [name for name in properties if name not in since],
            'additionalProperties': False}


def collection(key, item):
    """The response schema of a list of ``item`` under ``key``.

    From 2.4 a list ends with ``next``, the URL of the following page or
    null.
    """
    return {'type': 'object',
            'properties': {key: {'type': 'array', 'items': item},
                           'next': nullable_string},
            'required': [key], 'additionalProperties': False}
