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
"""Programming FPGAs with Glance bitstreams, through the agent RPC API.

Glance is the real one (the shared fixture), spoken to by the real
python-glanceclient; the vendor tools are stand-ins that record their
calls and the file they got.
"""

import json
import os
import socket
import stat

import fixtures
import testtools

from cyborg.agent import bitstream
from cyborg.agent import rpcapi
from cyborg.agent import service
from cyborg.clients import glance as glance_client
from cyborg.drivers import base as drivers_base
from cyborg import exception
from cyborg.tests import base
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests import openstack_fixtures
from cyborg.tests import stand_ins
from cyborg.tests import sysfs_tree

PAC = '0000:5e:00.0'
ALVEO = '0000:65:00.0'
IFID = '9926ab6d-6c92-5a68-aabc-a7d84c545738'
OTHER_IFID = '11111111-2222-3333-4444-555555555555'
LOGIC = '6f0a2c1e-8b7d-4a5c-9e3f-2d1c0b9a8f7e'
FUNCTION = 'd8424dc4-a4a3-c413-f89e-433683f9040b'
GENERIC = '0000:d8:00.0'


def _fpga_image(glance, data=b'green bitstream', **props):
    """A seed-002 bitstream image; a property given as None is left out."""
    properties = {'bs-name': 'aes-128', 'bs-uuid': FUNCTION,
                  'vendor': 'Intel', 'board': 'PAC_ARRIA10',
                  'shell_id': IFID, 'version': '1.0', 'driver': 'OPAE',
                  'driver_ver': '2.0', 'driver_path': '/opt/opae',
                  'topology': json.dumps({'pf': [{'pci_offset': 0, 'vf': [
                      {'pci_offset': 1}, {'pci_offset': 2}]}]}),
                  'region_uuid': IFID, 'function_uuid': FUNCTION,
                  'function_name': 'aes'}
    properties.update(props)
    return glance.add_image(data=data, **{
        key: value for key, value in properties.items() if value is not None})


class ProgramTestCase(base.TestCase):
    """A real agent of a simulated host, Glance, a stand-in conductor."""

    def setUp(self):
        super().setUp()
        self.tree = self.useFixture(sysfs_tree.SimulatedHost(self.conf, [
            ('intel_fpga', PAC, dict(vfs=2, interface_id=IFID)),
            ('xilinx_fpga', '0000:65:00.0', dict(
                logic_uuids=(LOGIC,), interface_uuids=(IFID,))),
            # The quickstart's generic PCI card, 31232 routing ids on.
            ('add_pci', GENERIC, dict(vendor='10ee', product='5021',
                                      class_code='120000')),
        ])).tree
        tmp = self.useFixture(fixtures.TempDir()).path
        self.downloads = os.path.join(tmp, 'downloads')
        os.mkdir(self.downloads)
        self.loaded = os.path.join(tmp, 'loaded')
        # Like OPAE's tool: load the file, and the port shows the new AFU.
        self.fpgaconf = self.useFixture(stand_ins.StandInTool(
            'fpgaconf',
            'import shutil\n'
            'shutil.copy(args[-1], %r)\n'
            'open(%r, "w").write(%r)\n' % (
                self.loaded, self.tree.afu_files[PAC],
                FUNCTION.replace('-', ''))))
        self.xbmgmt = self.useFixture(stand_ins.StandInTool('xbmgmt'))
        self.conf.config(fpgaconf_path=self.fpgaconf.path,
                         xbmgmt_path=self.xbmgmt.path, group='fpga')
        self.conf.config(download_dir=self.downloads, group='glance')
        self.conf.config(enable_hotplug_monitor=False, group='agent')
        missing = openstack_fixtures.Glance.missing()
        if missing:
            self.skipTest(missing)
        self.glance = self.useFixture(openstack_fixtures.Glance(self.conf))
        self.useFixture(cyborg_fixtures.RPC())
        self.conductor = self.useFixture(
            stand_ins.StandInConductor()).endpoint
        agent = service.AgentService(
            drivers_base.load(['intel_fpga_driver', 'xilinx_fpga_driver']),
            host='host1')
        agent.start()
        self.addCleanup(agent.stop)
        self.tracker = agent.tracker
        self.conductor.wait_for_reports(1)
        self.api = rpcapi.AgentAPI()

    def _program(self, name=PAC, **kwargs):
        return self.api.program(self.context, 'host1', name, **kwargs)

    def _deployable(self, report, name):
        return next(dep for dev in report.devices for dep in dev.deployables
                    if dep.name == name)


