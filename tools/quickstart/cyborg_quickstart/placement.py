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
"""The real OpenStack Placement service on SQLite, for demos and tests.

Placement is the ``openstack-placement`` package itself, loaded with its
own ``deploy.loadapp`` and served on loopback by cheroot, with
``noauth2``: a request carrying the token ``admin`` is an admin. Cyborg
reaches it with keystoneauth's ``admin_token`` plugin (``endpoint`` set to
:attr:`PlacementServer.url`, ``token`` ``admin``). It checks Keystone
tokens instead when :func:`make_app` is given Keystone's
``[keystone_authtoken]`` options, or, run on its own, a configuration
file (``--config-file``) with ``[api] auth_strategy = keystone`` and a
``[keystone_authtoken]`` group.

Placement keeps one database engine per process, so one process serves
one Placement.

Run it on its own with ``python -m cyborg_quickstart.placement --port 8778
--db sqlite:////path/placement.sqlite [--config-file FILE] [--access-log
FILE]``; the access log has one line per request, its method and path, so
that benchmarks and load tests can count what Placement was asked. Serving it
needs the ``openstack-placement`` package (a requirement of this tool,
``tools/quickstart``); the client side, :func:`adapter`, only
keystoneauth.
"""

import argparse
import collections
import threading

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from oslo_config import cfg

from cyborg_quickstart import keystone as keystone_demo
from cyborg_quickstart import server

# noauth2's fixed admin token, for a Placement on loopback.
TOKEN = 'admin'  # nosec B105

INSTALL_HINT = ("the demo Placement needs the openstack-placement package: "
                "pip install -e tools/quickstart")

#: SQLite lets one writer in at a time and answers "database is locked"
#: to a transaction that would have to wait for another one's write lock,
#: so one thread serves all requests.
THREADS = 1


def make_app(db_url, keystone=None, config_file=None):
    """Placement's WSGI application on the database at ``db_url``.

    The schema is created or upgraded and the standard traits and resource
    classes are loaded, as ``placement-manage db sync`` would. It uses
    ``noauth2`` unless ``config_file``, Placement's configuration file,
    says otherwise (``[api] auth_strategy``), or ``keystone`` is given
    (``[keystone_authtoken]`` options, see
    :meth:`cyborg_quickstart.keystone.Keystone.authtoken_options`): then it
    checks Keystone's tokens. One process has one Placement database: a
    second application of the process serves the first one's.

    :raises ImportError: openstack-placement is not installed.
    """
    # Imported here so that clients of this module (the Nova simulator,
    # the quickstart's checks) run on a plain install of Cyborg.
    try:
        from placement import conf as placement_conf
        from placement import db_api
        from placement import deploy
    except ImportError as e:
        raise ImportError('%s (%s)' % (INSTALL_HINT, e)) from e
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf.set_default('connection', db_url, group='placement_database')
    conf.set_default('auth_strategy', 'noauth2', group='api')
    conf([], project='placement',
         default_config_files=[config_file] if config_file else [],
         default_config_dirs=[])
    conf.set_override('sync_on_startup', True, group='placement_database')
    # Placement's option groups, and so their overrides, are shared by
    # every application of the process: each says its own strategy.
    if keystone:
        conf.set_override('auth_strategy', 'keystone', group='api')
        keystone_demo.authtoken_options(conf, keystone)
    elif config_file is None:
        conf.set_override('auth_strategy', 'noauth2', group='api')
    db_api.configure(conf)
    return deploy.loadapp(conf)


def adapter(url, microversion, session=None):
    """A keystoneauth adapter that calls the Placement at ``url`` directly.

    It sends noauth2's admin token unless ``session`` brings the token to
    send. Errors are answered, not raised, so callers can check status
    codes.
    """
    if session is None:
        auth = ks_loading.get_plugin_loader(
            'admin_token').load_from_options(endpoint=url, token=TOKEN)
        session = ks_session.Session(auth=auth)
    return ks_adapter.Adapter(session, service_type='placement',
                              endpoint_override=url,
                              default_microversion=microversion,
                              raise_exc=False)


#: The methods that change something in Placement.
WRITES = frozenset(('POST', 'PUT', 'PATCH', 'DELETE'))


class RequestCounter:
    """WSGI middleware that counts requests by method.

    :param log: a text file to write ``<method> <path>`` to, one line per
        request, or None.
    """

    def __init__(self, app, log=None):
        self.app = app
        self.counts = collections.Counter()
        self._log = log
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        method = environ['REQUEST_METHOD']
        with self._lock:
            self.counts[method] += 1
            if self._log is not None:
                self._log.write('%s %s\n' % (method, environ['PATH_INFO']))
                self._log.flush()
        return self.app(environ, start_response)

    def snapshot(self):
        """The counts so far, as a plain dict."""
        with self._lock:
            return dict(self.counts)


def writes(counts):
    """How many of ``counts`` ({method: count}) changed something."""
    return sum(n for method, n in counts.items() if method in WRITES)


class PlacementServer(server.LoopbackServer):
    """Placement served on ``host``:``port`` (0 picks a free port).

    :attr:`requests` counts the requests it served by method; they are
    also written to ``access_log`` (a text file) when one is given.
    """

    def __init__(self, db_url, host='127.0.0.1', port=0, threads=THREADS,
                 config_file=None, access_log=None):
        self.requests = RequestCounter(
            make_app(db_url, config_file=config_file), access_log)
        super().__init__(self.requests, host, port, threads,
                         name='placement')


def main(argv=None):
    parser = argparse.ArgumentParser(
        description='Serve the real Placement API on SQLite.')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=8778)
    parser.add_argument('--db', required=True,
                        help='SQLAlchemy URL of the Placement database')
    parser.add_argument('--config-file',
                        help='Placement configuration file, such as one '
                             'with [api] auth_strategy = keystone and '
                             '[keystone_authtoken] (default: noauth2)')
    parser.add_argument('--access-log', type=argparse.FileType('a'),
                        help='file to write each request\'s method and '
                             'path to, one line per request')
    parser.add_argument('--threads', type=int, default=THREADS,
                        help='server threads (keep 1 on SQLite)')
    args = parser.parse_args(argv)
    try:
        server = PlacementServer(args.db, args.host, args.port,
                                 threads=args.threads,
                                 config_file=args.config_file,
                                 access_log=args.access_log)
    except ImportError as e:
        parser.exit(2, 'error: %s\n' % e)
    print('Placement serving on %s' % server.url, flush=True)
    server.serve_forever()


if __name__ == '__main__':
    main()
