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
"""A host still running openstack-cyborg 17.0.0's agent, on fake://.

The test plays that agent's part: it calls ``report_data`` on the shared
conductor topic at version 1.0 with 17.0.0's ``Driver*`` objects, and
serves 17.0.0's agent methods on the host's server name, recording what
the conductor asks. The real Placement and Glance take part. A real
17.0.0 agent process is in
:mod:`cyborg.tests.functional.upgrade.test_cyborg17_agent`.
"""

import json
import logging
import time
import uuid

import fixtures
from keystoneauth1 import loading as ks_loading
import oslo_messaging as messaging

from cyborg.agent import rpcapi as agent_rpcapi
from cyborg.common import rpc
from cyborg.common import service
from cyborg.conductor import cyborg17_agents
from cyborg.conductor import rpcapi
from cyborg import exception
from cyborg.objects import accelerator_request as arq_obj
from cyborg.objects import base as objects_base
from cyborg.objects import cyborg17_report as wire
from cyborg.objects import deployable as deployable_obj
from cyborg.objects import device as device_obj
from cyborg.objects import host as host_obj
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import openstack_fixtures
from cyborg.tests import stand_ins

FPGA = '0000:5e:00.0'
GPU = '0000:d8:00.0'


def _slot(address, **extra):
    domain, bus, rest = address.split(':')
    device, function = rest.split('.')
    return json.dumps(dict(domain=domain, bus=bus, device=device,
                           function=function, **extra))


def _device(host, kind, address, driver, rc, traits, handles, **extra):
    """A DriverDevice as 17.0.0's drivers build it."""
    extra.setdefault('stub', False)
    return wire.DriverDevice(
        vendor='0x8086', model='m', type=kind, std_board_info='{}',
        vendor_board_info=None,
        controlpath_id=wire.DriverControlPathID(
            cpid_type='PCI', cpid_info=_slot(address)),
        deployable_list=[wire.DriverDeployable(
            name='%s_%s' % (host, address), num_accelerators=len(handles),
            driver_name=driver,
            attribute_list=[wire.DriverAttribute(key='rc', value=rc)] + [
                wire.DriverAttribute(key='trait0', value=t) for t in traits],
            attach_handle_list=handles)], **extra)


class Unauthorized(Exception):
    """What 17.0.0's agent raises when Glance refuses it."""


class Cyborg17Agent:
    """17.0.0's agent RPC endpoint: it records each call."""

    target = messaging.Target(version='1.0')

    def __init__(self):
        self.calls = []
        self.tokens = []
        self.glance_refuses = False

    def fpga_program(self, context, controlpath_id, bitstream_uuid,
                     driver_name):
        self.calls.append(('fpga_program', controlpath_id, bitstream_uuid,
                           driver_name))
        self.tokens.append(context.auth_token)
        if self.glance_refuses:
            # Without the request's token, which Cyborg never sends.
            raise Unauthorized('The request you have made requires '
                               'authentication. (HTTP 401)')
        return True

    def create_vgpu_mdev(self, context, pci_addr, asked_type, ah_uuid):
        self.calls.append(('create_vgpu_mdev', pci_addr, asked_type,
                           ah_uuid))

    def remove_vgpu_mdev(self, context, pci_addr, asked_type, ah_uuid):
        self.calls.append(('remove_vgpu_mdev', pci_addr, asked_type,
                           ah_uuid))
        # As its sysfs write raises where the device is gone already.
        raise FileNotFoundError(2, 'No such file or directory')


class ReplacedCyborg17Agent(Cyborg17Agent):
    """A 17.0.0 agent stopped for this release's while a call waited.

    This release's agent takes the host over; the call is never answered.
    """

    def __init__(self, context, host, compute_rp, wait):
        super().__init__()
        self.taken_over = lambda: host_obj.Host.set_compute_rp(
            context, host, compute_rp, host)
        self.wait = wait

    def create_vgpu_mdev(self, context, pci_addr, asked_type, ah_uuid):
        super().create_vgpu_mdev(context, pci_addr, asked_type, ah_uuid)
        self.taken_over()
        time.sleep(self.wait)


