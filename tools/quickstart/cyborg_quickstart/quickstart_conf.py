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
"""The configuration files the quickstart writes for Cyborg.

``cyborg.conf``, rewritten by every start (the user's options go in
``cyborg.conf.d/``): noauth or Keystone, SQLite or the given database,
``fake://`` or RabbitMQ, the simulated host's drivers and the services'
URLs. With Keystone, the password options of Cyborg's service user.
"""

import json
import os

from cyborg.tests import privsep_helper
from cyborg_quickstart import keystone
from cyborg_quickstart import placement
from cyborg_quickstart import quickstart_demo
from cyborg_quickstart import quickstart_host


def credentials(keystone_server):
    """Config lines: password auth as Cyborg's service user.

    :param keystone_server: the :class:`cyborg_quickstart.keystone.Keystone`.
    """
    return ['auth_type = password',
            'region_name = %s' % keystone.REGION] + [
        '%s = %s' % item for item in sorted(
            keystone_server.credentials('cyborg').items())]


def cyborg_conf(quickstart, rabbit, db):
    """The text of ``cyborg.conf`` for the services of ``quickstart``.

    :param quickstart: a :class:`cyborg_quickstart.quickstart.Quickstart`.
    :param rabbit: RabbitMQ's transport URL; None for ``fake://``.
    :param db: the database's URL; None for SQLite in the state directory.
    """
    login = credentials(quickstart.keystone) if quickstart.keystone else []

    def token(url):
        if quickstart.keystone:
            # The service's URL comes from Keystone's catalog.
            return '\n'.join(login)
        return 'auth_type = admin_token\nendpoint = %s\ntoken = %s' % (
            url, placement.TOKEN)
    auth = []
    if quickstart.keystone:
        auth = [
            '', '[keystone_authtoken]',
            'www_authenticate_uri = %s' % quickstart.keystone.auth_url,
        ] + login + [
            # Cyborg's token goes with a user's to Glance and Nova.
            '', '[service_user]', 'send_service_user_token = true',
        ] + login
    return '\n'.join([
        '[DEFAULT]',
        'host = %s' % quickstart_demo.HOST, 'periodic_interval = 10',
        'state_path = %s' % quickstart.state,
        'transport_url = %s' % (rabbit or 'fake://'),
        '', '[database]',
        'connection = %s' % (
            db or 'sqlite:///%s' % quickstart.path('cyborg.sqlite')),
        '', '[api]',
        'auth_strategy = %s' % ('keystone' if quickstart.keystone
                                else 'noauth'),
        'host_ip = 127.0.0.1',
        'port = %d' % quickstart.ports['api'],
        # On RabbitMQ, a conductor process per core, as devstack runs it;
        # the all-in-one process on fake:// is one conductor.
        '', '[conductor]', 'workers = %d' % (
            len(os.sched_getaffinity(0)) if rabbit else 1), '', '[agent]',
        'enabled_drivers = %s' % quickstart_host.drivers(quickstart.neutron),
        'sysfs_root = %s' % quickstart.path('sysfs'),
        'resource_provider_name = %s' % quickstart.nodename,
        'enable_hotplug_monitor = false',
        'placement_wait_interval = 2', '', '[gpu_devices]',
        'enabled_vgpu_types = %s' % quickstart_host.VGPU_TYPE,
        '', '[pci]', 'device_spec = %s' % json.dumps(
            quickstart_demo.pci_device_spec()),
        '', '[fpga]', 'fpgaconf_path = %s' % quickstart.path('bin', 'fpgaconf')
    ] + quickstart_demo.trust_lines(quickstart.keystone) + [
        '', '[glance]'] + login + [
        'endpoint_override = %s' % quickstart.url('glance'),
        'download_dir = %s' % quickstart.path('downloads'),
        '', '[placement]', token(quickstart.url('placement')),
        # Nova's compute API is under /v2.1, as its catalog entry says.
        '', '[nova]', token(quickstart.url('nova') + '/v2.1'),
        '', '[oslo_concurrency]',
        'lock_path = %s' % quickstart.path('run'), '', '[oslo_policy]',
        'enforce_new_defaults = true'] + auth +
        quickstart_host.nic_config(quickstart.neutron) + [
        ''] + privsep_helper.config_lines(quickstart.conf))
