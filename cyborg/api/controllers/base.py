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
"""What a controller asks of the request it serves.

The other parts every v2 controller shares have modules of their own:
:mod:`~cyborg.api.controllers.links`,
:mod:`~cyborg.api.controllers.resource` (response types),
:mod:`~cyborg.api.controllers.query` (filters, microversions, paging),
:mod:`~cyborg.api.controllers.routing` (405 answers) and
:mod:`~cyborg.api.controllers.collection` (lists and shows).
"""

import pecan
import webob


def empty(status):
    """A response without a body (202, 204): not even a JSON null."""
    return webob.Response(status=status, content_type=None)


def version():
    """The microversion of the current request."""
    return pecan.request.context['version']


def context():
    """The :class:`cyborg.context.RequestContext` of the current request."""
    return pecan.request.context['cyborg']


def conductor():
    """The conductor's RPC API, through which every write goes."""
    return pecan.request.context['conductor']