class TestCyborg17Agent(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        self.placement = self.useFixture(openstack_fixtures.Placement())
        self.nova = self.useFixture(openstack_fixtures.NovaEvents()).receiver
        self.ctx = self.admin_context
        self.host = self.placement.hostname
        self.rp = self.placement.adapter()
        response = self.rp.post('/resource_providers', json={
            'name': self.host, 'uuid': str(uuid.uuid4())})
        self.assertEqual(200, response.status_code, response.text)
        self.compute_rp = response.json()['uuid']
        self.client = rpc.get_client(
            messaging.Target(topic=rpcapi.TOPIC, version='1.0'),
            objects_base.CyborgObjectSerializer())
        self.agent = Cyborg17Agent()
        self.agent_server = service.RPCService(
            self.agent, agent_rpcapi.TOPIC,
            objects_base.CyborgObjectSerializer(), host=self.host)
        self.agent_server.start()
        self.addCleanup(self.agent_server.stop)

    def _report(self, devices):
        self.client.prepare().call(self.ctx, 'report_data',
                                   hostname=self.host,
                                   driver_device_list=devices)

    def _devices(self, **fpga_extra):
        fpga_handles = [wire.DriverAttachHandle(
            attach_type='PCI', attach_info=_slot(FPGA), in_use=False)]
        gpu_handles = [wire.DriverAttachHandle(
            attach_type='MDEV', in_use=False, attach_info=_slot(
                GPU, asked_type='nvidia-222', vgpu_mark='nvidia-222_0'))]
        return [
            _device(self.host, 'FPGA', FPGA, 'intel', 'FPGA',
                    ['CUSTOM_FPGA_INTEL', 'CUSTOM_FPGA_ARRIA10'],
                    fpga_handles, **fpga_extra),
            _device(self.host, 'GPU', GPU, 'nvidia_gpu_driver', 'VGPU',
                    ['CUSTOM_NVIDIA_1EB8_T4'], gpu_handles)]

    def _deployables(self):
        return {dep.name: dep for dev in device_obj.Device.list(
            self.ctx, filters={'hostname': self.host})
            for dep in deployable_obj.Deployable.list(
                self.ctx, filters={'device_id': dev.id})}

    def test_report_recorded_placed_and_marked(self):
        self._report(self._devices())
        deployables = self._deployables()
        # Named as this release's drivers (and the database conversion)
        # name them; the trait key given twice keeps both traits.
        self.assertEqual({FPGA, GPU}, set(deployables))
        self.assertEqual(
            self.host, host_obj.Host.get_by_hostname(
                self.ctx, self.host).cyborg17_server)
        children = self.rp.get('/resource_providers', params={
            'in_tree': self.compute_rp, 'required': 'OWNER_CYBORG'}).json()
        names = {p['name']: p['uuid']
                 for p in children['resource_providers']}
        self.assertEqual({'%s_%s' % (self.host, FPGA),
                          '%s_%s' % (self.host, GPU)}, set(names))
        traits = self.rp.get('/resource_providers/%s/traits' % names[
            '%s_%s' % (self.host, FPGA)]).json()['traits']
        self.assertTrue({'CUSTOM_FPGA_INTEL',
                         'CUSTOM_FPGA_ARRIA10'} <= set(traits), traits)
        self.assertIn('runs the agent of openstack-cyborg 17.0.0',
                      self.log.output)

    def test_no_server_name_of_another_host(self):
        # Deployable names decide whom the conductor calls: a host may
        # not name itself after another host's agent.
        other = self.host + '-other'
        host_obj.Host.set_compute_rp(self.ctx, other, str(uuid.uuid4()),
                                     other)
        self.assertEqual(self.host, cyborg17_agents._own_server(
            self.ctx, self.host, other))
        self.assertEqual('its-own-host', cyborg17_agents._own_server(
            self.ctx, self.host, 'its-own-host'))

    def test_refused_once_the_shared_topic_is_closed(self):
        self.conf.config(serve_agents_on_shared_topic=False,
                         group='conductor')
        self.assertRaises(exception.SharedTopicClosed, self._report,
                          self._devices())
        self.assertEqual({}, self._deployables())

    def test_invalid_report_is_refused_whole(self):
        devices = self._devices()
        devices[1].type = 'QUANTUM'
        error = self.assertRaises(exception.InvalidHostReport,
                                  self._report, devices)
        self.assertIn('QUANTUM', str(error))
        self.assertEqual({}, self._deployables())

    def test_stub_is_kept_as_recorded(self):
        # A stub never recorded is not added...
        self._report(self._devices(stub=True))
        self.assertEqual({GPU}, set(self._deployables()))
        self._report(self._devices())
        before = self._deployables()[FPGA]
        # ... nor is one recorded removed or changed, as 17.0.0 kept it.
        stub = self._devices(stub=True)[:1]
        stub[0].deployable_list = []
        self._report(stub)
        after = self._deployables()
        self.assertEqual({FPGA}, set(after))
        self.assertEqual((before.uuid, before.rp_uuid),
                         (after[FPGA].uuid, after[FPGA].rp_uuid))

    def test_unclean_device_is_unhealthy(self):
        self._report(self._devices(device_state='cleaning'))
        (device,) = [d for d in device_obj.Device.list(
            self.ctx, filters={'hostname': self.host}) if d.type == 'FPGA']
        self.assertEqual(states.DEVICE_UNHEALTHY, device.health)

    def _bind(self, group, rp_uuid):
        profile = db_utils.create_profile(
            self.ctx, name='dp-' + str(uuid.uuid4()), groups=[group])
        (arq,) = db_utils.create_arqs(self.ctx, profile)
        self.api.arq_apply_patch(self.ctx, {arq.uuid: {
            'hostname': self.host, 'device_rp_uuid': rp_uuid,
            'instance_uuid': str(uuid.uuid4())}})
        return arq_obj.AcceleratorRequest.get_by_uuid(self.ctx, arq.uuid)

    def test_binds_ask_with_17_methods(self):
        missing = openstack_fixtures.Glance.missing()
        if missing:
            self.skipTest(missing)
        glance = self.useFixture(openstack_fixtures.Glance(self.conf))
        image = glance.add_image()['id']
        shell = glance.add_image(shell_image='true')['id']
        foreign = glance.add_image(owner=str(uuid.uuid4()))['id']
        other = glance.add_image(name='other')['id']
        self._report(self._devices())
        deployables = self._deployables()
        # 17.0.0's agent would flash a shell image as a bind asks...
        refused = self._bind({'resources:FPGA': '1',
                              'accel:bitstream_id': shell},
                             deployables[FPGA].rp_uuid)
        self.assertEqual(states.BIND_FAILED, refused.state)
        self.assertIn('is a shell image', self.log.output)
        # Nor an image whose owner is not trusted.
        refused = self._bind({'resources:FPGA': '1',
                              'accel:bitstream_id': foreign},
                             deployables[FPGA].rp_uuid)
        self.assertEqual(states.BIND_FAILED, refused.state)
        self.assertIn('is not a trusted image owner', self.log.output)
        fpga = self._bind({'resources:FPGA': '1',
                           'accel:bitstream_id': image},
                          deployables[FPGA].rp_uuid)
        self.assertEqual(states.BOUND, fpga.state, self.log.output)
        vgpu = self._bind({'resources:VGPU': '1'}, deployables[GPU].rp_uuid)
        self.assertEqual(states.BOUND, vgpu.state, self.log.output)
        self.api.arq_delete(self.ctx, uuids=[vgpu.uuid])
        self.assertRaises(exception.NotFound, arq_obj.
                          AcceleratorRequest.get_by_uuid, self.ctx,
                          vgpu.uuid)
        cpid = {'cpid_type': 'PCI', 'cpid_info': json.loads(_slot(FPGA))}
        self.assertEqual([
            ('fpga_program', image, 'intel'),
            ('create_vgpu_mdev', GPU, 'nvidia-222', vgpu.attach_handle_uuid),
            ('remove_vgpu_mdev', GPU, 'nvidia-222', vgpu.attach_handle_uuid),
        ], [(c[0],) + c[2:] if c[0] == 'fpga_program' else c
            for c in self.agent.calls])
        self.assertEqual(cpid, {k: v for k, v in self.agent.calls[0][1].items()
                                if k != 'uuid'})
        # Where its Glance wants a token, it says what to do.
        self.agent.glance_refuses = True
        self.api.arq_delete(self.ctx, uuids=[fpga.uuid])
        failed = self._bind({'resources:FPGA': '1',
                             'accel:bitstream_id': other},
                            deployables[FPGA].rp_uuid)
        self.assertEqual(states.BIND_FAILED, failed.state)
        self.assertIn('HTTP 401', self.log.output)
        self.assertIn('upgrade cyborg-agent there to program its FPGAs',
                      self.log.output)
        self.assertEqual([None, None], self.agent.tokens)
        # Unless the operator sends it a token of Cyborg's Glance user.
        self.conf.config(cyborg17_agents_glance_token=True,
                         group='conductor')
        self.conf.register_opts(ks_loading.get_auth_plugin_conf_options(
            'admin_token'), group='glance')
        self.conf.config(auth_type='admin_token', token='glance-service',
                         group='glance')
        self.agent.glance_refuses = False
        self.api.arq_delete(self.ctx, uuids=[failed.uuid])
        fpga = self._bind({'resources:FPGA': '1',
                           'accel:bitstream_id': other},
                          deployables[FPGA].rp_uuid)
        self.assertEqual(states.BOUND, fpga.state, self.log.output)
        self.assertEqual([None, None, 'glance-service'], self.agent.tokens)

    def test_a_bind_goes_to_the_agent_that_took_the_host_over(self):
        # The host's agent is upgraded while a bind's call to make a vGPU
        # waits in the queue of its 17.0.0 agent, which served as the FQDN.
        self.conf.config(rpc_response_timeout=1)
        self.agent_server.stop()
        fqdn = self.host + '.example.org'
        legacy = ReplacedCyborg17Agent(self.ctx, self.host, self.compute_rp,
                                       wait=2)
        server = service.RPCService(
            legacy, agent_rpcapi.TOPIC,
            objects_base.CyborgObjectSerializer(), host=fqdn)
        server.start()
        self.addCleanup(server.stop)
        ours = self.useFixture(stand_ins.StandInAgent(self.host)).endpoint
        self._report([_device(
            fqdn, 'GPU', GPU, 'nvidia_gpu_driver', 'VGPU',
            ['CUSTOM_NVIDIA_1EB8_T4'], [wire.DriverAttachHandle(
                attach_type='MDEV', in_use=False, attach_info=_slot(
                    GPU, asked_type='nvidia-222',
                    vgpu_mark='nvidia-222_0'))])])
        self.assertEqual(fqdn, host_obj.Host.get_by_hostname(
            self.ctx, self.host).cyborg17_server)
        mdev = str(uuid.uuid4())
        cyborg17_agents.HostAgents().create_mdev(self.ctx, self.host, mdev,
                                                 'nvidia-222', GPU)
        self.assertEqual([('create_vgpu_mdev', GPU, 'nvidia-222', mdev)],
                         legacy.calls)
        self.assertEqual([('create_mdev', self.host, {
            'mdev_uuid': mdev, 'mdev_type': 'nvidia-222',
            'parent_address': GPU})], ours.calls)
        self.assertIn("this release's agent has taken %s over" % self.host,
                      self.log.output)
