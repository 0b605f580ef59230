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
"""Servers with accelerators booted through the real Nova.

In the cloud of :mod:`cyborg.tests.functional.nova.real_nova`: boots, server
actions, races for the last accelerator, binds failing or deleted while
Nova waits, the audit against Nova's servers, and a card quarantined.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from cyborg.tests import functional
from cyborg.tests.functional.nova import real_nova
from cyborg.tests import sysfs
from cyborg_quickstart import quickstart_host

FPGA = {'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required'}
VGPU = {'resources:VGPU': '1', 'trait:CUSTOM_GPU_NVIDIA': 'required'}
#: The simulated host's QAT card has two VFs: a Placement provider with
#: one CUSTOM_QAT each (``[agent] group_virtual_functions`` off).
QAT = {'resources:CUSTOM_QAT': '1', 'trait:CUSTOM_QAT': 'required'}
#: The simulated host's QAT card (:data:`quickstart_host.HOST_DEVICES`).
QAT_CARD = quickstart_host.HOST_DEVICES[3][1]
#: What the stand-in ``fpgaconf`` of the slow binds says when it fails.
REFUSED = 'the card refused the bitstream'
#: A stand-in for ``fpgaconf`` that takes as long as the test wants: it
#: says it started, waits for its gate file (two minutes at most, so it
#: never outlives a failed test for long) and fails.
_SLOW_FPGACONF = '''#!{python}
import os, sys, time
open({gate!r} + ".started", "w").close()
deadline = time.monotonic() + 120
while not os.path.exists({gate!r}) and time.monotonic() < deadline:
    time.sleep(0.1)
sys.exit("fpgaconf (slow test stand-in): {refused}")
'''


# The class starts Nova once for its tests: one pytest-xdist worker runs
# them all (tools/run-tests.sh: --dist loadgroup).
@pytest.mark.long(minutes=6)
@pytest.mark.xdist_group('nova')
class TestRealNova(real_nova.RealNovaTestCase):

    def _slow_binds(self):
        """Make FPGA programming wait until the returned gate opens.

        ``fpgaconf`` becomes :data:`_SLOW_FPGACONF` until the test ends;
        it runs for a group with ``accel:bitstream_id``. The gate is a
        file: :meth:`_wait_programming` waits for the tool to start,
        creating the file lets it fail.
        """
        tool = self.cloud.quickstart.path('bin', 'fpgaconf')
        gate = os.path.join(self.cloud.tmp, 'gate-' + uuid.uuid4().hex[:8])
        shutil.copy(tool, tool + '.orig')
        self.addCleanup(os.replace, tool + '.orig', tool)
        # A test that fails midway leaves no tool waiting.
        self.addCleanup(lambda: open(gate, 'a').close())
        with open(tool, 'w') as f:
            f.write(_SLOW_FPGACONF.format(python=sys.executable, gate=gate,
                                          refused=REFUSED))
        return gate

    def _bitstream_profile(self):
        image = self.cloud.quickstart.demo.bitstream()
        return self._profile([{'resources:FPGA': '1',
                               'trait:CUSTOM_FPGA_INTEL': 'required',
                               'accel:bitstream_id': image['id']}])

    def _boot_binding_slowly(self):
        """Boot a server whose bind programs an FPGA, slowly.

        :returns: the server, the gate that lets programming fail, its
            BindStarted ARQ once Nova waits for it, and the uuids of the
            handles its bind claimed.
        """
        gate = self._slow_binds()
        idle = self._handles_in_use()
        server = self._create_server(self._flavor(self._bitstream_profile()))
        arq = self._wait_programming(server, gate)
        claimed = self._handles_in_use() - idle
        self.assertEqual(1, len(claimed))
        return server, gate, arq, claimed

    def _wait_programming(self, server, gate):
        """Wait until the bind of ``server`` programs and Nova waits.

        Nova's compute has then asked Cyborg for the resolved ARQs, got
        none and waits for the ``accelerator-request-bound`` event.
        :returns: the BindStarted ARQ.
        """
        functional.wait('fpgaconf started', lambda: os.path.exists(
            gate + '.started'), real_nova.TIMEOUT)
        (arq,) = self._arqs(server)
        self.assertEqual('BindStarted', arq['state'])
        waiting = ('Preparing to wait for external event '
                   'accelerator-request-bound-%s' % arq['uuid'])
        functional.wait('nova-compute waiting for %s' % arq['uuid'],
                        lambda: waiting in self._log(
                            self.cloud.nova.path('logs', 'nova-compute.log')),
                        real_nova.TIMEOUT)
        return arq

    def test_boot_and_delete(self):
        profile = self._profile([FPGA])
        server = self._create_server(self._flavor(profile))
        self._wait_status(server, 'ACTIVE')
        arqs = self._assert_bound(server, [FPGA])
        (spawned,) = self._driver_calls(server, 'spawn')
        self.assertEqual(self._handles(arqs), self._handles(spawned))
        self.assertEqual('PCI', spawned[0]['attach_handle_type'])

        self._delete_server(server)
        functional.wait('the ARQs deleted', lambda: not self._arqs(server))
        self.assertEqual({}, self._allocations(server))

    def test_two_groups(self):
        profile = self._profile([FPGA, VGPU])
        server = self._create_server(self._flavor(profile))
        self._wait_status(server, 'ACTIVE')
        arqs = self._assert_bound(server, [FPGA, VGPU])
        (spawned,) = self._driver_calls(server, 'spawn')
        self.assertEqual(self._handles(arqs), self._handles(spawned))
        self.assertEqual(['MDEV', 'PCI'], sorted(
            a['attach_handle_type'] for a in spawned))
        self._delete_server(server)
        functional.wait('the ARQs deleted', lambda: not self._arqs(server))
        self.assertEqual({}, self._allocations(server))

    def test_stop_start_and_reboot_keep_the_handles(self):
        profile = self._profile([FPGA])
        server = self._create_server(self._flavor(profile))
        self._wait_status(server, 'ACTIVE')
        handles = self._handles(self._assert_bound(server, [FPGA]))

        self._action(server, 'os-stop')
        self._wait_status(server, 'SHUTOFF')
        self._action(server, 'os-start')
        self._wait_status(server, 'ACTIVE')
        (powered_on,) = self._driver_calls(server, 'power_on')
        self.assertEqual(handles, self._handles(powered_on))

        self._action(server, 'reboot', {'type': 'HARD'})
        self._wait_status(server, 'ACTIVE')
        rebooted = self._driver_calls(server, 'reboot')
        self.assertEqual([handles], [self._handles(r) for r in rebooted])
        self.assertEqual(handles, self._handles(
            self._assert_bound(server, [FPGA])))

    def test_two_servers_for_the_last_accelerator(self):
        # One server takes one of the two QAT VFs; two more ask for the
        # last one at once. Nova's scheduler claims in Placement one at a
        # time: the second finds no host and never reaches Cyborg.
        flavor = self._flavor(self._profile([QAT]))
        first = self._create_server(flavor)
        self._wait_status(first, 'ACTIVE')
        racers = [self._create_server(flavor) for _ in range(2)]
        servers = {s: self._wait_settled(s) for s in racers}
        statuses = sorted(found['status'] for found in servers.values())
        self.assertEqual(['ACTIVE', 'ERROR'], statuses)
        (won,) = [s for s in racers if servers[s]['status'] == 'ACTIVE']
        (lost,) = [s for s in racers if servers[s]['status'] == 'ERROR']
        self.assertIn('No valid host was found',
                      servers[lost]['fault']['message'])
        self._assert_released(lost)
        self._assert_bound(won, [QAT])
        self._assert_bound(first, [QAT])
        # A provider per VF, as openstack-cyborg 17.0.0 made them.
        vfs = {arq['device_rp_uuid'] for s in (first, won)
               for arq in self._arqs(s)}
        self.assertEqual(2, len(vfs))

        def used():
            return [self.placement.get('/resource_providers/%s/usages' % rp)
                    .json()['usages'] for rp in sorted(vfs)]
        self.assertEqual([{'CUSTOM_QAT': 1}] * 2, used())
        for server in (first, won, lost):
            self._delete_server(server)
        functional.wait('the ARQs deleted', lambda: not any(
            self._arqs(s) for s in (first, won)))
        self.assertEqual([{'CUSTOM_QAT': 0}] * 2, used())

    def test_bind_failing_while_nova_waits(self):
        server, gate, arq, claimed = self._boot_binding_slowly()
        open(gate, 'w').close()
        found = self._wait_status(server, 'ERROR')
        # Nova's fault names no reason: it deleted the failed ARQs
        # itself; Cyborg's conductor logged why.
        self.assertEqual('Build of instance %s aborted: Failure getting '
                         'accelerator requests.' % server,
                         found['fault']['message'])
        conductor = self._log(self.cloud.quickstart.path(
            'logs', 'conductor.log'))
        self.assertIn('Binding accelerator request %s failed' % arq['uuid'],
                      conductor)
        self.assertIn(REFUSED, conductor)
        self.assertEqual([], self._driver_calls(server, 'spawn'))
        self._assert_released(server, claimed)

    def test_rebuild_keeps_the_accelerators(self):
        server = self._create_server(self._flavor(self._profile([FPGA])))
        self._wait_status(server, 'ACTIVE')
        handles = self._handles(self._assert_bound(server, [FPGA]))
        self._action(server, 'rebuild', {'imageRef': self.cloud.image['id']})
        self._wait_status(server, 'ACTIVE')
        # The guest is made again on the same ARQs and handles.
        spawned = self._driver_calls(server, 'spawn')
        self.assertEqual([handles, handles],
                         [self._handles(s) for s in spawned])
        self.assertEqual(handles, self._handles(
            self._assert_bound(server, [FPGA])))
        self._delete_server(server)
        functional.wait('the ARQs deleted', lambda: not self._arqs(server))
        self._assert_released(server)

    def test_delete_while_binding(self):
        server, gate, arq, claimed = self._boot_binding_slowly()
        response = self.compute.delete('/servers/%s' % server)
        self.assertEqual(204, response.status_code, response.text)
        # nova-compute deletes a server only after its build, which waits
        # for the bind: the server and its ARQ stay until the bind ends.
        functional.wait('the delete queued', lambda: self._server(server)[
            'OS-EXT-STS:task_state'] == 'deleting')
        self.assertEqual(['BindStarted'],
                         [a['state'] for a in self._arqs(server)])
        open(gate, 'w').close()
        functional.wait('server %s gone' % server, lambda: self.compute.get(
            '/servers/%s' % server).status_code == 404, real_nova.TIMEOUT)
        functional.wait('the ARQs deleted', lambda: not self._arqs(server))
        self._assert_released(server, claimed)
        # One failed event, taken by Nova: no retries, no errors.
        lines = [line for line in self._log(self.cloud.quickstart.path(
            'logs', 'conductor.log')).splitlines() if arq['uuid'] in line]
        self.assertEqual([], [line for line in lines
                              if ' ERROR ' in line or 'did not take' in line])

    def test_shelve_offload_and_unshelve(self):
        server = self._create_server(self._flavor(self._profile([FPGA])))
        self._wait_status(server, 'ACTIVE')
        arqs = self._assert_bound(server, [FPGA])
        # [DEFAULT] shelved_offload_time is 0: shelving offloads at once,
        # and the offload deletes the ARQs.
        self._action(server, 'shelve')
        self._wait_status(server, 'SHELVED_OFFLOADED')
        self._assert_released(server,
                              [a['attach_handle_uuid'] for a in arqs])
        # Unshelving schedules again: Nova's conductor makes new ARQs and
        # has them bound, and the guest is spawned with them.
        self._action(server, 'unshelve')
        self._wait_status(server, 'ACTIVE')
        unshelved = self._assert_bound(server, [FPGA])
        self.assertFalse({a['uuid'] for a in arqs} &
                         {a['uuid'] for a in unshelved})
        spawned = self._driver_calls(server, 'spawn')
        self.assertEqual([self._handles(arqs), self._handles(unshelved)],
                         [self._handles(s) for s in spawned])
        self._delete_server(server)
        functional.wait('the ARQs deleted', lambda: not self._arqs(server))
        self._assert_released(server,
                              [a['attach_handle_uuid'] for a in unshelved])

    def _audit(self, *args):
        result = subprocess.run(
            [sys.executable, '-c', 'import sys; from cyborg.cmd import '
             'manage; sys.exit(manage.main())', '--config-file',
             self.cloud.quickstart.conf, 'audit', '--format', 'json',
             *args], capture_output=True, text=True)
        report = json.loads(result.stdout)
        self.assertTrue(report['sources']['nova']['checked'], report)
        return {f['object']: f for f in report['findings']}

    def test_audit_asks_nova_of_servers(self):
        """A live server's ARQ stands; one of a server Nova lacks is healed.

        ``cyborg.tests.functional.test_audit`` seeds every kind of finding
        against a stand-in for Nova's servers API; this asks the real one.
        """
        profile = self._profile([FPGA])
        server = self._create_server(self._flavor(profile))
        self._wait_status(server, 'ACTIVE')
        (arq,) = self._assert_bound(server, [FPGA])
        response = self.cyborg.post('/accelerator_requests',
                                    json={'device_profile_name': profile})
        self.assertEqual(201, response.status_code, response.text)
        orphan = response.json()['arqs'][0]['uuid']
        self.addCleanup(self.cyborg.delete, '/accelerator_requests',
                        params={'arqs': orphan})
        response = self.cyborg.patch('/accelerator_requests', json={
            orphan: [{'path': '/' + key, 'op': 'add', 'value': value}
                     for key, value in (
                         ('hostname', real_nova.NODENAME),
                         ('device_rp_uuid', arq['device_rp_uuid']),
                         ('instance_uuid', str(uuid.uuid4())))]})
        self.assertEqual(202, response.status_code, response.text)
        functional.wait('the bind ended', lambda: self.cyborg.get(
            '/accelerator_requests/%s' % orphan).json()['state'] in (
                'Bound', 'BindFailed'))

        found = self._audit()
        self.assertNotIn(arq['uuid'], found)
        self.assertEqual('orphaned_arq', found[orphan]['kind'])
        self.assertNotIn(server, json.dumps(found))
        self.assertTrue(self._audit('--heal')[orphan]['repaired'])
        self.assertEqual('Unbound', self.cyborg.get(
            '/accelerator_requests/%s' % orphan).json()['state'])
        self.assertNotIn(orphan, self._audit())
        self.assertEqual('Bound', self._arqs(server)[0]['state'])
        # The next test finds every handle it does not use free.
        self._delete_server(server)
        functional.wait('the ARQs deleted', lambda: not self._arqs(server))

    def _qat_deployables(self):
        """The QAT card's VFs as deployables, shown at 2.9 with health."""
        response = self.cyborg.get('/deployables', headers={
            'OpenStack-API-Version': 'accelerator 2.9'})
        self.assertEqual(200, response.status_code, response.text)
        # Named <host>_<PCI address>, as openstack-cyborg named them.
        return {d['rp_uuid']: d for d in response.json()['deployables']
                if d['name'].split('_')[-1].startswith(QAT_CARD[:-1])}

    def test_unhealthy_card_takes_no_new_server(self):
        """A card whose AER errors rise is quarantined, then released.

        One server holds one of the QAT card's two VFs. While the card is
        quarantined the other VF is reserved: Nova finds no host for a
        second server, and the first keeps its accelerator. Once the
        errors stop, the next report releases the card and a server lands.
        """
        host = sysfs.SysfsTree(self.cloud.quickstart.path('sysfs'))
        vfs = self._qat_deployables()
        self.assertEqual(2, len(vfs))
        # The agent's next pass reads the baseline, while the server boots.
        host.aer_errors(QAT_CARD)
        baseline_read = time.monotonic() + real_nova.REPORT_INTERVAL + 2
        flavor = self._flavor(self._profile([QAT]))
        running = self._create_server(flavor)
        self._wait_status(running, 'ACTIVE')
        (arq,) = self._assert_bound(running, [QAT])

        time.sleep(max(0, baseline_read - time.monotonic()))
        host.aer_errors(QAT_CARD, nonfatal=1)
        functional.wait('the QAT card quarantined', lambda: all(
            d['quarantined'] for d in self._qat_deployables().values()),
            real_nova.REPORT_INTERVAL * 5)
        self.assertEqual({'unhealthy'}, {
            d['health'] for d in self._qat_deployables().values()})

        def unreserved():
            return {i['total'] - i['reserved'] for i in (self.placement.get(
                '/resource_providers/%s/inventories/CUSTOM_QAT' % rp).json()
                for rp in vfs)}
        # Placement is synced once the quarantine is stored.
        functional.wait('the QAT VFs reserved', lambda: unreserved() == {0},
                        real_nova.REPORT_INTERVAL * 5)
        self.assertIn('%s (%s)' % (arq['uuid'], running), self._log(
            self.cloud.quickstart.path('logs', 'conductor.log')))
        refused = self._create_server(flavor)
        self.assertIn('No valid host was found', self._wait_status(
            refused, 'ERROR')['fault']['message'])
        self._assert_released(refused)
        self._assert_bound(running, [QAT])

        # No new error since: healthy on the next pass, released at once.
        functional.wait('the QAT card released', lambda: not any(
            d['quarantined'] for d in self._qat_deployables().values()),
            real_nova.REPORT_INTERVAL * 5)
        functional.wait('the QAT VFs unreserved',
                        lambda: unreserved() == {1},
                        real_nova.REPORT_INTERVAL * 5)
        landed = self._create_server(flavor)
        self._wait_status(landed, 'ACTIVE')
        self._assert_bound(landed, [QAT])
        for server in (running, landed, refused):
            self._delete_server(server)
        functional.wait('the ARQs deleted', lambda: not any(
            self._arqs(s) for s in (running, landed)))
