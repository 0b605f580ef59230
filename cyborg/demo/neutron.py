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
"""The real OpenStack Neutron (ML2, no agents) for demos and tests.

Neutron is the ``neutron`` package itself, installed in a virtualenv of
its own (``tools/setup-client-venvs.sh`` makes
``.venvs/neutron-<NEUTRON_VERSION>``). :class:`Neutron` runs its API
(``neutron.wsgi.api``) as a child process from that virtualenv, served by
cheroot on loopback, with the ML2 plugin:

* flat and VLAN networks on the physical networks given, no tenant
  networks of its own, no L3, DHCP or L2 agents, no RPC server;
* the ``port_device_profile`` extension, so that a port names the Cyborg
  device profile of its VF (``vnic_type`` ``accelerator-direct``);
* the mechanism driver of :mod:`cyborg.demo.neutron_binding`, which binds
  every port on any host, as no switch exists here; it is loaded through
  an entry point of a small distribution that :meth:`Neutron.setup`
  writes into the state directory, on the server's ``PYTHONPATH``.

Its database is a MySQL (MariaDB) one, built by ``neutron-db-manage
upgrade heads``: Neutron's migrations do not run on SQLite (alembic: "No
support for ALTER of constraints in SQLite dialect"). It tells Nova
nothing (no ``network-vif-plugged`` events): Nova's fake virt driver
waits for none. It looks in Placement for a resource provider of each
segment it deletes (of routed networks; the demo's have none). The rest
lives under one state directory: ``neutron.conf``, ``neutron-server.log``,
``server.log``, the driver (``python/``) and stevedore's entry point
cache.

Without Keystone it runs Neutron's ``noauth`` pipeline, where every
request that names no project is an administrator's, and reaches
Placement with the demo's ``noauth2`` token. Given the
``[keystone_authtoken]`` options of a Keystone
(:meth:`cyborg.demo.keystone.Keystone.authtoken_options`) it checks every
token with it, and its service user finds Placement in the catalog;
Nova's service user (role ``service``) then sets ports'
``binding:profile``, as Neutron's policies want.

Run it on its own with ``python -m cyborg.demo.neutron --state-dir DIR
--port 9696 --db mysql+pymysql://... --rabbit rabbit://...`` (and
``--placement URL``, or ``--authtoken-file`` naming a JSON object of
``[keystone_authtoken]`` options).
"""

import argparse
import json
import os
import shutil
import signal
# Neutron runs from its own virtualenv, in processes of its own.
import subprocess  # nosec B404
import sys

from cyborg.demo import served

#: The Neutron release the demo runs, of the same OpenStack series as
#: :data:`cyborg.demo.nova.NOVA_VERSION`.
NEUTRON_VERSION = '29.0.0'
VENV = os.path.join('.venvs', 'neutron-' + NEUTRON_VERSION)
#: The name of the mechanism driver of :mod:`cyborg.demo.neutron_binding`.
MECHANISM_DRIVER = 'cyborg_any_host'
#: The physical network the demo's networks and NIC ports are on.
PHYSNET = 'physnet1'
_BINDING = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        'neutron_binding.py')

#: Serves Neutron's WSGI application with cheroot; run by the python of
#: Neutron's virtualenv as ``-c SERVE host port threads``. Neutron finds
#: its configuration through ``OS_NEUTRON_CONFIG_DIR`` and
#: ``OS_NEUTRON_CONFIG_FILES``, and parses ``sys.argv`` as it loads.
SERVE = """
import sys
host, port, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
del sys.argv[1:]
from cheroot import wsgi
from neutron.wsgi import api

wsgi.Server((host, port), api.application, numthreads=threads,
            server_name='neutron').safe_start()
"""

#: Enough threads for Nova's calls and a test's.
THREADS = 4

CONF_TEMPLATE = """[DEFAULT]
log_file = {state}/neutron-server.log
debug = true
state_path = {state}
core_plugin = ml2
service_plugins =
auth_strategy = {auth}
api_paste_config = {paste}
transport_url = {rabbit}
# Nova's fake virt driver waits for no network-vif-plugged event.
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false

[database]
connection = {db}

[ml2]
type_drivers = flat,vlan
tenant_network_types =
mechanism_drivers = {driver}
extension_drivers = port_device_profile

[ml2_type_flat]
flat_networks = {physnets}

[ml2_type_vlan]
network_vlan_ranges = {physnets}

[oslo_concurrency]
lock_path = {state}/locks
"""

#: The token Placement's ``noauth2`` takes as an administrator's.
PLACEMENT_TOKEN = 'admin'  # nosec B105
#: The ``[keystone_authtoken]`` options that also make a keystoneauth
#: password plugin: Neutron's service user, as it calls Placement.
_PASSWORD_OPTIONS = ('auth_type', 'auth_url', 'username', 'password',
                     'project_name', 'user_domain_name',
                     'project_domain_name', 'region_name')

#: The distribution that names the mechanism driver to Neutron's
#: stevedore, which finds drivers only through entry points.
_DIST_INFO = 'cyborg_neutron_binding-0.dist-info'
_METADATA = 'Metadata-Version: 2.1\nName: cyborg-neutron-binding\n' \
    'Version: 0\n'
_ENTRY_POINTS = '[neutron.ml2.mechanism_drivers]\n%s = %s:%s\n' % (
    MECHANISM_DRIVER, 'neutron_binding', 'AnyHostMechanismDriver')


class NeutronError(Exception):
    """Neutron could not be set up or did not start."""


