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
"""The RPC service that the conductor and the agent run."""

from oslo_log import log
import oslo_messaging as messaging
from oslo_service import backend
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
