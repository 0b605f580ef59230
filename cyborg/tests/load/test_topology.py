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
"""The bind load on the production topology, a server killed at each tier.

The control plane of three controllers as kolla-ansible deploys it
(:mod:`cyborg.tests.load.topology`): a three-node MariaDB Galera cluster
behind HAProxy (one active node, the others backups, each checked by its
clustercheck), a three-node RabbitMQ cluster with quorum queues
(``rabbit_quorum_queue``, ``rabbit_transient_quorum_queue``), two
``cyborg-api`` processes behind the same HAProxy and two conductors. 20
simulated hosts report (:mod:`cyborg.tests.load.cluster`) and the real
Placement holds their providers.

Parallel clients play Nova throughout (create an ARQ, claim a device in
Placement, bind, wait for the Nova event, release), each resting
:data:`REST_SECONDS` between two instances, while in turn, for
:data:`PHASE_SECONDS` each after its fault:

``conductor-killed``
    conductor 0 gets ``SIGKILL``.
``conductors-restarted``
    conductor 0 starts again; conductor 1 and API 1 restart (``SIGTERM``)
    writing to Galera node 2 directly, while the others write through
    HAProxy to node 0.
``two-galera-writers``
    the clients place their instances on two hosts only, so that both
    nodes write the same rows: conflicts, which Galera counts and logs
    and Cyborg retries. The phase goes on past :data:`PHASE_SECONDS`
    until Galera has counted one (at most :data:`CONFLICT_SECONDS`).
``galera-node-killed``
    node 0, HAProxy's active node, gets ``SIGKILL``: HAProxy moves to a
    backup.
``galera-node-rejoined``
    node 0 starts again and rejoins (IST); HAProxy moves back once its
    clustercheck says it is synced.
``api-killed``
    API 0 gets ``SIGKILL``; HAProxy takes it out.
``restarted-behind-haproxy``
    API 0 starts again; conductor 1 and API 1 restart behind HAProxy.
``rabbitmq-leader-killed``
    the RabbitMQ node leading the conductors' queue gets ``SIGKILL``; the
    queue elects another leader.
``rabbitmq-node-rejoined``
    the node starts again and rejoins its cluster.

What a killed process was doing fails (a request cut, a call unanswered)
and is counted: the client then does what Nova does, deletes the
instance's ARQs. At the end every bind the API accepted got its Nova
event, every ARQ is Bound exactly once or was released, no attach handle
was held by two ARQs, and Placement's usage equals what the database
holds bound. With ``-s`` the test prints each phase's figures: the
instances started in it, their binds, p50 and p99 of the bind (``PATCH``
to event), and the errors met while it lasted. During
``two-galera-writers`` Galera counts conflicts, and no request fails.
"""

import collections
import concurrent.futures
import itertools
import json
import os
import signal
import statistics
import sys
import threading
import time
import uuid

import fixtures
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures
import pytest
import requests
import testtools

from cyborg.conductor import rpcapi
from cyborg.db import api as db_api
from cyborg.db import migration
from cyborg.objects import device_profile
from cyborg import states
from cyborg.tests import base
from cyborg.tests import functional
from cyborg.tests.load import test_bind_load
from cyborg.tests.load import topology
from cyborg_quickstart import placement as placement_demo

PROFILE = test_bind_load.PROFILE

CLIENTS = 12
#: Each client's rest between two instances: about ten a second in all,
#: which every fault meets under way, not all the CPU the suite shares.
REST_SECONDS = 1
#: Seconds of load in each phase, after its fault.
PHASE_SECONDS = functional.tunable('TOPOLOGY_PHASE_SECONDS', 6)
#: How long the two writers may take to meet a conflict: on a loaded
#: machine the clients' binds are fewer and a few seconds may pass none.
CONFLICT_SECONDS = 60
#: Every KEEP-th instance keeps its ARQ bound; the others release it, in
#: turn as these endings say.
KEEP = 25
ENDINGS = ('unbind', 'unbind-delete', 'delete')
#: A released event may wait out a killed conductor's hold (see
#: cyborg.conductor.nova_events) before another conductor sends it.
EVENT_TIMEOUT = 180
#: Seconds to go on trying to release an instance's ARQs, as Nova would.
RELEASE_TIMEOUT = 120


class _Phase:
    """What the clients saw while one fault lasted."""

    def __init__(self, name):
        self.name = name
        self.latencies = []
        self.errors = collections.Counter()
        self.failed_binds = []
        self.instances = 0

    def figures(self):
        latencies = sorted(self.latencies)
        return {
            'phase': self.name, 'instances': self.instances,
            'bound': len(latencies), 'errors': dict(self.errors),
            'failed_binds': len(self.failed_binds),
            'bind_p50_ms': latencies and round(
                1000 * statistics.median(latencies)),
            'bind_p99_ms': latencies and round(1000 * latencies[
                max(0, int(0.99 * len(latencies)) - 1)]),
        }


