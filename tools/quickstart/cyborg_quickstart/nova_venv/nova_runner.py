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
"""The parts of a real Nova that its package does not run by itself.

This file runs in Nova's own virtualenv (by path: neither Cyborg nor its
quickstart is installed there), started by :mod:`cyborg_quickstart.nova`:

``api PORT``
    Nova's compute API (``nova.wsgi.osapi_compute``) served on loopback
    by the standard library's threaded WSGI server: Nova has no
    ``nova-api`` command any more.
``conductor``, ``scheduler``
    ``nova-conductor``, ``nova-scheduler``.
``compute``
    ``nova-compute`` with :class:`RecordingDriver`, Nova's fake virt
    driver that also writes what it was asked to do, accelerators
    included, to the JSON lines file ``$CYBORG_NOVA_RECORDS``. Its node is
    named ``$CYBORG_NOVA_NODENAME`` (the FQDN, say), not ``[DEFAULT] host``,
    and keeps its uuid when ``nova-compute`` restarts. A server with a
    fixed IPv4 address gets a simulated guest to log in to
    (:mod:`cyborg_quickstart.nova_venv.nova_guest`), which shows the PCI
    functions passed through with the ids of the host's sysfs at
    ``$CYBORG_NOVA_SYSFS`` (default ``/sys``); a snapshot uploads a few bytes
    for its disk.
``neutron PORT``
    A stand-in for Neutron (:func:`neutron`): no more than Nova and
    Tempest's scenario tests ask of it, with nothing plugged.

:func:`auth_filter_factory` is the paste filter that stands in for
Keystone's ``auth_token`` in front of the compute API when no Keystone
runs: every request is an admin's (and the ``service`` role's, which
external events need). Nova 34 has no ``noauth`` mode any more.

The Nova modules are imported inside functions: this file is also a module of
the quickstart, which does not have Nova installed. Every service here lets
SQLite writers wait for the lock (:func:`_wait_for_sqlite_locks`).
"""

import io
import json
import os
import socketserver
import sys
import threading
import urllib.parse
import uuid
from wsgiref import simple_server

_ROLES = 'admin,member,reader,service'
#: Who every request to the compute API is.
USER_ID = 'nova-test-user'
#: Shaped as Keystone's ids are: openstack-cyborg 17.0.0 refuses the
#: accelerator requests of a project whose id is not a uuid.
PROJECT_ID = '6e0c0e3d6c1e4a3f9f2b8e1d7a5c4b3a'


def auth_filter_factory(global_conf, **local_conf):
    """A paste filter: every request is an admin's, with its token kept.

    It also carries a service's token, as Nova's calls to other services
    do.
    """
    def make_filter(app):
        def authenticated(environ, start_response):
            environ.setdefault('HTTP_X_USER_ID', USER_ID)
            environ.setdefault('HTTP_X_PROJECT_ID', PROJECT_ID)
            environ['HTTP_X_ROLES'] = _ROLES
            environ['HTTP_X_IDENTITY_STATUS'] = 'Confirmed'
            environ.setdefault('HTTP_X_AUTH_TOKEN', 'admin')
            # As keystonemiddleware marks a request with a valid service
            # token: openstack-cyborg 17.0.0 binds ARQs only for services.
            environ.setdefault('HTTP_X_SERVICE_ROLES', 'service')
            return app(environ, start_response)
        return authenticated
    return make_filter


class _Server(socketserver.ThreadingMixIn, simple_server.WSGIServer):
    daemon_threads = True
    # socketserver's listen backlog is 5: a burst of connections (20
    # servers booted at once) overflowed it and was reset, which the WSGI
    # servers that run Nova's API in a cloud, with larger backlogs, do not.
    request_queue_size = 128


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format, *args):
        sys.stderr.write('%s\n' % (format % args))


