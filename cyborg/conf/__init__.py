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

"""Cyborg's configuration; use it as ``CONF = cyborg.conf.CONF``."""

from oslo_config import cfg

from cyborg.conf import agent
from cyborg.conf import api
from cyborg.conf import audit
from cyborg.conf import conductor
from cyborg.conf import database
from cyborg.conf import default
from cyborg.conf import fpga
from cyborg.conf import glance
from cyborg.conf import gpu_devices
from cyborg.conf import metrics
from cyborg.conf import nic
from cyborg.conf import nic_devices
from cyborg.conf import nova
from cyborg.conf import pci
from cyborg.conf import placement
from cyborg.conf import service_user
from cyborg.conf import sys_admin
from cyborg.conf import tls
from cyborg.conf import upgrade_levels

CONF = cfg.CONF

default.register_opts(CONF)
agent.register_opts(CONF)
api.register_opts(CONF)
audit.register_opts(CONF)
conductor.register_opts(CONF)
database.register_opts(CONF)
fpga.register_opts(CONF)
glance.register_opts(CONF)
gpu_devices.register_opts(CONF)
metrics.register_opts(CONF)
nic.register_opts(CONF)
nic_devices.register_opts(CONF)
nova.register_opts(CONF)
pci.register_opts(CONF)
placement.register_opts(CONF)
service_user.register_opts(CONF)
sys_admin.register_opts(CONF)
tls.register_opts(CONF)
upgrade_levels.register_opts(CONF)
