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
"""The RPC service that the conductor and the agent run, and its launcher."""

import gc
import os
import signal
import threading

from oslo_log import log
import oslo_messaging as messaging
from oslo_service import backend
from oslo_service import opts as service_opts
from oslo_service import service

from cyborg.common import rpc
import cyborg.conf

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


class RPCService(service.Service):
    """Serves one manager on ``topic`` for ``host``.

    ``serializer`` turns the manager's arguments and results into messages
    (the versioned-object serializer).
    """

    def __init__(self, manager, topic, serializer, host=None):
        super().__init__()
        self.manager = manager
        self.topic = topic
        self.host = host or CONF.host
        self._serializer = serializer
        self._server = None

    def start(self):
        if backend.get_backend_type() != backend.BackendType.THREADING:
            raise RuntimeError('oslo.service must use its threading backend')
        super().start()
        if rpc.TRANSPORT is None:
            rpc.init(CONF)
        target = messaging.Target(topic=self.topic, server=self.host)
        self._server = rpc.get_server(target, [self.manager],
                                      self._serializer)
        self._server.start()
        LOG.info('%(topic)s serving on %(host)s',
                 {'topic': self.topic, 'host': self.host})

    def stop(self, graceful=True):
        if self._server is not None:
            self._server.stop()
            self._server.wait()
            self._server = None
        super().stop(graceful=graceful)


def freeze():
    """Keep the objects made so far out of the garbage collector's reach.

    Called by a master process before it forks its workers. A worker
    shares the pages of its master's objects until it writes to one, and
    a collection writes to every object it visits: without this, the
    workers' collections copy the master's heap into each of them (about
    45 MiB more for cyborg-api's two workers under load).
    """
    gc.freeze()


def run(server, conf):
    """Run ``server`` in this process until a signal stops it.

    For a service of one process. oslo.service would start it in a worker
    under a master process that only waits for it, and the master, a fork
    of the same program, holds a second copy of everything it imported
    (about 70 MiB resident). Signals, as oslo.service's master handles
    them: ``SIGTERM`` stops the service gracefully, bounded by ``[DEFAULT]
    graceful_shutdown_timeout``; ``SIGINT`` exits at once; ``SIGHUP``
    reads the configuration files again, applying the options that may
    change at run time.

    Call it before any thread starts: the threads inherit the blocked
    signals, which this thread takes with :func:`signal.sigwait`.

    :returns: the exit status, 0 after a graceful stop.
    """
    service_opts.register_service_opts(conf)
    signals = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    server.start()
    while True:
        signo = signal.sigwait(signals)
        if signo == signal.SIGINT:
            LOG.info('SIGINT: exiting at once')
            os._exit(1)
        if signo == signal.SIGTERM:
            break
        LOG.info('SIGHUP: reading the configuration files again')
        conf.mutate_config_files()
        server.reset()
    LOG.info('SIGTERM: stopping gracefully')
    if conf.graceful_shutdown_timeout:
        overdue = threading.Timer(conf.graceful_shutdown_timeout,
                                  _overdue_stop)
        overdue.daemon = True
        overdue.start()
    server.stop()
    return 0


def _overdue_stop():
    LOG.error('The graceful stop took too long: exiting at once')
    os._exit(1)
