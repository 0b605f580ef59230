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
"""Tempest's configuration for the services a quickstart runs.

:func:`write_for` writes ``tempest.conf`` in the quickstart's state
directory, as devstack's ``lib/tempest`` and Cyborg's devstack plugin
write it for the services they run, beside ``tempest-exclude.txt``: the
tests of cyborg-tempest-plugin that cannot pass there, each with why
(:data:`EXCLUDED`, and :data:`NEEDS_GUESTS` without the real Neutron).
:func:`command` runs the plugin's tests with them. Tempest needs
Keystone; the quickstart writes them only when it runs.

With the real Nova and Neutron, Tempest logs in to servers as devstack
configures it to where servers' fixed addresses are reachable
(``[validation] connect_method = fixed``): the fake virt driver's
simulated guests (:mod:`cyborg_quickstart.nova_venv.nova_guest`) listen on
them.
"""

import os

from cyborg_quickstart import keystone
from cyborg_quickstart.nova_venv import nova_guest
from cyborg_quickstart.nova_venv import nova_runner

#: Tempest, with cyborg-tempest-plugin (tools/setup-client-venvs.sh
#: installs them).
TEMPEST = os.path.join('.venvs', 'tempest', 'bin', 'tempest')
#: The files :func:`write_for` writes in the state directory.
FILES = ('tempest.conf', 'tempest-exclude.txt')
#: Tempest's directory in the state directory: its log, locks and
#: test results; :func:`command` runs there.
WORKSPACE = 'tempest'
#: cyborg-tempest-plugin's tests: API, SRBAC and scenario.
REGEX = r'^cyborg_tempest_plugin\.tests\.'

#: Tests of cyborg-tempest-plugin left out, each with why.
EXCLUDED = {
    # Cyborg answers bad input with a 4xx where the existing service
    # failed with a 500.
    r'test_device_profile_negative\.DeviceProfileNegativeTest\.'
    r'test_create_device_profile_server_fault':
        'expects 500 for a profile with an existing uuid; we answer 409',
    r'test_device_profile_negative\.DeviceProfileNegativeTest\.'
    r'test_create_device_profile_name_is_null':
        'expects 500 for an empty name; we answer 400',
    r'test_device_profile_negative\.DeviceProfileNegativeTest\.'
    r'test_create_device_profile_name_to_long':
        'expects 500 for a 256-character name; we answer 400',
}
#: Tests also left out where servers get no address to log in to: with
#: the Neutron stand-in, or without Nova.
NEEDS_GUESTS = {
    r'test_pci_driver_lifecycle\.':
        'logs in to the guest over SSH to find the device; servers get no '
        'address without the real Neutron',
}

_CONF = """[DEFAULT]
log_file = {workspace}/tempest.log

[auth]
use_dynamic_credentials = True
# Servers are on the one shared network: no network per project.
create_isolated_networks = False
admin_username = {admin[username]}
admin_password = {admin[password]}
admin_project_name = {admin[project_name]}
admin_domain_name = {admin[user_domain_name]}
tempest_roles = member

[identity]
uri_v3 = {admin[auth_url]}
auth_version = v3
region = {region}

[identity-feature-enabled]
api_v2 = False

[service_available]
cyborg = True
glance = True
nova = {nova}
neutron = {nova}
cinder = False
swift = False

[compute]
image_ref = {image_ref}
image_ref_alt = {image_ref}
flavor_ref = {flavor_ref}
flavor_ref_alt = {flavor_ref}
# The shared network of Neutron (or of its stand-in): servers name it.
fixed_network_name = {network}

[compute-feature-enabled]
# Nova's fake virt driver: no consoles, no migration, no interfaces to
# attach.
console_output = False
vnc_console = False
spice_console = False
serial_console = False
live_migration = False
resize = False
interface_attach = False
snapshot = True
shelve = True

[validation]
{validation}

[cyborg]
image_ref = {image_ref}
flavor_ref = {flavor_ref}

[cyborg_pci]
device_profile_name = {pci_profile}
vendor_id = {pci_vendor_id}
product_id = {pci_product_id}

[cyborg_policy]
enforce_new_defaults = True

[oslo_concurrency]
lock_path = {workspace}/locks
"""


#: ``[validation]`` where servers have guests to log in to, on the
#: shared network's fixed addresses, as the image's user.
_VALIDATION = """run_validation = True
connect_method = fixed
network_for_ssh = {network}
image_ssh_user = {user}
auth_method = keypair"""


def render(workspace, admin, resources, guests=False):
    """The text of ``tempest.conf``.

    :param workspace: the directory of Tempest's log and locks.
    :param admin: the administrator's keystoneauth ``password`` options
        (:meth:`cyborg_quickstart.keystone.Keystone.credentials`).
    :param resources: what it names
        (:meth:`cyborg_quickstart.quickstart_demo.Demo.tempest_resources`):
        ``pci_profile``, ``pci_vendor_id`` and ``pci_product_id`` for the
        generic PCI driver's device; with Nova (and Neutron, or its
        stand-in), ``image_ref`` and ``flavor_ref``.
    :param guests: whether servers have guests to log in to (with the
        real Neutron).
    """
    network = nova_runner.NETWORK['name']
    return _CONF.format(
        workspace=workspace, admin=admin, region=keystone.REGION,
        nova='image_ref' in resources, network=network,
        validation=_VALIDATION.format(network=network, user=nova_guest.USER)
        if guests else 'run_validation = False',
        **dict({'image_ref': '', 'flavor_ref': ''}, **resources))


def excluded(guests=False):
    """The tests left out, ``{pattern: why}``; see :func:`render`."""
    return dict(EXCLUDED, **({} if guests else NEEDS_GUESTS))


def command(state, tempest='tempest'):
    """The command line running the plugin's tests with :data:`FILES`.

    It runs in ``<state>/tempest`` (:data:`WORKSPACE`), where Tempest
    makes its test repository.
    """
    return [tempest, 'run', '--config-file', os.path.join(state, FILES[0]),
            '--exclude-list', os.path.join(state, FILES[1]),
            '--regex', REGEX]


def write_for(quickstart):
    """Write :data:`FILES` for a quickstart whose services run.

    :param quickstart: a :class:`cyborg_quickstart.quickstart.Quickstart` with
        Keystone; its demo makes what the configuration names.
    :returns: the path of ``tempest.conf``.
    """
    resources = quickstart.demo.tempest_resources()
    guests = quickstart.neutron is not None
    workspace = quickstart.path(WORKSPACE)
    os.makedirs(workspace, exist_ok=True)
    conf, exclude_list = (quickstart.path(name) for name in FILES)
    # It holds the administrator's password.
    with open(os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
              'w') as f:
        f.write(render(workspace, quickstart.keystone.credentials('admin'),
                       resources, guests))
    with open(exclude_list, 'w') as f:
        for pattern, reason in sorted(excluded(guests).items()):
            f.write('%s  # %s\n' % (pattern, reason))
    print('== Tempest\'s configuration: %s' % conf, flush=True)
    return conf
