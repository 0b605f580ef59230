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


class TestFakeDriver(base.TestCase):

    def test_same_report_every_pass(self):
        driver = fake.FakeDriver()
        first = driver.discover({})
        self.assertEqual(
            [d.obj_to_primitive() for d in first],
            [d.obj_to_primitive() for d in driver.discover({})])
        (device,) = first
        self.assertEqual('FPGA', device.type)
        (dep,) = device.deployables
        self.assertEqual(fake.CARD, dep.name)
        self.assertEqual(2, dep.num_accelerators)
        self.assertEqual(
            {'rc': 'FPGA', 'trait0': 'CUSTOM_FPGA_FAKE',
             'trait1': 'CUSTOM_FPGA_REGION_' + fake.REGION_TYPE.upper()},
            {a.key: a.value for a in dep.attributes})
        self.assertEqual({'domain': '0000', 'bus': 'ff', 'device': '00',
                          'function': '1'},
                         dep.attach_handles[0].attach_info)

    def test_programming_changes_the_function(self):
        driver = fake.FakeDriver()
        region = driver.fpga_regions({})[fake.CARD]
        self.assertEqual(('Fake', 'FAKE'), (region.vendor, region.board))
        driver.program(region, '/nonexistent', {
            'id': '0d7e6a5f-4c3b-4b9e-8c3b-6f3e9d0c4c8f',
            'function_uuid': 'D8424DC4-A4A3-C413-F89E-433683F9040B'})
        (dep,) = driver.discover({})[0].deployables
        self.assertEqual('0d7e6a5f-4c3b-4b9e-8c3b-6f3e9d0c4c8f',
                         dep.bitstream_id)
        self.assertIn('CUSTOM_FPGA_FUNCTION_ID_'
                      'D8424DC4A4A3C413F89E433683F9040B',
                      {a.value for a in dep.attributes})
