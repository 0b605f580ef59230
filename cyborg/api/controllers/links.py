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
"""Links to resources: the public base URL, ``self`` and ``bookmark``."""

import pecan
from wsme import types as wtypes

import cyborg.conf

CONF = cyborg.conf.CONF


def base_url():
    """``[api] public_endpoint``, else this request's host and mount."""
    if CONF.api.public_endpoint:
        return CONF.api.public_endpoint.rstrip('/')
    return pecan.request.application_url.rstrip('/')


class Link(wtypes.Base):
    """A link to a resource."""

    href = wtypes.text
    rel = wtypes.text


def links(collection, uuid, bookmark=False, url=None):
    """The ``self`` link (and the unversioned ``bookmark``) of a resource.

    ``url`` is :func:`base_url`, when the caller has it already.
    """
    url = url or base_url()
    result = [{'href': '%s/v2/%s/%s' % (url, collection, uuid),
               'rel': 'self'}]
    if bookmark:
        result.append({'href': '%s/%s/%s' % (url, collection, uuid),
                       'rel': 'bookmark'})
    return result
