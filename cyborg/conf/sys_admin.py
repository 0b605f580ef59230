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

"""openstack-cyborg's ``[cyborg_sys_admin]``: its one privsep daemon.

The agent's root work runs in two daemons with fewer capabilities,
configured in ``[privsep_sysfs]`` and ``[privsep_vendor_tool]``
(:mod:`cyborg.privsep`). The old group's options (oslo.privsep's) are
accepted so that the old file loads, and each one set is warned about at
start, naming the groups that replace it.
"""

from oslo_config import cfg

from cyborg.conf import ignored

GROUP = 'cyborg_sys_admin'

REASON = ('replaced by [privsep_sysfs] and [privsep_vendor_tool]: the '
          'agent runs its root work in two daemons with fewer '
          'capabilities; set this option there (see the agent guide).')

sys_admin_opts = [
    ignored.option(cfg.StrOpt, 'user', REASON),
    ignored.option(cfg.StrOpt, 'group', REASON),
    ignored.option(cfg.ListOpt, 'capabilities', REASON),
    ignored.option(cfg.IntOpt, 'thread_pool_size', REASON),
    ignored.option(cfg.StrOpt, 'helper_command', REASON),
    ignored.option(cfg.StrOpt, 'logger_name', REASON),
]


def register_opts(conf):
    conf.register_opts(sys_admin_opts, group=GROUP)


def list_opts():
    return {GROUP: sys_admin_opts}
