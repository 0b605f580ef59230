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
* the mechanism driver of
  :mod:`cyborg_quickstart.neutron_venv.neutron_binding`, which binds
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
(:meth:`cyborg_quickstart.keystone.Keystone.authtoken_options`) it checks every
token with it, and its service user finds Placement in the catalog;
Nova's service user (role ``service``) then sets ports'
``binding:profile``, as Neutron's policies want.

The quickstart runs it with ``--neutron-db URL``
(:meth:`Neutron.command`) in place of Nova's stand-in, and makes the
shared network its servers name with :func:`shared_network`, its subnet
on loopback (:func:`loopback_cidr`).

Run it on its own with ``python -m cyborg_quickstart.neutron --state-dir DIR
--port 9696 --db mysql+pymysql://... --rabbit rabbit://...`` (and
``--placement URL``, or ``--authtoken-file`` naming a JSON object of
``[keystone_authtoken]`` options).
"""

import os
import shutil
import sys

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session

from cyborg_quickstart import served

#: The Neutron release the demo runs, of the same OpenStack series as
#: :data:`cyborg_quickstart.nova.NOVA_VERSION`.
NEUTRON_VERSION = '29.0.0'
VENV = os.path.join('.venvs', 'neutron-' + NEUTRON_VERSION)
#: The name of the mechanism driver of
#: :mod:`cyborg_quickstart.neutron_venv.neutron_binding`.
MECHANISM_DRIVER = 'cyborg_any_host'
#: The physical network the demo's networks and NIC ports are on.
PHYSNET = 'physnet1'
_BINDING = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        'neutron_venv', 'neutron_binding.py')

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


def _sections(state, db, rabbit, auth, paste, physnets):
    """neutron.conf's sections but those of authentication: name: options."""
    return {
        'DEFAULT': [
            ('log_file', state + '/neutron-server.log'), ('debug', 'true'),
            ('state_path', state), ('core_plugin', 'ml2'),
            ('service_plugins', ''), ('auth_strategy', auth),
            ('api_paste_config', paste), ('transport_url', rabbit),
            # Nova's fake virt driver waits for no network-vif-plugged.
            ('notify_nova_on_port_status_changes', 'false'),
            ('notify_nova_on_port_data_changes', 'false')],
        'database': [('connection', db)],
        'ml2': [('type_drivers', 'flat,vlan'), ('tenant_network_types', ''),
                ('mechanism_drivers', MECHANISM_DRIVER),
                ('extension_drivers', 'port_device_profile')],
        'ml2_type_flat': [('flat_networks', physnets)],
        'ml2_type_vlan': [('network_vlan_ranges', physnets)],
        'oslo_concurrency': [('lock_path', state + '/locks')]}


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
        tokens with
        (:meth:`cyborg_quickstart.keystone.Keystone.authtoken_options`),
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
        sections = _sections(
            self.state, self.db, self.rabbit,
            'keystone' if self.authtoken else 'noauth',
            os.path.join(self.venv, 'etc', 'neutron', 'api-paste.ini'),
            ','.join(self.physnets))
        if self.authtoken:
            sections.update({
                'keystone_authtoken': sorted(self.authtoken.items()),
                'placement': [(key, self.authtoken[key])
                              for key in _PASSWORD_OPTIONS]})
        else:
            # The noauth pipeline's requests carry no role: Neutron's
            # deprecated rules let them act as the administrator they are,
            # and set a port's binding:profile as Nova does (the new rules
            # want the service role, which Nova's service user has).
            sections['oslo_policy'] = [('enforce_new_defaults', 'false')]
            if self.placement:
                sections['placement'] = [
                    ('auth_type', 'admin_token'),
                    ('endpoint', self.placement),
                    ('token', PLACEMENT_TOKEN)]
        text = ''
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
        self._require('neutron-db-manage')
        dist_info = os.path.join(self.python_path, _DIST_INFO)
        for path in (os.path.join(self.state, 'locks'), dist_info):
            os.makedirs(path, exist_ok=True)
        shutil.copy(_BINDING, self.python_path)
        for name, text in (('METADATA', _METADATA),
                           ('entry_points.txt', _ENTRY_POINTS)):
            with open(os.path.join(dist_info, name), 'w') as f:
                f.write(text)
        self._write_config(self._config())
        self._manage('neutron-db-manage', 'upgrade', 'heads',
                     env=self._env())

    def command(self, authtoken_file=None):
        """The command line that serves it on its own (:func:`main`).

        :param authtoken_file: a JSON file of :attr:`authtoken`, or None.
        """
        return [sys.executable, '-m', 'cyborg_quickstart.neutron',
                '--host', self.host, '--port', str(self.port),
                '--state-dir', self.state,
                '--venv', self.venv, '--db', self.db,
                '--rabbit', self.rabbit] + (
            ['--placement', self.placement] if self.placement else []) + (
            ['--authtoken-file', authtoken_file] if authtoken_file else [])

    def start(self, timeout=180):
        """Set up, serve, and wait until Neutron answers."""
        self.setup()
        self._serve(SERVE, self._env())
        # The version document answers without a token.
        self._wait(self.url, lambda status: status < 500, timeout)
        return self


