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
"""Parameter types shared by the schemas of every resource."""

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

hostname = {'type': 'string', 'minLength': 1, 'maxLength': 255,
            'pattern': r'^[^\s]+$',
            'description_for_errors': 'must be a host name of 1 to 255 '
                                      'characters without spaces'}

non_empty_string = {'type': 'string', 'minLength': 1, 'maxLength': 255}

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


def list_query(version, properties, sort_keys, properties_2_4=None):
    """The query string schema of a list at ``version``."""
    props = copy.deepcopy(properties)
    if version >= microversion.PAGING:
        props.update(paging(sort_keys))
        props.update(properties_2_4 or {})
    return {'type': 'object', 'properties': props,
            'additionalProperties': False}


no_query = {'type': 'object', 'properties': {},
            'additionalProperties': False}