class TestProgram(ProgramTestCase):

    def test_by_bitstream_id(self):
        image = _fpga_image(self.glance)
        self.assertEqual(image['id'], self._program(bitstream_id=image['id']))
        (call,) = self.fpgaconf.calls
        self.assertEqual(['-S', '0x0000', '-B', '0x5e', '-D', '0x00', '-F',
                          '0x0'], call[:-1])
        self.assertEqual(self.downloads, os.path.dirname(call[-1]))
        with open(self.loaded, 'rb') as f:
            self.assertEqual(b'green bitstream', f.read())
        self.assertEqual([], os.listdir(self.downloads))
        # The fresh report went out before the call returned.
        fresh = self.conductor.reports[-1]
        self.assertEqual(2, len(self.conductor.reports))
        dep = self._deployable(fresh, PAC)
        self.assertEqual(image['id'], dep.bitstream_id)
        self.assertIn('CUSTOM_FPGA_FUNCTION_ID_' +
                      FUNCTION.replace('-', '').upper(),
                      {a.value for a in dep.attributes})
        self.assertEqual(2, dep.num_accelerators)

    def _tokens(self):
        """The tokens of every request sent to Glance from now on.

        Glance, unauthenticated, takes any token.
        """
        url = self.glance.url
        self.conf.config(send_service_user_token=True, group='service_user')
        openstack_fixtures.use_admin_token(self, 'service_user', url,
                                           'service-token')
        openstack_fixtures.use_admin_token(self, 'glance', url,
                                           'glance-service-token')
        sent = self.useFixture(openstack_fixtures.SentRequests())
        return lambda: {(headers.get('X-Auth-Token'),
                         headers.get('X-Service-Token'))
                        for _method, _url, headers in sent.to(url)}

    def test_glance_is_called_as_the_service_for_a_user(self):
        # Which images are found never depends on the user who asked.
        image = _fpga_image(self.glance)
        tokens = self._tokens()
        self.context.auth_token = 'user-token'
        self._program(bitstream_id=image['id'])
        self.assertEqual({('glance-service-token', None)}, tokens())

    def test_glance_is_called_as_the_service_without_a_user_token(self):
        image = _fpga_image(self.glance)
        tokens = self._tokens()
        self._program(bitstream_id=image['id'])
        self.assertEqual({('glance-service-token', None)}, tokens())

    def test_programmed_even_when_the_report_must_wait(self):
        # Another conductor is working on the host: the report waits for
        # the next pass, the programming stands.
        log = self.useFixture(fixtures.FakeLogger())
        self.useFixture(fixtures.MockPatchObject(
            self.conductor, 'report_host', side_effect=(
                exception.HostLeaseHeld(host='host1', owner='other'))))
        image = _fpga_image(self.glance)
        self.assertEqual(image['id'], self._program(bitstream_id=image['id']))
        self.assertEqual(1, len(self.fpgaconf.calls))
        self.assertIn('Report after programming %s postponed' % PAC,
                      log.output)

    def test_by_function_and_region_type(self):
        _fpga_image(self.glance, region_uuid=OTHER_IFID, shell_id=OTHER_IFID)
        _fpga_image(self.glance, function_uuid=OTHER_IFID,
                    function_name='gzip')
        wanted = _fpga_image(self.glance,
                             region_uuid=IFID.replace('-', '').upper())
        self.assertEqual(wanted['id'], self._program(function_id=FUNCTION))
        self.assertEqual(wanted['id'], self._program(function_name='aes'))
        self.assertEqual(2, len(self.fpgaconf.calls))

    def test_function_search_pages_through_glance(self):
        # More images than Glance lists in a page.
        for _ in range(openstack_fixtures.Glance.PAGE_LIMIT):
            _fpga_image(self.glance, function_uuid=OTHER_IFID)
        wanted = _fpga_image(self.glance)
        sent = self.useFixture(openstack_fixtures.SentRequests())
        self.assertEqual(wanted['id'], self._program(function_id=FUNCTION))
        self.assertEqual(2, len([
            url for method, url, _headers in sent.to(self.glance.url)
            if method == 'GET' and '/v2/images?' in url]))

    def test_several_matches_are_named(self):
        first = _fpga_image(self.glance)
        second = _fpga_image(self.glance)
        error = self.assertRaises(exception.BitstreamAmbiguous,
                                  self._program, function_name='aes')
        self.assertIn(first['id'], str(error))
        self.assertIn(second['id'], str(error))
        self.assertEqual([], self.fpgaconf.calls)

    def test_nothing_matches(self):
        _fpga_image(self.glance, region_uuid=OTHER_IFID)
        self.assertRaises(exception.BitstreamNotFound, self._program,
                          function_id=FUNCTION)
        self.assertRaises(exception.BitstreamNotFound, self._program,
                          bitstream_id='0d7e6a5f-4c3b-4b9e-8c3b-6f3e9d0c4c8f')
        self.assertRaises(exception.InvalidParameterValue, self._program)

    def test_refused_images(self):
        damaged = _fpga_image(self.glance)
        # Its data changed on Glance's disk since Glance hashed it.
        self.glance.replace_data(damaged['id'], b'brown bitstream')
        unhashed = _fpga_image(self.glance)
        self.glance.forget_hash(unhashed['id'])
        images = [(damaged, 'does not match its checksum'),
                  (unhashed, 'no checksum'),
                  (self.glance.add_record(), 'not active')]
        for props, reason in (
                ({'board': 'D5005'}, 'board D5005'),
                ({'vendor': 'Xilinx'}, 'vendor Xilinx'),
                ({'shell_id': OTHER_IFID}, 'needs shell'),
                ({'region_uuid': OTHER_IFID}, 'region type'),
                ({'topology': '{"pf": 1}'}, 'topology is invalid')):
            images.append((_fpga_image(self.glance, **props), reason))
        for image, reason in images:
            error = self.assertRaises(exception.BitstreamRejected,
                                      self._program,
                                      bitstream_id=image['id'])
            self.assertIn(reason, str(error))
        self.assertEqual([], self.fpgaconf.calls)
        self.assertEqual([], os.listdir(self.downloads))
        self.assertEqual(1, len(self.conductor.reports))

    def test_images_made_for_the_replaced_service(self):
        # It programmed any image named by id, and found images by their
        # accel:function_id; such images have no seed-002 metadata.
        log = self.useFixture(fixtures.FakeLogger())
        bare = self.glance.add_image(data=b'old bitstream', tags=[])
        self.assertEqual(bare['id'], self._program(bitstream_id=bare['id']))
        self.assertIn('Bitstream image %s lacks the bitstream metadata tag '
                      'FPGA, vendor, board, so nothing shows it fits %s; it '
                      'is loaded all the same' % (bare['id'], PAC),
                      log.output)
        with open(self.loaded, 'rb') as f:
            self.assertEqual(b'old bitstream', f.read())

        self.glance.add_image(tags=[], **{'accel:function_id': OTHER_IFID})
        tagged = self.glance.add_image(tags=[],
                                       **{'accel:function_id': FUNCTION})
        self.assertEqual(tagged['id'], self._program(function_id=FUNCTION))
        dep = self._deployable(self.conductor.reports[-1], PAC)
        self.assertEqual(tagged['id'], dep.bitstream_id)
        self.assertIn('CUSTOM_FPGA_FUNCTION_ID_' +
                      FUNCTION.replace('-', '').upper(),
                      {a.value for a in dep.attributes})
        self.assertEqual(2, len(self.fpgaconf.calls))

        # What it does say must still fit the card; a function name is
        # only found through seed-002 metadata.
        wrong = self.glance.add_image(tags=[], vendor='Xilinx')
        error = self.assertRaises(exception.BitstreamRejected, self._program,
                                  bitstream_id=wrong['id'])
        self.assertIn('vendor Xilinx', str(error))
        self.assertRaises(exception.BitstreamNotFound, self._program,
                          function_id=LOGIC)
        self.assertEqual(2, len(self.fpgaconf.calls))

    def test_topology_reaching_another_device_is_refused(self):
        # The quickstart attack: a VF at the generic PCI card's address.
        image = _fpga_image(self.glance, topology=json.dumps({'pf': [
            {'pci_offset': 0, 'vf': [{'pci_offset': 1},
                                     {'pci_offset': 31232}]}]}))
        error = self.assertRaises(exception.BitstreamRejected, self._program,
                                  bitstream_id=image['id'])
        self.assertIn("not the card's own: %s" % GENERIC, str(error))
        # Refused before the download: nothing loaded, nothing reported.
        self.assertEqual([], self.fpgaconf.calls)
        self.assertEqual([], os.listdir(self.downloads))
        self.assertEqual(1, len(self.conductor.reports))
        self.tracker.report(force=True)
        handles = [pci for dev in self.conductor.reports[-1].devices
                   for dep in dev.deployables
                   for pci in dep.attach_handles
                   if dict(pci.attach_info).get('bus') == 'd8']
        self.assertEqual([], handles)

    def test_a_bind_never_flashes_the_xilinx_shell(self):
        # An image without shell_id: the replaced service flashed it into
        # the shell, persistent across reboots and tenants.
        image = _fpga_image(self.glance, vendor='xilinx', board='u250',
                            shell_id=None, topology='')
        self._program(name=ALVEO, bitstream_id=image['id'])
        shell = _fpga_image(self.glance, vendor='xilinx', board='u250',
                            shell_id=None, topology='', shell_image='true')
        error = self.assertRaises(exception.BitstreamRejected, self._program,
                                  name=ALVEO, bitstream_id=shell['id'])
        self.assertIn('shell image', str(error))
        (call,) = self.xbmgmt.calls
        self.assertEqual('--user', call[3])
        self.assertNotIn('--shell', call)
        # An operator's shell update of a card with nothing allocated.
        self._program(name=ALVEO, bitstream_id=shell['id'], allow_shell=True)
        self.assertEqual('--shell', self.xbmgmt.calls[-1][3])

    def test_shell_images_and_unknown_regions(self):
        image = _fpga_image(self.glance, shell_id=None)
        self.assertRaises(exception.BitstreamRejected, self._program,
                          bitstream_id=image['id'])
        self.assertRaises(exception.NotProgrammable, self._program,
                          name='0000:5e:00.1', bitstream_id=image['id'])

    def test_tool_failure_cleans_up(self):
        self.fpgaconf.effect = 'sys.exit(1)'
        failing = self.useFixture(stand_ins.StandInTool(
            'fpgaconf', 'sys.stderr.write("no port\\n"); sys.exit(2)'))
        self.conf.config(fpgaconf_path=failing.path, group='fpga')
        image = _fpga_image(self.glance)
        error = self.assertRaises(exception.ProgrammingFailed, self._program,
                                  bitstream_id=image['id'])
        self.assertIn('no port', str(error))
        self.assertEqual([], os.listdir(self.downloads))

    def test_failed_programming_forgets_the_loaded_image(self):
        image = _fpga_image(self.glance)
        self._program(bitstream_id=image['id'])
        failing = self.useFixture(stand_ins.StandInTool(
            'fpgaconf', 'sys.exit(3)'))
        self.conf.config(fpgaconf_path=failing.path, group='fpga')
        self.assertRaises(exception.ProgrammingFailed, self._program,
                          bitstream_id=_fpga_image(self.glance)['id'])
        # Nobody knows what the region holds after a tool was run on it.
        self.tracker.report(force=True)
        dep = self._deployable(self.conductor.reports[-1], PAC)
        self.assertIsNone(dep.bitstream_id)

    def test_xilinx_with_the_function_from_the_image(self):
        image = _fpga_image(self.glance, vendor='xilinx', board='u250',
                            shell_id=LOGIC, topology='')
        self.assertEqual(image['id'], self._program(
            name=ALVEO, bitstream_id=image['id']))
        (call,) = self.xbmgmt.calls
        self.assertEqual(['program', '--device', '0000:65:00.0', '--user'],
                         call[:4])
        dep = self._deployable(self.conductor.reports[-1], ALVEO)
        self.assertIn('CUSTOM_FPGA_FUNCTION_ID_' +
                      FUNCTION.replace('-', '').upper(),
                      {a.value for a in dep.attributes})

    def test_glance_unreachable(self):
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            closed = 'http://127.0.0.1:%d' % s.getsockname()[1]
        self.conf.config(endpoint_override=closed, group='glance')
        self.assertRaises(exception.ServiceUnavailable, self._program,
                          bitstream_id='0d7e6a5f-4c3b-4b9e-8c3b-6f3e9d0c4c8f')


