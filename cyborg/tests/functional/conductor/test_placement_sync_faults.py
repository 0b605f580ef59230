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
"""Placement refusing a sync's writes, or gone, while a host is synced.

Generation conflicts (another writer changed the provider) are read
again and retried up to ``[conductor] placement_max_retries``; a
Placement that does not answer fails the pass, and the next one
converges once it is back.
"""

import socket
import threading

import fixtures

from cyborg.clients import placement
from cyborg.conductor import placement_sync
from cyborg.db import api as db_api
from cyborg import exception
from cyborg.tests.functional.conductor import placement_sync_case as case


class _Forwarder(fixtures.Fixture):
    """A loopback port that refuses connections until :meth:`open`.

    Then it relays every connection to ``target`` (host, port), so a
    client configured with :attr:`url` sees its service come back.
    """

    def __init__(self, target):
        super().__init__()
        self.target = target

    def _setUp(self):
        self._listener = socket.socket()
        self._listener.bind(('127.0.0.1', 0))
        self._sockets = [self._listener]
        self.addCleanup(self._close)
        self.url = 'http://127.0.0.1:%d' % self._listener.getsockname()[1]

    def _close(self):
        for sock in self._sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def open(self):
        self._listener.listen()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _addr = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink),
                                 daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class _BumpingAdapter:
    """Relays to ``adapter``; changes the provider before a traits PUT.

    Before each of the first ``times`` PUTs of a provider's traits it adds
    or removes a trait through Placement directly, so the PUT carries a
    stale generation and Placement answers 409, as when Nova writes at the
    same moment. ``trait_puts`` counts the PUTs of provider traits.
    """

    def __init__(self, adapter, direct, times):
        self._adapter = adapter
        self._direct = direct
        self.times = times
        self.trait_puts = 0

    def request(self, url, method, **kwargs):
        if (method == 'PUT' and url.endswith('/traits') and
                url.startswith('/resource_providers/')):
            self.trait_puts += 1
            if self.times:
                self.times -= 1
                self._change(url)
        return self._adapter.request(url, method, **kwargs)

    def _change(self, url):
        current = self._direct.get(url).json()
        traits = set(current['traits']) ^ {'HW_CPU_X86_AVX2'}
        resp = self._direct.put(url, json={
            'resource_provider_generation':
                current['resource_provider_generation'],
            'traits': sorted(traits)})
        assert resp.status_code == 200, resp.text


class TestPlacementSyncFaults(case.PlacementSyncTestCase):

    def test_generation_conflict_read_again_and_retried(self):
        deployable = self._add_deployable('0000:5e:00.0')
        self._sync()
        rp_uuid = self._uuid('0000:5e:00.0')
        db_api.create(self.admin_context, 'attribute', {
            'deployable_id': deployable.id, 'key': 'trait9',
            'value': 'CUSTOM_FPGA_REGION_X'})
        bumping = _BumpingAdapter(self.client._adapter, self.direct, times=1)
        self.client._adapter = bumping
        self.assertEqual(1, self._sync()['updated'])
        # Placement refused the first PUT; the second one won, and kept
        # the trait added meanwhile.
        self.assertEqual(2, bumping.trait_puts)
        self.assertEqual(self._expected_traits('CUSTOM_FPGA_REGION_X',
                                               'HW_CPU_X86_AVX2'),
                         self._traits(rp_uuid))
        self._assert_unchanged_pass()

    def test_generation_conflicts_give_up_after_max_retries(self):
        self.conf.config(placement_max_retries=2, group='conductor')
        deployable = self._add_deployable('0000:5e:00.0')
        self._sync()
        db_api.create(self.admin_context, 'attribute', {
            'deployable_id': deployable.id, 'key': 'trait9',
            'value': 'CUSTOM_FPGA_REGION_X'})
        bumping = _BumpingAdapter(self.client._adapter, self.direct,
                                  times=100)
        self.client._adapter = bumping
        self.assertEqual(1, self._sync()['failed'])
        self.assertEqual(3, bumping.trait_puts)

        bumping.times = 0
        self.assertEqual(1, self._sync()['updated'])
        # Added by the last of the three changes meanwhile.
        self.assertEqual(self._expected_traits('CUSTOM_FPGA_REGION_X',
                                               'HW_CPU_X86_AVX2'),
                         self._traits(self._uuid('0000:5e:00.0')))

    def test_placement_down_then_back(self):
        self.conf.config(placement_max_retries=2, group='conductor')
        host, port = self.placement.url.rsplit(':', 1)
        forwarder = self.useFixture(_Forwarder(
            (host.split('//')[1], int(port))))
        self.conf.config(endpoint=forwarder.url, group='placement')
        client = placement.PlacementClient(retry_delay=0.01)
        self._add_deployable('0000:5e:00.0')
        self.assertRaises(exception.PlacementUnavailable,
                          placement_sync.sync_host, self.admin_context,
                          self.hostname, self.compute_rp, client)
        self.assertEqual({'GET': 3}, dict(client.requests))

        forwarder.open()
        summary = placement_sync.sync_host(
            self.admin_context, self.hostname, self.compute_rp, client)
        self.assertEqual(1, summary['created'])
        self.assertEqual(self._expected_traits(),
                         self._traits(self._uuid('0000:5e:00.0')))
