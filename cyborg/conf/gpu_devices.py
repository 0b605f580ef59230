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

A type is offered on every GPU that supports it, unless a group named
``[vgpu_<type>]`` lists the GPUs for it in ``device_addresses`` (PCI
addresses of the physical GPUs, as in the service Cyborg replaces); list
them when a GPU supports several enabled types but can run only one at a
time. For example::

  [gpu_devices]
  enabled_vgpu_types = nvidia-35, nvidia-36

  [vgpu_nvidia-35]
  device_addresses = 0000:84:00.0,0000:85:00.0

  [vgpu_nvidia-36]
  device_addresses = 0000:86:00.0

Related options:

* ``[agent] enabled_drivers``, which must include the NVIDIA GPU driver
"""),
    cfg.BoolOpt(
        'filter_sriov_vfs',
        default=False,
        help="""
Keep the virtual functions of SR-IOV GPUs from being offered whole.

A GPU with SR-IOV on (Ampere and later) that offers no vGPU type is
offered whole, as ``PGPU``; so is each of its virtual functions, as a
device of its own, unless this is set, as the service Cyborg replaces did.
Assigning a MIG virtual function to a guest whole is unsafe: set it on
new deployments. On a deployment that ran the replaced service, first
release the accelerator requests that hold such virtual functions: their
devices and providers go.

Related options:

* ``enabled_vgpu_types``: a GPU that offers vGPUs is not offered whole
"""),
]

#: The option of each ``[vgpu_<type>]`` group.
device_addresses_opt = cfg.ListOpt(
    'device_addresses',
    default=[],
    help="""
PCI addresses of the physical GPUs that offer this vGPU type.

Empty: every GPU that supports the type offers it.
""")


def type_group(mdev_type):
    """The name of the group that configures vGPU type ``mdev_type``."""
    return 'vgpu_%s' % mdev_type


def register_type_opts(conf):
    """Register ``[vgpu_<type>]`` for each of ``enabled_vgpu_types``.

    Their names depend on another option, so they are registered once the
    configuration files are parsed.
    """
    for mdev_type in conf.gpu_devices.enabled_vgpu_types:
        conf.register_opt(device_addresses_opt, group=type_group(mdev_type))


def register_opts(conf):
    conf.register_group(gpu_devices_group)
    conf.register_opts(gpu_devices_opts, group=gpu_devices_group)


def list_opts():
    return {gpu_devices_group: gpu_devices_opts}