def _wait_for_sqlite_locks():
    """Let SQLite writers wait for each other instead of failing.

    Nova's four services share the SQLite files; Python's sqlite3 gives up
    on a lock after five seconds, which a loaded test machine exceeds.
    Transactions also take the write lock as they begin (``BEGIN
    IMMEDIATE``): one that read first and then writes while another
    writes fails at once with "database is locked", without waiting.
    oslo.db begins transactions itself (``BEGIN``) unless one is marked
    begun in the connection's ``info``; listeners on the Engine class run
    before its own.
    """
    import sqlalchemy
    from sqlalchemy import engine

    def on_connect(connection, record):
        if type(connection).__module__.startswith('sqlite3'):
            connection.execute('PRAGMA busy_timeout = 60000')

    def on_begin(connection):
        if (connection.dialect.name == 'sqlite' and
                connection.connection.dbapi_connection.isolation_level
                is None and 'in_transaction' not in connection.info):
            connection.exec_driver_sql('BEGIN IMMEDIATE')
            connection.info['in_transaction'] = True

    sqlalchemy.event.listen(engine.Engine, 'connect', on_connect)
    sqlalchemy.event.listen(engine.Engine, 'begin', on_begin)


def _serve(app, port):
    server = simple_server.make_server('127.0.0.1', port, app,
                                       server_class=_Server,
                                       handler_class=_QuietHandler)
    print('serving on http://127.0.0.1:%d' % port, flush=True)
    server.serve_forever()


def api(port):
    # Nova parses sys.argv as its command line as it loads, and reads the
    # files named by OS_NOVA_CONFIG_DIR and OS_NOVA_CONFIG_FILES.
    sys.argv = sys.argv[:1]
    _wait_for_sqlite_locks()
    from nova.wsgi import osapi_compute
    _serve(osapi_compute.application, port)


#: The one network of the Neutron stand-in, shared, and its subnet; the
#: stand-in gives ports no addresses. Tempest's scenario tests name it
#: (``[compute] fixed_network_name``): Nova 34 cannot build a server with
#: accelerators whose request names no networks (``_split_network_arqs``
#: iterates over them, None then), as requests before microversion 2.37
#: may.
SUBNET = {'id': '9c1d6f0e-47b2-4c8a-8d3e-5b7a2e1f0c64', 'name': 'demo-subnet',
          'network_id': '3a5e8a1c-5d0e-4c1e-9a59-2f5f0c8e7d41',
          'ip_version': 4, 'cidr': '192.0.2.0/24', 'gateway_ip': None,
          'enable_dhcp': False, 'project_id': '', 'tenant_id': ''}
NETWORK = {'id': SUBNET['network_id'], 'name': 'demo-net', 'shared': True,
           'router:external': False, 'status': 'ACTIVE',
           'admin_state_up': True, 'subnets': [SUBNET['id']], 'mtu': 1500,
           'port_security_enabled': True, 'project_id': '', 'tenant_id': ''}
#: What the Neutron stand-in adds to what is created in a collection: a
#: port is bound at once, to nothing.
_DEFAULTS = {
    'ports': {'status': 'ACTIVE', 'admin_state_up': True, 'fixed_ips': [],
              'device_id': '', 'device_owner': '', 'security_groups': [],
              'binding:vif_type': 'ovs', 'binding:vif_details': {}},
    'security-groups': {'description': '', 'security_group_rules': []},
}