class Neutron(served.Served):
    """Neutron from ``venv`` on ``host``:``port`` with state in ``state``.

    :param db: its database's SQLAlchemy URL (``mysql+pymysql://``); the
        database must exist.
    :param rabbit: its RabbitMQ transport URL (nothing listens to what
        it sends, with no agents).
    :param physnets: the physical networks of flat and VLAN networks.
    :param placement: Placement's URL (``noauth2``), or None; with
        Keystone, Neutron finds Placement in the catalog instead.
    :param authtoken: the ``[keystone_authtoken]`` options Neutron checks
        tokens with (:meth:`cyborg.demo.keystone.Keystone.authtoken_options`),
        and calls Placement with; None runs it unauthenticated.

    :meth:`start` sets it up and serves it; :meth:`stop` stops it.
    """

    label = 'Neutron'
    error = NeutronError

    def __init__(self, state, port, venv, db, rabbit, host='127.0.0.1',
                 physnets=(PHYSNET,), placement=None, authtoken=None,
                 threads=THREADS):
        super().__init__(state, port, venv, host, threads)
        self.db = db
        self.rabbit = rabbit
        self.physnets = physnets
        self.placement = placement
        self.authtoken = authtoken

    @property
    def conf_file(self):
        return os.path.join(self.state, 'neutron.conf')

    @property
    def python_path(self):
        """Where the mechanism driver and its entry point are."""
        return os.path.join(self.state, 'python')

    def _config(self):
        text = CONF_TEMPLATE.format(
            state=self.state, db=self.db, rabbit=self.rabbit,
            auth='keystone' if self.authtoken else 'noauth',
            paste=os.path.join(self.venv, 'etc', 'neutron', 'api-paste.ini'),
            driver=MECHANISM_DRIVER, physnets=','.join(self.physnets))
        if self.authtoken:
            sections = {
                'keystone_authtoken': sorted(self.authtoken.items()),
                'placement': [(key, self.authtoken[key])
                              for key in _PASSWORD_OPTIONS]}
        else:
            # The noauth pipeline's requests carry no role: Neutron's
            # deprecated rules let them act as the administrator they are,
            # and set a port's binding:profile as Nova does (the new rules
            # want the service role, which Nova's service user has).
            sections = {'oslo_policy': [('enforce_new_defaults', 'false')]}
            if self.placement:
                sections['placement'] = [
                    ('auth_type', 'admin_token'),
                    ('endpoint', self.placement),
                    ('token', PLACEMENT_TOKEN)]
        for section, options in sections.items():
            text += '\n[%s]\n' % section + ''.join(
                '%s = %s\n' % option for option in options)
        return text

    def _env(self):
        # stevedore caches the entry points of each sys.path it sees, this
        # state directory's included: under it, not in ~/.cache.
        return dict(os.environ, OS_NEUTRON_CONFIG_DIR=self.state,
                    OS_NEUTRON_CONFIG_FILES='neutron.conf',
                    PYTHONPATH=self.python_path,
                    XDG_CACHE_HOME=os.path.join(self.state, 'cache'))

    def setup(self):
        """Write neutron.conf and the driver; upgrade the schema.

        Both may be done again on the same state directory.
        """
        if not os.path.exists(self._bin('neutron-db-manage')):
            raise NeutronError(
                'Neutron is not installed in %s: run '
                'tools/setup-client-venvs.sh' % self.venv)
        dist_info = os.path.join(self.python_path, _DIST_INFO)
        for path in (os.path.join(self.state, 'locks'), dist_info):
            os.makedirs(path, exist_ok=True)
        shutil.copy(_BINDING, self.python_path)
        for name, text in (('METADATA', _METADATA),
                           ('entry_points.txt', _ENTRY_POINTS)):
            with open(os.path.join(dist_info, name), 'w') as f:
                f.write(text)
        with open(os.open(self.conf_file,
                          os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                  'w') as f:
            f.write(self._config())
        result = subprocess.run(  # nosec B603
            [self._bin('neutron-db-manage'), '--config-file',
             self.conf_file, 'upgrade', 'heads'],
            capture_output=True, text=True, timeout=600, env=self._env())
        if result.returncode:
            raise NeutronError('neutron-db-manage upgrade heads failed:\n%s'
                               % result.stderr[-4000:])

    def start(self, timeout=180):
        """Set up, serve, and wait until Neutron answers."""
        self.setup()
        self._serve(SERVE, self._env())
        # The version document answers without a token.
        self._wait(self.url, lambda status: status < 500, timeout)
        return self


def main(argv=None):
    parser = argparse.ArgumentParser(
        description='Serve the real Neutron: ML2, no agents.')
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=9696)
    parser.add_argument('--state-dir', required=True)
    parser.add_argument('--venv', default=VENV,
                        help='the virtualenv Neutron is installed in')
    parser.add_argument('--db', required=True,
                        help='its MySQL database, as an SQLAlchemy URL')
    parser.add_argument('--rabbit', required=True,
                        help='its RabbitMQ transport URL')
    parser.add_argument('--placement', metavar='URL',
                        help='Placement (noauth2), where Neutron looks for '
                             'the providers of the segments it deletes')
    parser.add_argument('--authtoken-file', metavar='JSON',
                        help='a JSON object of [keystone_authtoken] '
                             'options: check tokens with that Keystone')
    args = parser.parse_args(argv)
    authtoken = None
    if args.authtoken_file:
        with open(args.authtoken_file) as f:
            authtoken = json.load(f)
    neutron = Neutron(args.state_dir, args.port, args.venv, args.db,
                      args.rabbit, args.host, placement=args.placement,
                      authtoken=authtoken)
    # Neutron runs in a session of its own: stopped with this process,
    # whether interrupted or terminated.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        neutron.start()
        print('Neutron serving on %s' % neutron.url, flush=True)
        neutron.proc.wait()
    except NeutronError as e:
        parser.exit(2, 'error: %s\n' % e)
    except KeyboardInterrupt:
        pass
    finally:
        neutron.stop()


if __name__ == '__main__':
    main()
