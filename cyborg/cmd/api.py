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
"""``cyborg-api``: serve the API over HTTP without a separate web server.

Each of ``[api] api_workers`` processes (managed by cotyledon) runs
cheroot's threaded WSGI server on ``[api] host_ip``:``port``; the kernel
spreads connections over them (SO_REUSEPORT). Production deployments may
instead run ``cyborg.wsgi.api:application`` under their web server.

The master process imports the application before it forks the workers,
which share those pages with it for as long as no process writes to them
(see :func:`cyborg.common.service.freeze`).

It refuses ``[DEFAULT] transport_url = fake://``: no conductor could
reach it. One process for one host is ``cyborg-all-in-one``
(:mod:`cyborg.cmd.all_in_one`).

With ``[api] enable_ssl_api`` it serves HTTPS with ``[ssl] cert_file``
and ``key_file``, as openstack-cyborg did.
"""

import gc
import os
import socket
import ssl

from cheroot.ssl import builtin as cheroot_ssl
from cheroot import wsgi
import cotyledon
from oslo_concurrency import processutils
from oslo_log import log

from cyborg.api import app
from cyborg.api import auth
from cyborg.common import rpc
from cyborg.common import service
import cyborg.conf
from cyborg import exception
from cyborg.i18n import _
from cyborg import startup

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)

# Threads per worker process: requests mostly wait on the database and
# the conductor, so more threads than cores pay off.
THREADS = 16
# Connections the kernel may hold for a worker before it accepts them
# (the listen backlog). cheroot's default is 5: a burst of new connections,
# such as Nova booting twenty servers at once, overflowed it and some were
# reset. Linux caps it at net.core.somaxconn.
BACKLOG = socket.SOMAXCONN


def tls_adapter(conf):
    """cheroot's TLS for ``[api] enable_ssl_api``, or None without it.

    As oslo.service's ``sslutils`` did for openstack-cyborg: the
    certificate and key of ``[ssl]``, and with ``[ssl] ca_file`` a client
    certificate signed by its CAs required of every client.

    :raises ServerTLSInvalid: a file is not set or cannot be loaded.
    """
    if not conf.api.enable_ssl_api:
        return None
    tls = conf.ssl
    for name in ('cert_file', 'key_file'):
        if not tls[name]:
            raise exception.ServerTLSInvalid(reason=_(
                '[api] enable_ssl_api is set but [ssl] %s is not.') % name)
    for name in ('cert_file', 'key_file', 'ca_file'):
        if tls[name] and not os.access(tls[name], os.R_OK):
            raise exception.ServerTLSInvalid(reason=_(
                '[ssl] %(name)s %(path)s cannot be read.') % {
                    'name': name, 'path': tls[name]})
    try:
        adapter = cheroot_ssl.BuiltinSSLAdapter(
            tls.cert_file, tls.key_file, tls.ca_file, tls.ciphers)
    except (OSError, ssl.SSLError) as e:
        raise exception.ServerTLSInvalid(reason=_(
            'the [ssl] files or ciphers cannot be loaded: %s') % e)
    if tls.ca_file:
        adapter.context.verify_mode = ssl.CERT_REQUIRED
    return adapter


def make_server(conf, application, shared=False):
    """A cheroot server for ``application`` on ``[api] host_ip:port``.

    It serves HTTPS with ``[api] enable_ssl_api`` (:func:`tls_adapter`).

    :param shared: other processes serve the same port (SO_REUSEPORT).
    """
    server = wsgi.Server((conf.api.host_ip, conf.api.port), application,
                         numthreads=THREADS, server_name='cyborg-api',
                         request_queue_size=BACKLOG, reuse_port=shared)
    server.ssl_adapter = tls_adapter(conf)
    return server


class APIWorker(cotyledon.Service):
    """One process serving the API."""

    name = 'cyborg-api'

    def __init__(self, worker_id, conf, workers):
        super().__init__(worker_id)
        self.conf = conf
        self.workers = workers
        self.server = None

    def run(self):
        # Connections and transports are made after the fork.
        startup.connect_api(self.conf)
        self.server = make_server(self.conf, app.setup_app(self.conf),
                                  shared=self.workers > 1)
        # What was made so far (modules, configuration, the application:
        # some 160,000 objects) lives as long as the process: out of the
        # collector's sight, a full collection, which stops every thread
        # of the worker, takes a few milliseconds instead of 60 to 200.
        gc.freeze()
        LOG.info('cyborg-api worker %(id)d serving %(scheme)s on '
                 '%(host)s:%(port)s',
                 {'id': self.worker_id, 'host': self.conf.api.host_ip,
                  'port': self.conf.api.port,
                  'scheme': 'https' if self.conf.api.enable_ssl_api
                  else 'http'})
        self.server.start()

    def terminate(self):
        if self.server is not None:
            self.server.stop()
        rpc.cleanup()


#: The exit status of a refusal to start (as oslo.config's for bad options).
REFUSED = 2


def main(argv=None):
    startup.prepare_server('cyborg-api', argv)
    refusal = auth.unsafe_noauth_address(CONF)
    if refusal:
        LOG.error('cyborg-api will not start: %s', refusal)
        return REFUSED
    if rpc.in_process(CONF):
        LOG.error('cyborg-api will not start: [DEFAULT] transport_url is '
                  'fake://, which no conductor can reach; run '
                  'cyborg-all-in-one (python -m cyborg.cmd.all_in_one) '
                  'for API, conductor and agent in one process')
        return REFUSED
    try:
        # Checked before the workers start, which would each fail.
        tls_adapter(CONF)
    except exception.ServerTLSInvalid as e:
        LOG.error('cyborg-api cannot start: %s', e)
        return 1
    workers = CONF.api.api_workers or processutils.get_worker_count()
    manager = cotyledon.ServiceManager()
    manager.add(APIWorker, workers=workers, args=(CONF, workers))
    service.freeze()
    manager.run()