def neutron(port):
    """Serve a stand-in for Neutron's API on ``port``, in memory.

    It is not Neutron: nothing is plugged or addressed, and tokens are
    not checked. It answers no more than Nova and Tempest's scenario tests
    ask: the version document; in every collection (networks, ports,
    security groups and their rules...) create, show, update, delete, and
    list, filtered by the query's fields (``tenant_id`` and
    ``project_id`` alike); and an empty quota (no port limit). Only
    :data:`NETWORK` and its :data:`SUBNET` exist at first.
    """
    kept = {'networks': {NETWORK['id']: NETWORK},
            'subnets': {SUBNET['id']: SUBNET}}
    lock = threading.Lock()

    def answer(start_response, status, body=None):
        data = b'' if body is None else json.dumps(body).encode()
        start_response(status, [('Content-Type', 'application/json'),
                                ('Content-Length', str(len(data)))])
        return [data]

    def listed(items, query):
        filters = {key: values for key, values in urllib.parse.parse_qs(
            query).items() if key != 'fields'}
        return [item for item in items if all(
            str(item[key]) in values
            for key, values in filters.items() if key in item)]

    def app(environ, start_response):
        path = environ['PATH_INFO'].strip('/').removesuffix('.json')
        parts = path.split('/')[1:] if path.startswith('v2.0') else None
        method = environ['REQUEST_METHOD']
        if not parts:
            return answer(start_response, '200 OK', {'versions': [{
                'id': 'v2.0', 'status': 'CURRENT',
                'links': [{'rel': 'self', 'href': 'http://127.0.0.1:%d/'
                           'v2.0/' % port}]}]})
        name, key = parts[0], '/'.join(parts[1:])
        # security-groups: security_groups, one security_group.
        plural = name.replace('-', '_')
        if name == 'quotas' and key:
            return answer(start_response, '200 OK', {'quota': {}})
        body = json.loads(environ['wsgi.input'].read(int(
            environ.get('CONTENT_LENGTH') or 0)) or '{}')
        with lock:
            items = kept.setdefault(name, {})
            if method == 'POST':
                item = dict(_DEFAULTS.get(name, {}), **body[plural[:-1]])
                project = item.get('project_id') or item.get('tenant_id')
                item.update(id=str(uuid.uuid4()), project_id=project,
                            tenant_id=project)
                if name == 'ports':
                    item['mac_address'] = 'fa:16:3e:%s' % ':'.join(
                        item['id'][i:i + 2] for i in (0, 2, 4))
                items[item['id']] = item
                return answer(start_response, '201 Created',
                              {plural[:-1]: item})
            if not key and method == 'GET':
                return answer(start_response, '200 OK', {
                    plural: listed(items.values(),
                                   environ.get('QUERY_STRING', ''))})
            if key not in items:
                return answer(start_response, '404 Not Found', {
                    'NeutronError': {'type': 'NotFound', 'detail': '',
                                     'message': '%s %s not found' % (
                                         name, key)}})
            if method == 'DELETE':
                del items[key]
                return answer(start_response, '204 No Content')
            if method == 'PUT':
                items[key].update(body[plural[:-1]])
            return answer(start_response, '200 OK',
                          {plural[:-1]: items[key]})
    _serve(app, port)


