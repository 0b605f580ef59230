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
"""The Nova boot simulator against the real Placement and a live API."""

import os
import subprocess
import sys

import fixtures

from cyborg.clients import placement
from cyborg.cmd import api as api_cmd
from cyborg.conductor import placement_sync
import cyborg.conf
from cyborg.db import api as db_api
from cyborg.tests import base
from cyborg.tests import db_utils
from cyborg.tests import fixtures as cyborg_fixtures
from cyborg.tests.functional.api import test_clients
from cyborg.tests import openstack_fixtures
from cyborg_quickstart import nova_events
from cyborg_quickstart import nova_sim

CONF = cyborg.conf.CONF
FPGA = {'accel:device_profile': 'fpga-vf'}


class TestPieces(base.TestCase):

    def test_request_groups(self):
        query = nova_sim.placement_query([
            {'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required',
             'trait:CUSTOM_OLD': 'forbidden', 'accel:bitstream_id': 'x'},
            {'resources:VGPU': '2'}], in_tree='rp')
        self.assertEqual({
            'resources': 'DISK_GB:1,MEMORY_MB:512,VCPU:1',
            'group_policy': 'none', 'in_tree': 'rp',
            'resourcesdevice_profile_0': 'FPGA:1',
            'requireddevice_profile_0': 'CUSTOM_FPGA_INTEL,!CUSTOM_OLD',
            'resourcesdevice_profile_1': 'VGPU:2'}, query)

    def test_runs_without_openstack_placement(self):
        # Only serving Placement needs openstack-placement; None in
        # sys.modules makes its import fail as if it were absent.
        result = subprocess.run(
            [sys.executable, '-c',
             'import sys; sys.modules["placement"] = None; '
             'from cyborg_quickstart import nova_sim; '
             'nova_sim.main(["--help"])'],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('usage: cyborg-nova-sim', result.stdout)
        result = subprocess.run(
            [sys.executable, '-c',
             'import sys; sys.modules["placement"] = None; '
             'from cyborg_quickstart import placement; '
             'placement.main(["--db", "sqlite://"])'],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(2, result.returncode)
        self.assertIn('pip install -e tools/quickstart', result.stderr)

    def test_hostdevs(self):
        self.assertEqual(
            '<hostdev mode="subsystem" type="pci" managed="yes">\n'
            '  <source>\n'
            '    <address domain="0x0000" bus="0x5e" slot="0x00" '
            'function="0x1" />\n'
            '  </source>\n'
            '</hostdev>',
            nova_sim.hostdev({'attach_handle_type': 'PCI',
                              'pci_id': '0000:5e:00.1'}))
        # Nova attaches nothing for the fake driver's handles.
        self.assertIsNone(nova_sim.hostdev({'attach_handle_type': 'TEST_PCI',
                                            'pci_id': '0000:0c:0.1'}))
        mdev = nova_sim.hostdev({'attach_handle_type': 'MDEV',
                                 'mdev_uuid': 'b1c2', 'mdev_type': 'nv-1',
                                 'parent_pci_id': '0000:3b:00.0'})
        self.assertIn('type="mdev" model="vfio-pci" managed="no"', mdev)
        self.assertIn('<address uuid="b1c2" />', mdev)


class SimulatedHostTestCase(base.ConductorTestCase):
    """One host with an FPGA of two VFs in Cyborg's DB and in Placement.

    The API serves on loopback, the boot simulator is :attr:`sim` with
    the events receiver :attr:`events`, and the device profile ``fpga-vf``
    asks for one FPGA with ``CUSTOM_FPGA_INTEL``.
    """

    def wrap_api(self, app):
        """The WSGI application to serve in place of the API's ``app``."""
        return app

    def setUp(self):
        super().setUp()
        self.placement = self.useFixture(openstack_fixtures.Placement())
        self.host = self.placement.hostname
        app = self.wrap_api(self.useFixture(cyborg_fixtures.API()).app)
        self.conf.config(host_ip='127.0.0.1', port=0, group='api')
        server = self.useFixture(test_clients.Server(
            app, make=lambda a: api_cmd.make_server(CONF, a)))
        self.events = nova_events.EventReceiver().start()
        self.addCleanup(self.events.stop)
        self.cyborg = nova_sim.cyborg_adapter(server.url + '/v2')
        state = self.useFixture(fixtures.TempDir()).path
        self.sim = nova_sim.NovaSim(
            self.cyborg, self.placement.adapter(), self.events,
            os.path.join(state, 'instances.json'), timeout=2)
        self.compute = self.sim.register_host(self.host)
        self.assertEqual(self.compute, self.sim.register_host(self.host))
        # The FPGA reaches Placement as after its agent's first report.
        _, deployable, _ = db_utils.create_device_tree(
            self.admin_context, hostname=self.host, name='0000:5e:00.0',
            resource_class='FPGA', traits=['CUSTOM_FPGA_INTEL'])
        self.assertEqual(1, placement_sync.sync_host(
            self.admin_context, self.host, self.compute,
            placement.PlacementClient())['created'])
        self.rp = db_api.get(self.admin_context, 'deployable',
                             deployable.uuid).rp_uuid
        self.assertEqual(201, self.cyborg.post('/device_profiles', json=[{
            'name': 'fpga-vf', 'groups': [{
                'resources:FPGA': '1',
                'trait:CUSTOM_FPGA_INTEL': 'required'}]}]).status_code)

    def _nova_events_here(self):
        """Point the conductor's ``[nova]`` group at the receiver."""
        openstack_fixtures.use_admin_token(self, 'nova', self.events.url,
                                           'admin')

    def _arqs(self):
        return self.cyborg.get('/accelerator_requests').json()['arqs']


class TestNovaSim(SimulatedHostTestCase):

    def _allocations(self, instance):
        return self.placement.adapter().get(
            '/allocations/%s' % instance).json()['allocations']

    def test_boot_and_delete(self):
        self._nova_events_here()
        vm = self.sim.boot('vm1', FPGA, host=self.host,
                           progress=lambda line: None)
        self.assertEqual(self.host, vm['host'])
        (handle,) = vm['attach_handles']
        self.assertEqual('PCI', handle['attach_handle_type'])
        self.assertIn(handle['pci_id'], ('0000:5e:00.1', '0000:5e:00.2'))
        self.assertIn('type="pci"', vm['hostdevs'][0])
        self.assertEqual({self.rp: {'FPGA': 1}}, {
            rp: a['resources'] for rp, a in
            self._allocations(vm['uuid']).items() if rp == self.rp})
        self.assertEqual(['vm1'], list(self.sim.instances()))
        self.assertEqual(1, self.sim.delete('vm1'))
        self.assertEqual({}, self._allocations(vm['uuid']))
        self.assertEqual([], self._arqs())
        self.assertEqual({}, self.sim.instances())

    def test_missing_events_fail_the_boot_cleanly(self):
        # [nova] is not configured, so no event reaches the receiver.
        error = self.assertRaises(nova_sim.BootFailed, self.sim.boot,
                                  'vm1', FPGA, host=self.host,
                                  progress=lambda line: None)
        self.assertIn('0 accelerator-request-bound event(s) of 1', str(error))
        self.assertEqual([], self._arqs())
        self.assertEqual({}, self.sim.instances())
        self.assertEqual({}, self.placement.adapter().get(
            '/resource_providers/%s/allocations' % self.rp).json()[
                'allocations'])

    def test_no_valid_host(self):
        self.cyborg.post('/device_profiles', json=[{
            'name': 'three', 'groups': [{'resources:FPGA': '3'}]}])
        error = self.assertRaises(
            nova_sim.BootFailed, self.sim.boot, 'vm1',
            {'accel:device_profile': 'three'}, host=self.host,
            progress=lambda line: None)
        self.assertIn('No valid host', str(error))
        self.assertIn('resourcesdevice_profile_0=FPGA:3', str(error))
        self.assertEqual([], self._arqs())

    def test_bad_requests(self):
        for specs, message in (({}, 'no accel:device_profile'),
                               ({'accel:device_profile': 'nope'},
                                'no device profile nope')):
            error = self.assertRaises(nova_sim.BootFailed, self.sim.boot,
                                      'vm1', specs)
            self.assertIn(message, str(error))
        self.assertRaises(nova_sim.BootFailed, self.sim.delete, 'vm9')
        self.assertRaises(nova_sim.BootFailed, self.sim.boot, 'vm1', FPGA,
                          host='no-such-host')

    def test_command_line(self):
        common = ['--state-dir', self.useFixture(fixtures.TempDir()).path,
                  '--cyborg', self.cyborg.endpoint_override,
                  '--placement', self.placement.url]
        other_host = self.host + '-cli'
        self.assertEqual(0, nova_sim.main(common + ['register-host',
                                                    other_host]))
        self.assertEqual([other_host], [
            rp['name'] for rp in self.placement.adapter().get(
                '/resource_providers', params={'name': other_host}).json()[
                    'resource_providers']])
        self.assertEqual(0, nova_sim.main(common + ['list']))
        self.assertEqual(1, nova_sim.main(common + ['delete', 'vm1']))
        self.assertRaises(SystemExit, nova_sim.main, ['boot'])
