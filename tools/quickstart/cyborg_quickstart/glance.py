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
"""The real OpenStack Glance (SQLite, file store) for demos and tests.

Glance is the ``glance`` package itself, installed in a virtualenv of its
own (``tools/setup-client-venvs.sh`` makes ``.venvs/glance``) because its
requirements differ from Cyborg's. :class:`Glance` runs its API as a
child process from that virtualenv, its WSGI application served by cheroot
on loopback (its ``glance-api`` console script no longer serves), with
everything under one state directory: ``glance-api.conf``, the SQLite
database (built by ``glance-manage db_sync``), the file store
(``images/``) and ``glance-api.log``. Image import tasks are turned off:
images are uploaded, as the demos and tests do.

Without Keystone it runs Glance's unauthenticated pipeline, where every
request acts as an administrator; given the ``[keystone_authtoken]``
options of a Keystone
(:meth:`cyborg_quickstart.keystone.Keystone.authtoken_options`) it runs the
``keystone`` pipeline and checks every token with it.
:func:`upload` adds an image with its properties through
python-glanceclient.

Run it on its own with ``python -m cyborg_quickstart.glance --state-dir DIR
--port 9292 --venv .venvs/glance``; ``--authtoken-file`` names a JSON
object of ``[keystone_authtoken]`` options, for the keystone pipeline.
"""

import io
import os

from glanceclient.v2 import client as glance_client

from cyborg_quickstart import served

#: Serves Glance's WSGI application with cheroot; run by the python of
#: Glance's virtualenv as ``-c SERVE host port threads``. Glance finds
#: its configuration through ``OS_GLANCE_CONFIG_DIR``; it reads request
#: bodies through a stream it may close without closing the connection.
SERVE = """
import sys
host, port, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
del sys.argv[1:]
from cheroot import wsgi
from glance.wsgi import api


class Body:
    # Glance closes a request's body once it has stored it, as uWSGI
    # allows; cheroot's is the connection's stream, which the next request
    # on that connection still reads.
    def __init__(self, stream):
        self.stream = stream

    def __getattr__(self, name):
        return getattr(self.stream, name)

    def close(self):
        pass


def application(environ, start_response):
    environ['wsgi.input'] = Body(environ['wsgi.input'])
    return api.application(environ, start_response)


wsgi.Server((host, port), application, numthreads=threads,
            server_name='glance').safe_start()
"""

#: Enough threads for a test run's clients: uploads and downloads of
#: small images, and metadata reads. A connection kept alive holds a
#: thread until it idles out, and one test process's Glance serves all of
#: its tests' clients.
THREADS = 16

CONF_TEMPLATE = """[DEFAULT]
log_file = {state}/glance-api.log
enabled_backends = local:file
# Images are uploaded; no import task runs here.
enabled_import_methods = []
{limits}
[database]
connection = sqlite:///{state}/glance.sqlite

[glance_store]
default_backend = local

[local]
filesystem_store_datadir = {state}/images

[os_glance_staging_store]
filesystem_store_datadir = {state}/staging

[os_glance_tasks_store]
filesystem_store_datadir = {state}/tasks

[paste_deploy]
config_file = {paste}
flavor = {flavor}

[oslo_concurrency]
lock_path = {state}/locks
"""


class GlanceError(Exception):
    """Glance could not be set up or did not start."""


class Glance(served.Served):
    """Glance from ``venv`` on ``host``:``port`` with state in ``state``.

    ``authtoken`` holds the ``[keystone_authtoken]`` options Glance checks
    tokens with; None runs it unauthenticated. ``page_limit``, when given,
    is the most images Glance lists in one page (its ``api_limit_max``).
    :meth:`start` sets it up and serves it; :meth:`stop` stops it.
    """

    label = 'Glance'
    error = GlanceError

    def __init__(self, state, port, venv, host='127.0.0.1', authtoken=None,
                 page_limit=None, threads=THREADS):
        super().__init__(state, port, venv, host, threads)
        self.authtoken = authtoken
        self.page_limit = page_limit

    @property
    def conf_file(self):
        return os.path.join(self.state, 'glance-api.conf')

    def _config(self):
        text = CONF_TEMPLATE.format(
            state=self.state,
            paste=os.path.join(self.venv, 'etc', 'glance',
                               'glance-api-paste.ini'),
            flavor='keystone' if self.authtoken else '',
            limits='api_limit_max = %d\nlimit_param_default = %d\n' % (
                self.page_limit, self.page_limit) if self.page_limit else '')
        if self.authtoken:
            return text + '\n[keystone_authtoken]\n' + ''.join(
                '%s = %s\n' % item for item in sorted(self.authtoken.items()))
        # The unauthenticated pipeline's requests carry no role; Glance's
        # deprecated rules let them act as the administrator they are.
        return text + '\n[oslo_policy]\nenforce_new_defaults = false\n'

    def setup(self):
        """Write glance-api.conf and sync the schema.

        Both may be done again on the same state directory.
        """
        self._require('glance-manage')
        for sub in ('images', 'staging', 'tasks', 'locks'):
            os.makedirs(os.path.join(self.state, sub), exist_ok=True)
        self._write_config(self._config())
        self._manage('glance-manage', 'db_sync')

    def start(self, timeout=120):
        """Set up, serve, and wait until Glance answers."""
        self.setup()
        self._serve(SERVE, dict(os.environ, OS_GLANCE_CONFIG_DIR=self.state))
        # The version document answers without a token.
        self._wait(self.url, lambda status: status < 500, timeout)
        return self

    def client(self, session=None):
        """A python-glanceclient for this Glance.

        With ``session`` (a keystoneauth session) it sends that session's
        tokens; without, none, as the unauthenticated pipeline allows.
        """
        if session is None:
            return glance_client.Client(self.url)
        return glance_client.Client(session=session,
                                    endpoint_override=self.url)


def upload(client, data, name, tags=(), **properties):
    """Create a ``raw``/``bare`` image with ``properties``, upload ``data``.

    ``client`` is a python-glanceclient v2 client; property values are
    strings, as Glance keeps them. Only an administrator may ask for
    ``visibility='public'``; in the unauthenticated pipeline every request
    sees every image.

    :returns: the active image as Glance shows it.
    """
    image = client.images.create(
        name=name, disk_format='raw', container_format='bare',
        tags=list(tags), **properties)
    client.images.upload(image['id'], io.BytesIO(data))
    return client.images.get(image['id'])


def main(argv=None):
    served.run(served.parser(
        'Serve the real Glance on SQLite with its file store.', 9292,
        '.venvs/glance'),
        lambda args, authtoken: Glance(args.state_dir, args.port, args.venv,
                                       args.host, authtoken), argv)


if __name__ == '__main__':
    main()