def _recording_driver():
    import nova.conf
    from nova.image import glance
    from nova.virt import fake
    from nova.virt import node
    # Beside this file, in the state directory.
    import nova_guest

    lock = threading.Lock()

    def record(call, instance, accel_info):
        with lock, open(os.environ['CYBORG_NOVA_RECORDS'], 'a') as f:
            f.write(json.dumps({'call': call, 'instance': instance.uuid,
                                'accel_info': accel_info}) + '\n')

    class RecordingDriver(fake.FakeDriver):
        """The fake driver; it writes down each guest's accelerators.

        Its guests (:class:`nova_guest.Guests`) run while their servers
        do, paused while they are.
        """

        def init_host(self, host):
            super().init_host(host)
            self.guests = nova_guest.Guests(
                nova.conf.CONF.instances_path,
                os.environ.get('CYBORG_NOVA_SYSFS', '/sys'))
            self._set_nodes([os.environ.get('CYBORG_NOVA_NODENAME') or
                             host])
            # A restarted nova-compute refuses to start without its
            # host's node identity file; the node uuids are ours.
            if node.read_local_node_uuid() is None:
                node.write_local_node_uuid(self._node_uuid(self._nodes[0]))

        @staticmethod
        def _node_uuid(nodename):
            """The uuid of node ``nodename``, the same after a restart.

            The fake driver makes new ones in each process: a restarted
            nova-compute would not find its compute node again.
            """
            return str(uuid.uuid5(uuid.NAMESPACE_URL, 'file://%s#%s' % (
                nova.conf.CONF.state_path, nodename)))

        def get_available_resource(self, nodename):
            resources = super().get_available_resource(nodename)
            if resources:
                resources['uuid'] = self._node_uuid(nodename)
            return resources

        def get_nodenames_by_uuid(self, refresh=False):
            return {self._node_uuid(nodename): nodename
                    for nodename in self.get_available_nodes()}

        def spawn(self, context, instance, image_meta, injected_files,
                  admin_password, allocations, network_info=None,
                  block_device_info=None, power_on=True, accel_info=None):
            record('spawn', instance, accel_info)
            super().spawn(context, instance, image_meta, injected_files,
                          admin_password, allocations, network_info,
                          block_device_info, power_on, accel_info)
            if power_on:
                self.guests.start(instance, network_info, accel_info)

        def reboot(self, context, instance, network_info, reboot_type,
                   block_device_info=None, bad_volumes_callback=None,
                   accel_info=None, share_info=None):
            record('reboot', instance, accel_info)
            # The guest boots again with the accelerators Nova passes;
            # the fake driver's power_on finds it running.
            self.guests.stop(instance.uuid)
            self.guests.start(instance, network_info, accel_info)
            super().reboot(context, instance, network_info, reboot_type,
                           block_device_info, bad_volumes_callback,
                           accel_info, share_info)

        def power_on(self, context, instance, network_info,
                     block_device_info=None, accel_info=None,
                     share_info=None):
            record('power_on', instance, accel_info)
            super().power_on(context, instance, network_info,
                             block_device_info, accel_info, share_info)
            self.guests.start(instance, network_info, accel_info)

        def power_off(self, instance, timeout=0, retry_interval=0):
            super().power_off(instance, timeout, retry_interval)
            self.guests.stop(instance.uuid)

        def pause(self, instance):
            super().pause(instance)
            self.guests.pause(instance.uuid)

        def unpause(self, instance):
            super().unpause(instance)
            self.guests.unpause(instance.uuid)

        def snapshot(self, context, instance, image_id, update_task_state):
            super().snapshot(context, instance, image_id, update_task_state)
            # As the libvirt driver uploads the guest's disk, through
            # Nova's image API, in its image's formats; Glance makes the
            # image active.
            image_meta = instance.image_meta
            formats = {name: getattr(image_meta, name) if
                       image_meta.obj_attr_is_set(name) else default
                       for name, default in (('disk_format', 'raw'),
                                             ('container_format', 'bare'))}
            glance.API().update(
                context, image_id, formats, purge_props=False,
                data=io.BytesIO(b'the disk of server %s\n' % (
                    instance.uuid.encode())))

        def destroy(self, context, instance, *args, **kwargs):
            record('destroy', instance, None)
            self.guests.stop(instance.uuid)
            super().destroy(context, instance, *args, **kwargs)

    return RecordingDriver


def service(name, argv):
    """Run ``nova-<name>`` (conductor, scheduler or compute)."""
    # nova.cmd patches the standard library first, as Nova's commands do.
    import importlib
    command = importlib.import_module('nova.cmd.' + name)
    _wait_for_sqlite_locks()
    if name == 'compute':
        module = type(sys)('nova.virt.cyborg_recording')
        module.RecordingDriver = _recording_driver()
        # [DEFAULT] compute_driver names a module under nova.virt.
        sys.modules[module.__name__] = module
    sys.argv = ['nova-' + name] + argv
    return command.main()


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == 'api':
        api(int(args[0]))
    elif command == 'neutron':
        neutron(int(args[0]))
    elif command in ('conductor', 'scheduler', 'compute'):
        return service(command, args)
    else:
        sys.exit('unknown command %s' % command)


if __name__ == '__main__':
    sys.exit(main())
