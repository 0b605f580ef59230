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

"""Options of the [audit] group: CADF audit events of API requests."""

from oslo_config import cfg
from pycadf import identifier

audit_group = cfg.OptGroup(
    'audit',
    title='Audit options',
    help='Whether cyborg-api emits a CADF audit event for each request, '
         'with keystonemiddleware\'s audit middleware. Where the events go '
         'is set in [audit_middleware_notifications].')

audit_opts = [
    cfg.BoolOpt(
        'enabled',
        default=False,
        help="""
Emit a CADF audit event for every API request and its response.

The events name the caller (from the token), the action and the resource
that the request's URL names (mapped by ``audit_map_file``), and its
outcome. They are sent as notifications through the driver of
``[audit_middleware_notifications]`` (oslo.messaging's by default, to the
transport of ``[DEFAULT] transport_url``). Enable it where an audit trail of
who changed which accelerator resource is required; it costs one
notification per request.
"""),
    cfg.StrOpt(
        'audit_map_file',
        default='/etc/cyborg/api_audit_map.conf',
        help="""
The file that maps API paths to CADF resource types.

Cyborg ships one as ``etc/cyborg/api_audit_map.conf``, installed under
``/etc/cyborg``; change it only to rename the types. Read when
``enabled`` is true.
"""),
    cfg.ListOpt(
        'ignore_req_list',
        default=[],
        help="""
HTTP methods whose requests emit no audit event, such as ``GET,HEAD``.

Leave empty to audit every request; list the read methods to audit
changes only.
"""),
]


def register_opts(conf):
    conf.register_group(audit_group)
    conf.register_opts(audit_opts, group=audit_group)


def list_opts():
    # pycadf, which builds the events, adds its ``namespace`` option (the
    # prefix of the events' ids) to the same group as it is imported.
    return {audit_group: audit_opts + identifier.opts}
