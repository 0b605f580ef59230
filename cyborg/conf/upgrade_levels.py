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

"""Options of the [upgrade_levels] group: RPC version caps for upgrades."""

from oslo_config import cfg

upgrade_levels_group = cfg.OptGroup(
    'upgrade_levels',
    title='RPC version caps',
    help=('Caps on the RPC API versions Cyborg services send, for rolling '
          'upgrades. While services of two releases run side by side, cap the '
          'newer services to the version the older ones understand; remove '
          'the caps once every service runs the new release, and restart.'))

upgrade_levels_opts = [
    cfg.StrOpt(
        'conductor',
        help="""
Highest conductor RPC API version that clients send.

Set it on cyborg-api and cyborg-agent services while some conductors still
run the previous release, so that no conductor receives a call it does not
know. The value is an RPC API version number such as ``1.0`` (release names
are not accepted); a call that needs a newer version than the cap fails.
When unset, the newest version is sent.
"""),
    cfg.StrOpt(
        'agent',
        help="""
Highest agent RPC API version that clients send.

Set it on conductors while some cyborg-agent services still run the
previous release; upgrade conductors before agents. The value is an RPC API
version number such as ``1.0`` (release names are not accepted); a call that
needs a newer version than the cap fails. When unset, the newest version is
sent.
"""),
]


def register_opts(conf):
    conf.register_group(upgrade_levels_group)
    conf.register_opts(upgrade_levels_opts, group=upgrade_levels_group)


def list_opts():
    return {upgrade_levels_group: upgrade_levels_opts}