def adapter(url, session=None):
    """A keystoneauth adapter for Neutron's API at ``url``.

    It sends the token of ``session`` (a keystoneauth session), or, for
    the ``noauth`` pipeline, any. Errors are answered, not raised.
    """
    if session is None:
        session = ks_session.Session(
            auth=ks_loading.get_plugin_loader('admin_token')
            .load_from_options(endpoint=url, token=PLACEMENT_TOKEN))
    return ks_adapter.Adapter(session, service_type='network',
                              endpoint_override=url + '/v2.0',
                              raise_exc=False)


def loopback_cidr(port):
    """An IPv4 subnet on loopback for the Neutron on ``port``.

    Servers' fixed addresses there are this host's, where their simulated
    guests listen (:mod:`cyborg_quickstart.nova_venv.nova_guest`); Neutrons on
    other ports, other stacks on the host, get other subnets. Neutron takes a
    loopback subnet without DHCP.
    """
    return '127.%d.%d.0/24' % divmod(port, 256)


def shared_network(network, name, cidr, physnet=PHYSNET):
    """The shared flat network ``name`` on ``physnet``, made if missing.

    A new one gets an IPv4 subnet ``cidr`` without DHCP.

    :param network: an administrator's :func:`adapter`.
    :returns: the network, as Neutron shows it.
    """
    def answered(response, status):
        if response.status_code != status:
            raise NeutronError('Neutron answered %d: %s' % (
                response.status_code, response.text))
        return response.json()
    found = answered(network.get('/networks', params={'name': name}), 200)
    if found['networks']:
        return found['networks'][0]
    made = answered(network.post('/networks', json={'network': {
        'name': name, 'shared': True, 'provider:network_type': 'flat',
        'provider:physical_network': physnet}}), 201)['network']
    answered(network.post('/subnets', json={'subnet': {
        'network_id': made['id'], 'name': name + '-subnet',
        'ip_version': 4, 'cidr': cidr, 'enable_dhcp': False}}), 201)
    return made


def main(argv=None):
    parser = served.parser('Serve the real Neutron: ML2, no agents.',
                           9696, VENV)
    parser.add_argument('--db', required=True,
                        help='its MySQL database, as an SQLAlchemy URL')
    parser.add_argument('--rabbit', required=True,
                        help='its RabbitMQ transport URL')
    parser.add_argument('--placement', metavar='URL',
                        help='Placement (noauth2), where Neutron looks for '
                             'the providers of the segments it deletes')
    served.run(parser, lambda args, authtoken: Neutron(
        args.state_dir, args.port, args.venv, args.db, args.rabbit,
        args.host, placement=args.placement, authtoken=authtoken), argv)


if __name__ == '__main__':
    main()