@pytest.mark.long(minutes=5)
@testtools.skipIf(topology.missing(), topology.missing())
class TestTopology(test_bind_load._BindLoad, base.TestCase):

    HOSTS = 20
    MESSAGING = {'rabbit_quorum_queue': True,
                 'rabbit_transient_quorum_queue': True}
    # A read waits for what any node committed before it: a service
    # writing to one node and Nova's next read answered from another
    # (two writers; HAProxy's sessions on two nodes after a failover)
    # would otherwise not see the bind.
    DATABASE = {'mysql_wsrep_sync_wait': 1}
    # A call a killed or stopping conductor took is never answered: the
    # API says so sooner than after the default minute.
    API_DEFAULTS = {'rpc_response_timeout': 15}

    def _transport(self):
        self.rabbitmq = self.useFixture(topology.RabbitMQ(
            self.useFixture(fixtures.TempDir()).path,
            functional.free_ports(topology.RabbitMQ.PORTS)))
        self._use_transport(self.rabbitmq.url())

    def _use_database(self):
        root = self.useFixture(fixtures.TempDir()).path
        ports = functional.free_ports(topology.Galera.PORTS + 4)
        self.galera = self.useFixture(topology.Galera(
            root, ports[:topology.Galera.PORTS]))
        db_port, api_port, *self.api_ports = ports[topology.Galera.PORTS:]
        self.haproxy = self.useFixture(topology.HAProxy(
            root, db_port, self.galera, api_port, self.api_ports))
        self.front_url = 'http://127.0.0.1:%d/v2' % api_port
        functional.wait('HAProxy to reach Galera',
                        lambda: topology.database_created(db_port))
        facade = enginefacade.transaction_context()
        facade.configure(**db_api.facade_options(dict(
            self.DATABASE, connection=self.galera.url(db_port))))
        self.useFixture(test_fixtures.ReplaceEngineFacadeFixture(
            db_api.main_context_manager, facade))
        self.addCleanup(facade.dispose_pool)
        migration.upgrade('head')

    def _front(self):
        for index, port in enumerate(self.api_ports):
            self._api('api-%d' % index, port, workers=1)
        functional.wait('HAProxy to reach the APIs', lambda: functional.serves(
            self.front_url))
        return self.front_url

    # --- the faults --------------------------------------------------------

    def _restart(self, kind, index, name, db_url=None):
        """Stop ``kind`` (conductor, api) ``index`` and start it as ``name``.

        A name is a log file: each start of a service gets its own.
        """
        self._stop(kind, index)
        if kind == 'conductor':
            self._conductor(index, name, db_url=db_url)
        else:
            self._api(name, self.api_ports[index], workers=1, db_url=db_url)

    def _stop(self, kind, index, sig=signal.SIGTERM):
        prefix = '%s-%d' % (kind, index)
        for service in self.services:
            if (os.path.basename(service.log_path).startswith(prefix) and
                    service.proc.poll() is None):
                service.stop(sig)

    def _conductor_killed(self):
        self._stop('conductor', 0, signal.SIGKILL)

    def _restarted(self):
        """Conductor 0 starts again; conductor 1 and API 1 restart on node 2.

        They write to Galera node 2 directly, the others through HAProxy.
        """
        self._conductor(0, 'conductor-0-again')
        node2 = self.galera.url(self.galera.ports[2])
        self._restart('conductor', 1, 'conductor-1-node2', node2)
        self._restart('api', 1, 'api-1-node2', node2)

    def _two_galera_writers(self):
        # The scheduler places instances on two hosts only: both nodes
        # then claim the same few attach handles.
        self.claim_hosts = self.hosts[:2]
        self.conflicts_before = self.galera.conflicts()

    def _conflicted(self):
        """Whether the nodes counted a conflict since the two writers began."""
        self.conflicts = self.galera.conflicts() - self.conflicts_before
        return self.conflicts > 0

    def _galera_node_killed(self):
        self.claim_hosts = self.hosts
        self.galera.kill(0)

    def _galera_node_rejoined(self):
        self.galera.start(0)
        self.galera.wait_synced(0)

    def _api_killed(self):
        self._stop('api', 0, signal.SIGKILL)

    def _restarted_behind_haproxy(self):
        self._api('api-0-again', self.api_ports[0], workers=1)
        self._restart('conductor', 1, 'conductor-1-again')
        self._restart('api', 1, 'api-1-again')

    def _rabbitmq_leader_killed(self):
        self.rabbitmq_leader = self.rabbitmq.leader(rpcapi.TOPIC)
        self.rabbitmq.kill(self.rabbitmq_leader)

    def _rabbitmq_node_rejoined(self):
        self.rabbitmq.start(self.rabbitmq_leader)

    #: Each phase's fault, done as it starts.
    PHASES = (('conductor-killed', _conductor_killed),
              ('conductors-restarted', _restarted),
              ('two-galera-writers', _two_galera_writers),
              ('galera-node-killed', _galera_node_killed),
              ('galera-node-rejoined', _galera_node_rejoined),
              ('api-killed', _api_killed),
              ('restarted-behind-haproxy', _restarted_behind_haproxy),
              ('rabbitmq-leader-killed', _rabbitmq_leader_killed),
              ('rabbitmq-node-rejoined', _rabbitmq_node_rejoined),
              ('recovered', lambda self: None))
    #: A phase that lasts, after PHASE_SECONDS, until this holds.
    LASTS_UNTIL = {'two-galera-writers': _conflicted}

    # --- Nova, forgiving what a fault cuts ---------------------------------

    def _attempt(self, stage, http, method, path, *statuses, **kwargs):
        """One request of Nova's; its body, or None when it failed.

        It succeeds when answered with one of ``statuses``. A failure is
        counted in the phase under way (not in the phase its instance
        started in: a request cut by a fault counts with the fault), and
        kept in :attr:`last_error` of the thread.
        """
        try:
            response = http.request(method, self.api_url + path,
                                    timeout=90, **kwargs)
        except requests.RequestException as e:
            error = '%s: %s' % (stage, type(e).__name__)
        else:
            if response.status_code in statuses:
                return response.json() if response.content else {}
            error = '%s: %d %s' % (stage, response.status_code,
                                   response.text[:160])
        self.phase.errors[error] += 1
        http.last_error = error
        return None

    def _release(self, http, method, path, status, again=(), **kwargs):
        """Send a release until it succeeds, as Nova's delete does.

        Sent again, it also succeeds when answered with a status in
        ``again``: a try whose answer was lost did it.
        """
        deadline = time.monotonic() + RELEASE_TIMEOUT
        statuses = (status,)
        while self._attempt('release', http, method, path, *statuses,
                            **kwargs) is None:
            self.assertLess(time.monotonic(), deadline,
                            'could not release %s: %s' % (
                                kwargs, http.last_error))
            statuses = (status, *again)
            time.sleep(0.5)

    def _survivor(self, number, rp, http, results):
        phase = self.phase
        phase.instances += 1
        instance = str(uuid.uuid4())
        created = self._attempt('create', http, 'post',
                                '/accelerator_requests', 201,
                                json={'device_profile_name': PROFILE})
        if created is None:
            return
        (arq,) = created['arqs']
        host, rp_uuid = self._claim(rp, instance)
        started = time.monotonic()
        accepted = self._attempt('bind', http, 'patch',
                                 '/accelerator_requests', 202, json={
                                     arq['uuid']: [
                                         {'op': 'add', 'path': '/hostname',
                                          'value': host},
                                         {'op': 'add',
                                          'path': '/device_rp_uuid',
                                          'value': rp_uuid},
                                         {'op': 'add',
                                          'path': '/instance_uuid',
                                          'value': instance}]})
        handle = None
        if accepted is not None:
            events = self.nova.wait_for(instance, 1, EVENT_TIMEOUT)
            self.assertEqual(
                [('accelerator-request-bound', arq['uuid'])],
                [(e['name'], e['tag']) for e in events],
                self._logged(arq['uuid']))
            if events[0]['status'] == 'completed':
                phase.latencies.append(time.monotonic() - started)
                handle = self._bound(phase, http, instance, rp_uuid)
                results.take(handle, arq['uuid'])
            else:
                self.phase.failed_binds.append(self._logged(arq['uuid']))
        if handle is None:
            # A failed bind's requests are deleted by uuid, as Nova's
            # conductor deletes those of AcceleratorRequestBindingFailed.
            # A conductor that receives a bind after the API stopped
            # waiting refuses it (doc/source/admin/failure-behaviour.rst).
            self._release(http, 'delete', '/accelerator_requests', 204,
                          again=(404,), params={'arqs': arq['uuid']})
            response = rp.delete('/allocations/%s' % instance)
            self.assertEqual(204, response.status_code, response.text)
            return
        if number % KEEP == 0:
            results.ended('kept')
            return
        results.give_back(handle)
        ending = ENDINGS[number % len(ENDINGS)]
        if ending.startswith('unbind'):
            self._release(http, 'patch', '/accelerator_requests', 202,
                          json={arq['uuid']: [
                              {'op': 'remove', 'path': path} for path in (
                                  '/hostname', '/device_rp_uuid',
                                  '/instance_uuid')]})
        if ending == 'unbind':
            results.ended('unbound')
        elif ending == 'unbind-delete':
            self._release(http, 'delete', '/accelerator_requests',
                          204, again=(404,), params={'arqs': arq['uuid']})
        else:
            self._release(http, 'delete', '/accelerator_requests',
                          204, params={'instance': instance})
        response = rp.delete('/allocations/%s' % instance)
        self.assertEqual(204, response.status_code, response.text)

    def _bound(self, phase, http, instance, rp_uuid):
        """The attach handle of the instance's Bound ARQ."""
        while True:
            found = self._attempt('read', http, 'get',
                                  '/accelerator_requests', 200, params={
                                      'instance': instance,
                                      'bind_state': 'resolved'})
            if found is not None:
                break
            time.sleep(0.5)
        self.assertEqual(1, len(found['arqs']),
                         '%s: %s' % (phase.name, found))
        (bound,) = found['arqs']
        self.assertEqual((states.BOUND, rp_uuid),
                         (bound['state'], bound['device_rp_uuid']),
                         phase.name)
        return bound['attach_handle_uuid']

    # --- the test ----------------------------------------------------------

    def _lasted(self, done):
        """Wait until the phase's condition holds; False if a client failed."""
        until = self.LASTS_UNTIL.get(self.phase.name)
        deadline = time.monotonic() + CONFLICT_SECONDS
        while (until is not None and not until(self) and
               time.monotonic() < deadline):
            if done.wait(1):
                return False
        return True

    def test_bind_load_through_faults(self):
        self._report_hosts()
        rpcapi.ConductorAPI().device_profile_create(
            self.ctx, device_profile.DeviceProfile(
                self.ctx, name=PROFILE, groups=[test_bind_load.GROUP]))
        results = test_bind_load._Results()
        local = threading.local()
        numbers = itertools.count()
        done = threading.Event()
        self.phase = _Phase('steady')
        phases = [self.phase]
        self.conflicts = None

        def client():
            local.http = requests.Session()
            local.http.trust_env = False
            local.rp = placement_demo.adapter(self.placement, '1.39')
            local.rp.session.session.trust_env = False
            try:
                while not done.is_set():
                    self._survivor(next(numbers), local.rp, local.http,
                                   results)
                    done.wait(REST_SECONDS)
            finally:
                local.http.close()
                # One client's failure ends the load: the others stop.
                done.set()

        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            clients = [pool.submit(client) for _ in range(CLIENTS)]
            try:
                # Each phase lasts PHASE_SECONDS, unless a client failed.
                for name, fault in self.PHASES:
                    if done.wait(PHASE_SECONDS) or not self._lasted(done):
                        break
                    self.phase = _Phase(name)
                    phases.append(self.phase)
                    fault(self)
                done.wait(PHASE_SECONDS)
            finally:
                done.set()
                # Each client ends the instance it is playing.
                concurrent.futures.wait(clients)
                figures = [phase.figures() for phase in phases]
                logged = self.galera.logged_conflicts()
                print(json.dumps({
                    'hosts': self.HOSTS, 'clients': CLIENTS,
                    'certification_conflicts': self.conflicts,
                    'conflicts_logged': logged, 'phases': figures},
                    indent=1), file=sys.stderr)
            for future in clients:
                future.result()

        self.assertEqual([], results.doubles)
        arq_states, shared, bound, in_use = self._database()
        self.assertEqual([], shared)
        self.assertEqual(results.endings['kept'],
                         arq_states.pop(states.BOUND, 0))
        self.assertEqual(results.endings['unbound'],
                         arq_states.pop(states.UNBOUND, 0))
        # What is left: ARQs whose creation was cut after it was written.
        self.assertLessEqual(set(arq_states), {states.INITIAL},
                             arq_states)
        self._assert_placement_agrees(bound, in_use)
        # Two Galera nodes written at once conflict, and no bind fails.
        two_writers = phases[[p.name for p in phases].index(
            'two-galera-writers')]
        self.assertGreater(self.conflicts, 0)
        self.assertGreater(logged, 0)
        self.assertEqual(([], {}), (two_writers.failed_binds,
                                    dict(two_writers.errors)))
        # Every fault was met, and binds go on after the last.
        self.assertEqual(len(self.PHASES) + 1, len(phases))
        self.assertGreater(len(phases[-1].latencies), 0, figures)
