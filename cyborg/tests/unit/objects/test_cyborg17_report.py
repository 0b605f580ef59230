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
"""openstack-cyborg 17.0.0's agent reports, as this release reads them."""

import json

from cyborg.common import rpc
from cyborg import exception
from cyborg.objects import base as objects_base
from cyborg.objects import cyborg17_report as wire
from cyborg.tests import base

HOST = 'compute1'


def _info(address, **extra):
    domain, bus, rest = address.split(':')
    device, function = rest.split('.')
    return json.dumps(dict(domain=domain, bus=bus, device=device,
                           function=function, **extra))


def _device(kind, address, deployables, **extra):
    return wire.DriverDevice(
        vendor='0x8086', model='m', type=kind, std_board_info=None,
        vendor_board_info=None,
        controlpath_id=wire.DriverControlPathID(cpid_type='PCI',
                                                cpid_info=_info(address)),
        deployable_list=deployables, **extra)


def _deployable(name, handles=(), attributes=(), driver='intel'):
    return wire.DriverDeployable(
        name=name, num_accelerators=len(handles), driver_name=driver,
        attribute_list=[wire.DriverAttribute(key=k, value=v)
                        for k, v in attributes],
        attach_handle_list=list(handles))


class TestHostReport(base.TestCase):

    def test_a_primitive_of_17_is_read(self):
        # What 17.0.0's serializer sends: its names, its versions.
        device = _device('FPGA', '0000:0c:00.0', [_deployable(
            HOST + '_FakeDevice', driver='fake')])
        primitive = rpc.RequestContextSerializer(
            objects_base.CyborgObjectSerializer()).serialize_entity(
                self.context, [device])
        self.assertEqual(('DriverDevice', '1.4', 'cyborg'), (
            primitive[0]['cyborg_object.name'],
            primitive[0]['cyborg_object.version'],
            primitive[0]['cyborg_object.namespace']))
        back = objects_base.CyborgObjectSerializer().deserialize_entity(
            self.context, primitive)
        report = wire.host_report(HOST, back)
        self.assertEqual('FakeDevice', report.devices[0].deployables[0].name)

    def test_names_traits_and_handles(self):
        mdev = wire.DriverAttachHandle(
            attach_type='MDEV', attach_info=_info(
                '0000:d8:00.0', asked_type='nvidia-222',
                vgpu_mark='nvidia-222_0'))
        vf = wire.DriverAttachHandle(attach_type='PCI',
                                     attach_info=_info('0000:3d:01.0'))
        report = wire.host_report(HOST, [
            _device('GPU', '0000:d8:00.0', [_deployable(
                HOST + '_0000:d8:00.0', [mdev],
                [('rc', 'VGPU'), ('trait0', 'CUSTOM_A'),
                 ('trait0', 'CUSTOM_B')])]),
            _device('QAT', '0000:3d:00.0', [
                _deployable(HOST + '_0000:3d:01.0', [vf]),
                _deployable(HOST + '_0000:3d:01.1')]),
        ])
        gpu, qat = report.devices
        (dep,) = gpu.deployables
        self.assertEqual('0000:d8:00.0', dep.name)
        self.assertEqual([('rc', 'VGPU'), ('trait0', 'CUSTOM_A'),
                          ('trait1', 'CUSTOM_B')],
                         [(a.key, a.value) for a in dep.attributes])
        self.assertEqual({'domain': '0000', 'bus': 'd8', 'device': '00',
                          'function': '0', 'asked_type': 'nvidia-222'},
                         dep.attach_handles[0].attach_info)
        self.assertEqual(['0000:3d:01.0', '0000:3d:01.1'],
                         [d.name for d in qat.deployables])
        self.assertEqual({'domain': '0000', 'bus': '3d', 'device': '00',
                          'function': '0'}, qat.controlpath_id.cpid_info)

    def test_stub_kept_as_recorded_or_left_out(self):
        stub = _device('FPGA', '0000:5e:00.0', [], stub=True)
        self.assertEqual({'0000:5e:00.0'}, wire.stub_addresses([stub]))
        self.assertEqual([], wire.host_report(HOST, [stub]).devices)
        (recorded,) = wire.host_report(HOST, [_device(
            'FPGA', '0000:5e:00.0', [_deployable('region')])]).devices
        kept = wire.host_report(HOST, [stub], {'0000:5e:00.0': recorded})
        self.assertEqual([recorded], kept.devices)

    def test_what_this_release_cannot_read_is_refused(self):
        for device in (
                _device('QUANTUM', '0000:5e:00.0', []),
                _device('FPGA', '0000:5e:00.0', [_deployable(
                    'x', [wire.DriverAttachHandle(attach_type='PCI',
                                                  attach_info='5e')])]),
                wire.DriverDevice(vendor='v', model='m', type='FPGA')):
            error = self.assertRaises(exception.InvalidHostReport,
                                      wire.host_report, HOST, [device])
            self.assertIn(HOST, str(error))


class TestServerName(base.TestCase):
    """Which name a 17.0.0 agent listens on, from what it reports."""

    def _name(self, *deployables):
        return wire.server_name('node.example.org', [
            _device('GPU', '0000:%02x:00.0' % n, [deployable])
            for n, deployable in enumerate(deployables)])

    def test_host_of_the_drivers_that_name_after_it(self):
        self.assertEqual('compute-1', self._name(
            _deployable('system_0000:5e:00.0', driver='intel'),
            _deployable('compute-1_0000:3b:00.0', driver='NVIDIA'),
            _deployable('compute_1_0000:b1:00.0', driver='fake')))

    def test_the_system_host_name_of_intel_drivers_else(self):
        self.assertEqual('system', self._name(
            _deployable('system_0000:5e:00.0', driver='intel'),
            _deployable('FakeDevice', driver='fake')))

    def test_the_reported_name_without_either(self):
        self.assertEqual('node.example.org', self._name(
            _deployable('FakeDevice', driver='fake')))
