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
"""Configuration files written for the service Cyborg replaces still load.

Every option of its ``cyborg/conf`` is read under its new name, or
accepted and ignored with a warning.
"""

import os

import fixtures

from cyborg.conductor import manager as conductor_manager
import cyborg.conf
from cyborg.conf import nic_devices
from cyborg.conf import opts
from cyborg.drivers import base as drivers_base
from cyborg.tests import base

CONF = cyborg.conf.CONF

OLD_CONF = """
[DEFAULT]
pybasedir = /usr/lib/python3/dist-packages/cyborg
bindir = /usr/local/bin
fatal_exception_format_errors = true
thread_pool_size = 7
periodic_interval = 30

[agent]
enabled_drivers = fake_driver,pci_driver,intel_nic_driver
resource_provider_startup_retries = 5

[api]
api_paste_config = /etc/cyborg/api-paste.ini
enable_ssl_api = false

[database]
mysql_engine = InnoDB

[glance]
num_retries = 4
api_insecure = true

[ssl]
ca_file = /etc/ssl/old-ca.pem
version = TLSv1_2

[gpu_devices]
enabled_vgpu_types = nvidia-35, nvidia-36
filter_sriov_vfs = true

[vgpu_nvidia-35]
device_addresses = 0000:84:00.0

[nic_devices]
enabled_nic_types = x710_static

[x710_static]
physical_device_mappings = physnet1:ens785f0
function_device_mappings = GTPv1:ens785f0

[cyborg_sys_admin]
helper_command = sudo cyborg-rootwrap /etc/cyborg/rootwrap.conf privsep-helper

[pci]
passthrough_whitelist = {"vendor_id": "8086", "product_id": "0d5c"}
"""

IGNORED = [('DEFAULT', 'pybasedir'), ('DEFAULT', 'bindir'),
           ('DEFAULT', 'fatal_exception_format_errors'),
           ('api', 'api_paste_config'), ('ssl', 'version'),
           ('database', 'mysql_engine'),
           ('cyborg_sys_admin', 'helper_command')]


class TestReplacedServiceConfig(base.TestCase):

    def setUp(self):
        super().setUp()
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'cyborg.conf')
        with open(path, 'w') as f:
            f.write(OLD_CONF)
        self.log = self.useFixture(fixtures.FakeLogger())
        CONF(['--config-file', path], project='cyborg',
             default_config_files=[], default_config_dirs=[])
        # oslo.config and oslo.log warn once per process about an option;
        # every test here may expect the warning.
        for opt in [o for _group, group_opts in opts.list_opts()
                    for o in group_opts] + nic_devices.type_opts:
            if opt.deprecated_for_removal:
                self.useFixture(fixtures.MockPatchObject(
                    opt, '_logged_deprecation', False))
        self.useFixture(fixtures.MockPatch(
            'oslo_log.versionutils._deprecated_messages_sent', {}))

    def test_renamed_options_are_read(self):
        self.assertEqual(5, CONF.agent.placement_wait_retries)
        self.assertEqual(7, CONF.thread_pool_size)
        self.assertEqual(4, CONF.glance.connect_retries)
        self.assertTrue(CONF.glance.insecure)
        self.assertEqual('/etc/ssl/old-ca.pem', CONF.glance.cafile)
        self.assertEqual(['{"vendor_id": "8086", "product_id": "0d5c"}'],
                         CONF.pci.device_spec)
        self.assertIn('Option "resource_provider_startup_retries" from '
                      'group "agent" is deprecated. Use option '
                      '"placement_wait_retries"', self.log.output)

    def test_thread_pool_size_sizes_the_bind_threads(self):
        manager = conductor_manager.ConductorManager('host1')
        self.addCleanup(manager.executor.shutdown)
        self.assertEqual(7, manager.executor._max_workers)

    def test_ignored_options_are_named_in_warnings(self):
        opts.warn_deprecated(CONF)
        self.assertNotIn('function_device_mappings', self.log.output)
        # The NIC driver registers the NIC types' groups.
        drivers_base.load(['intel_nic_driver'])
        for group, name in IGNORED:
            self.assertIn('Option "%s" from group "%s" is deprecated for '
                          'removal' % (name, group), self.log.output)
        self.assertNotIn('filter_sriov_vfs', self.log.output)
        # The warning names what replaces the old privsep group.
        self.assertIn('replaced by [privsep_sysfs] and [privsep_vendor_tool]',
                      self.log.output)

    def test_periodic_interval_paces_the_agent_too(self):
        # openstack-cyborg's agent reported every periodic_interval.
        self.assertEqual(30, CONF.periodic_interval)
        self.assertEqual(30, CONF.agent.report_interval)

    def test_drivers_read_the_old_groups(self):
        drivers = drivers_base.load(CONF.agent.enabled_drivers)
        self.assertEqual(
            ['fake_driver', 'generic_pci_driver', 'intel_nic_driver'],
            [d.name for d in drivers])
        self.assertEqual({'ens785f0': 'physnet1'}, drivers[2].physnets)
        (nvidia,) = drivers_base.load(['nvidia_gpu_driver'])
        self.assertEqual({'nvidia-35': {'0000:84:00.0'}}, nvidia.type_gpus)
