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
"""The query string of a list: filters, their microversions, and paging.

A collection declares its filters (``query``), the ones a microversion
adds or changes (``query_since``, keyed by the microversion constants of
:mod:`cyborg.api.microversion`, named for what they allow) and what it may
be sorted by; this module validates a request's query against them.
"""

from cyborg.api import microversion
from cyborg.api.schemas import parameter_types
from cyborg.api import validation
import cyborg.conf
from cyborg.i18n import _

CONF = cyborg.conf.CONF

#: The paging parameters of a list query.
PAGING_KEYS = ('limit', 'marker', 'sort_key', 'sort_dir')


def paging(params, version, always=False):
    """limit, marker, sort_key and sort_dir of a list query.

    Before :data:`~cyborg.api.microversion.PAGING` a list has no pages
    (unless ``always``: the older releases' filters asked for them);
    from it a page holds at most ``[api] max_limit`` items.
    """
    if version < microversion.PAGING and not always:
        return {}
    limit = min(int(params.get('limit', CONF.api.max_limit)),
                CONF.api.max_limit)
    return {'limit': limit, 'marker': params.get('marker'),
            'sort_key': params.get('sort_key'),
            'sort_dir': params.get('sort_dir')}


def names(query, query_since):
    """Every filter's name, at any microversion."""
    result = set(query)
    for added in query_since.values():
        result.update(added)
    return result


def read(request, version, query, query_since, sort_keys, legacy):
    """The validated query of a list request.

    :param legacy: the list took the ``filters.field``/``filters.value``
        pairs of the releases before ours.
    :returns: (parameters, legacy filters by field, page): the paging
        fields of legacy filters page at any microversion.
    """
    params = validation.query(request, parameter_types.list_query(
        version, query, sort_keys, query_since), legacy=legacy)
    old = validation.legacy_filters(request) if legacy else {}
    old_paging = {k: old[k] for k in PAGING_KEYS if k in old}
    if old_paging:
        validation.validate(parameter_types.paging_query(sort_keys),
                            old_paging, _('filter'))
        params = dict(old_paging, **params)
    return params, old, paging(params, version, always=bool(old_paging))
