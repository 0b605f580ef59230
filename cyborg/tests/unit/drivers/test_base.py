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
"""Loading drivers by entry-point name, and the fake driver."""

from importlib import metadata
import json

import fixtures

from cyborg.agent import resource_tracker
from cyborg.drivers import base as drivers_base
from cyborg.drivers import fake
from cyborg import exception
from cyborg.tests import base


class TestLoad(base.TestCase):

    def test_loads_in_order(self):
        drivers = drivers_base.load(['fake_driver'])
        self.assertEqual(['fake_driver'], [d.name for d in drivers])
        self.assertIsInstance(drivers[0], fake.FakeDriver)

    def test_unknown_name_fails(self):
        error = self.assertRaises(exception.DriverNotFound,
                                  drivers_base.load, ['fake_driver', 'gpu'])
        self.assertIn('gpu', str(error))
        self.assertIn(drivers_base.NAMESPACE, str(error))

    def test_every_entry_point_is_a_driver_named_after_it(self):
        names = [ep.name for ep in metadata.entry_points(
            group=drivers_base.NAMESPACE)]
        self.assertIn('fake_driver', names)
        for ep in metadata.entry_points(group=drivers_base.NAMESPACE):
            cls = ep.load()
            self.assertTrue(issubclass(cls, drivers_base.Driver), ep.name)
            self.assertEqual(ep.name, cls.name)


class TestReplacedServiceNames(base.TestCase):
    """Every driver name of the replaced service's setup.cfg loads."""

    #: Its ``cyborg.accelerator.driver`` entry points.
    NAMES = ['intel_fpga_driver', 'inspur_fpga_driver', 'xilinx_fpga_driver',
             'nvmf_spdk_driver', 'nvidia_gpu_driver', 'fake_driver',
             'huawei_ascend_driver', 'intel_qat_driver', 'intel_nic_driver',
             'inspur_nvme_ssd_driver', 'pci_driver']

    def test_every_name_loads(self):
        log = self.useFixture(fixtures.FakeLogger())
        drivers = drivers_base.load(self.NAMES)
        self.assertEqual(
            ['intel_fpga_driver', 'inspur_fpga_driver', 'xilinx_fpga_driver',
             'nvmf_spdk_driver', 'nvidia_gpu_driver', 'fake_driver',
             'huawei_ascend_driver', 'intel_qat_driver', 'intel_nic_driver',
             'nvme_ssd_driver', 'generic_pci_driver'],
            [d.name for d in drivers])
        for old, new in (('pci_driver', 'generic_pci_driver'),
                         ('inspur_nvme_ssd_driver', 'nvme_ssd_driver')):
            self.assertIn('Accelerator driver name %s is deprecated; it '
                          'loads %s' % (old, new), log.output)
        self.assertIn('nvmf_spdk_driver reports no devices', log.output)

    def test_old_and_new_name_load_one_driver(self):
        self.useFixture(fixtures.FakeLogger())
        drivers = drivers_base.load(['generic_pci_driver', 'pci_driver'])
        self.assertEqual(['generic_pci_driver'], [d.name for d in drivers])

    def test_nvmf_spdk_driver_reports_nothing(self):
        self.useFixture(fixtures.FakeLogger())
        (driver,) = drivers_base.load(['nvmf_spdk_driver'])
        self.assertEqual([], driver.discover({}))


class TestFakeDriver(base.TestCase):
    """It reports what the replaced service's fake driver reports."""

    def test_same_report_every_pass(self):
        driver = fake.FakeDriver()
        first = driver.discover({})
        self.assertEqual(
            [d.obj_to_primitive() for d in first],
            [d.obj_to_primitive() for d in driver.discover({})])
        (device,) = first
        self.assertEqual(
            ('FPGA', '0xABCD', 'miss model info', 'fake_vendor_info'),
            (device.type, device.vendor, device.model,
             device.vendor_board_info))
        self.assertEqual({'device_id': '0xabcd', 'class': 'Fake class'},
                         json.loads(device.std_board_info))
        self.assertEqual(('PCI', {'domain': '0000', 'bus': '0c',
                                  'device': '00', 'function': '0'}),
                         (device.controlpath_id.cpid_type,
                          device.controlpath_id.cpid_info))
        (dep,) = device.deployables
        self.assertEqual(('FakeDevice', 'fake', 16, None),
                         (dep.name, dep.driver_name, dep.num_accelerators,
                          dep.parent_name))
        self.assertEqual({'rc': 'FPGA', 'traits1': 'CUSTOM_FAKE_DEVICE'},
                         {a.key: a.value for a in dep.attributes})
        self.assertEqual({'TEST_PCI'},
                         {h.attach_type for h in dep.attach_handles})
        infos = [h.attach_info for h in dep.attach_handles]
        self.assertEqual({'domain': '0000', 'bus': '0c', 'device': '0',
                          'function': '1'}, infos[0])
        self.assertEqual({'domain': '0000', 'bus': '0c', 'device': '1',
                          'function': '0'}, infos[7])
        self.assertEqual({'domain': '0000', 'bus': '0c', 'device': '2',
                          'function': '0'}, infos[15])
        self.assertEqual(16, len({json.dumps(i, sort_keys=True)
                                  for i in infos}))

    def test_report_passes_the_agents_checks(self):
        driver = drivers_base.load(['fake_driver'])[0]
        resource_tracker.check(driver.name, driver.discover({}),
                               driver.reported_name)
        self.assertRaises(exception.InvalidDriverReport,
                          resource_tracker.check, driver.name,
                          driver.discover({}))

    def test_programming_changes_the_function(self):
        driver = fake.FakeDriver()
        region = driver.fpga_regions({})[fake.DEPLOYABLE]
        self.assertEqual(('fake', 'FakeDevice'),
                         (region.vendor, region.board))
        driver.program(region, '/nonexistent', {
            'id': '0d7e6a5f-4c3b-4b9e-8c3b-6f3e9d0c4c8f',
            'function_uuid': 'D8424DC4-A4A3-C413-F89E-433683F9040B'})
        (dep,) = driver.discover({})[0].deployables
        self.assertEqual('0d7e6a5f-4c3b-4b9e-8c3b-6f3e9d0c4c8f',
                         dep.bitstream_id)
        self.assertIn('CUSTOM_FPGA_FUNCTION_ID_'
                      'D8424DC4A4A3C413F89E433683F9040B',
                      {a.value for a in dep.attributes})
