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

"""Options of the [gpu_devices] group: virtual GPUs the agent offers."""

from oslo_config import cfg

gpu_devices_group = cfg.OptGroup(
    'gpu_devices',
    title='GPU options',
    help='Options of the NVIDIA GPU driver of cyborg-agent.')

gpu_devices_opts = [
    cfg.ListOpt(
        'enabled_vgpu_types',
        default=[],
        help="""
Mediated device (mdev) types offered as virtual GPUs.

Names of NVIDIA vGPU types, such as ``nvidia-35``, as listed under
``mdev_supported_types`` of a GPU in sysfs. A GPU that supports one of these
types is reported as ``VGPU`` inventory (as many units as the type allows
instances on it) and Cyborg creates an mdev of that type for each bound
request; other GPUs are offered whole, as ``PGPU``. Leave empty to offer
whole GPUs only. Nova must not also manage these GPUs through its own
``[devices] enabled_mdev_types``.

Related options:

* ``[agent] enabled_drivers``, which must include the NVIDIA GPU driver
"""),
]


def register_opts(conf):
    conf.register_group(gpu_devices_group)
    conf.register_opts(gpu_devices_opts, group=gpu_devices_group)


def list_opts():
    return {gpu_devices_group: gpu_devices_opts}