class TestTrustAndLimits(ProgramTestCase):
    """Whose images are loaded, how large, and where they are kept."""

    def test_untrusted_images_are_refused_or_ignored(self):
        planted = _fpga_image(self.glance, data=b'red bitstream',
                              owner='project-of-a-member')
        error = self.assertRaises(exception.BitstreamRejected, self._program,
                                  bitstream_id=planted['id'])
        self.assertIn('owner project-of-a-member is not a trusted image '
                      'owner (%s)' % self.glance.owner, str(error))
        self.assertRaises(exception.BitstreamNotFound, self._program,
                          function_id=FUNCTION)
        # Not counted against the operator's image either.
        wanted = _fpga_image(self.glance)
        self.assertEqual(wanted['id'], self._program(function_name='aes'))
        with open(self.loaded, 'rb') as f:
            self.assertEqual(b'green bitstream', f.read())
        # Nothing is trusted when no owner is named and [glance] has no
        # credentials to say whose project it is.
        self.conf.config(trusted_image_owners=[], group='fpga')
        error = self.assertRaises(exception.BitstreamRejected, self._program,
                                  bitstream_id=wanted['id'])
        self.assertIn('is not a trusted image owner (none)', str(error))
        self.assertEqual(1, len(self.fpgaconf.calls))

    def test_oversized_images_are_refused_before_the_download(self):
        self.conf.config(max_bitstream_size=1, group='fpga')
        image = _fpga_image(self.glance, data=b'x' * (1024 * 1024 + 1))
        sent = self.useFixture(openstack_fixtures.SentRequests())
        error = self.assertRaises(exception.BitstreamRejected, self._program,
                                  bitstream_id=image['id'])
        self.assertIn('more than [fpga] max_bitstream_size', str(error))
        self.assertEqual([], [url for _m, url, _h in sent.to(self.glance.url)
                              if url.endswith('/file')])
        self.assertEqual([], self.fpgaconf.calls)

    def test_a_download_past_the_limit_is_stopped(self):
        # Glance may not know an image's size: the bytes are counted.
        self.conf.config(max_bitstream_size=1, group='fpga')
        image = _fpga_image(self.glance, data=b'x' * (1024 * 1024 + 1))
        del image['size']
        pci_devices = self.tracker.scan()
        (region,) = [r for d in self.tracker.drivers
                     for n, r in d.fpga_regions(pci_devices).items()
                     if n == PAC]
        client = glance_client.get_client(self.conf.conf)
        with testtools.ExpectedException(exception.BitstreamRejected,
                                         '.*download was stopped'):
            with bitstream.download(client, image, region):
                self.fail('downloaded')
        self.assertEqual([], os.listdir(self.downloads))

    def test_the_download_directory_is_the_agents_own(self):
        fresh = os.path.join(self.downloads, 'fresh')
        self.conf.config(download_dir=fresh, group='glance')
        self.assertEqual(fresh, bitstream.download_dir())
        self.assertEqual(0o700, stat.S_IMODE(os.stat(fresh).st_mode))
        os.chmod(fresh, 0o755)
        bitstream.download_dir()
        self.assertEqual(0o700, stat.S_IMODE(os.stat(fresh).st_mode))
