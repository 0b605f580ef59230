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
"""The quickstart's demo: instances booted, their devices shown, deleted.

:class:`Demo` boots, for :class:`cyborg_quickstart.quickstart.Quickstart`: with
the Nova simulator (:mod:`cyborg_quickstart.nova_sim`) or the
real Nova (:mod:`cyborg_quickstart.nova`), as the services it started allow,
and says where everything is once they run.
"""

import json
import os
import shlex
# The demo runs the openstack CLI.
import subprocess  # nosec B404
import sys
import time

from keystoneauth1.identity import v3
from keystoneauth1 import service_token
from keystoneauth1 import session as ks_session

from cyborg_quickstart import glance
from cyborg_quickstart import keystone
from cyborg_quickstart import nova
from cyborg_quickstart import nova_events
from cyborg_quickstart import nova_sim
from cyborg_quickstart import placement
from cyborg_quickstart import tempest_conf

#: The simulated compute host.
HOST = 'demo-compute1'
#: The clouds of clouds.yaml the demo acts as with Keystone: the
#: administrator, and the user Nova sends service tokens as.
ADMIN_CLOUD = 'cyborg-admin'
NOVA_CLOUD = keystone.CLOUD_NAMES['service']
#: The image the real Nova's demo servers boot from.
DISK_NAME = 'demo-disk'
#: The PR interface id the simulated Intel cards show (sysfs default).
INTERFACE_ID = '9926ab6d-6c92-5a68-aabc-a7d84c545738'
FUNCTION_ID = 'd8424dc4-a4a3-c413-f89e-433683f9040b'
#: The demo bitstream's image name.
BITSTREAM_NAME = 'demo-aes'
#: The owner of the demo bitstream without Keystone, where Glance takes
#: any owner it is given; Cyborg's ``[fpga] trusted_image_owners`` names
#: it. With Keystone, the project of Cyborg's own user owns it, trusted by
#: default.
BITSTREAM_OWNER = 'cyborg-quickstart'


def trust_lines(keystone):
    """``[fpga]`` lines trusting the demo bitstream's owner.

    None with Keystone: the images of Cyborg's own project are trusted.
    """
    return [] if keystone else [
        'trusted_image_owners = %s' % BITSTREAM_OWNER]


#: What must be in Placement before the demo boots: resource class and
#: how many providers offer it.
EXPECTED = {'FPGA': 3, 'VGPU': 1}
#: The demo's instances: name, device profile, its groups.
DEMO = [
    ('vm-fpga', 'demo-fpga-aes', [{
        'resources:FPGA': '1', 'trait:CUSTOM_FPGA_INTEL': 'required',
        'accel:bitstream_id': '{image}'}]),
    ('vm-vgpu', 'demo-vgpu', [{
        'resources:VGPU': '1', 'trait:CUSTOM_GPU_NVIDIA': 'required'}]),
    # What devstack jobs and Tempest ask of the fake driver.
    ('vm-fake', 'demo-fake-device', [{
        'resources:FPGA': '1', 'trait:CUSTOM_FAKE_DEVICE': 'required'}]),
]
#: The real Nova's demo servers: the FPGA and the vGPU one.
NOVA_DEMO = DEMO[:2]
#: The simulated host's device for the generic PCI driver (a Xilinx
#: Alveo card, passed through whole), as :func:`cyborg.tests.sysfs.build`
#: adds it. Its vendor is no other device's: the generic PCI driver shows
#: vendor ids without the ``0x`` of the other drivers, and Tempest lists
#: the devices of one vendor expecting one spelling.
PCI_DEVICE = {'vendor': '10ee', 'product': '5021', 'class_code': '120000'}
#: Its device profile, as the generic PCI driver reports it by default.
PCI_PROFILE = ('demo-pci', [{
    'resources:CUSTOM_PCI': '1',
    'trait:CUSTOM_PCI_PRODUCT_ID_%s' % PCI_DEVICE['product'].upper():
        'required'}])
#: A flavor without accelerators, for Tempest's ``[compute] flavor_ref``.
PLAIN_FLAVOR = 'demo-plain'


class QuickstartError(Exception):
    """A step failed; the message says which and where the logs are."""


def echo(line):
    print(line, flush=True)


def pci_device_spec():
    """The ``[pci] device_spec`` entry that lists :data:`PCI_DEVICE`."""
    return {'vendor_id': PCI_DEVICE['vendor'],
            'product_id': PCI_DEVICE['product']}


class Demo:
    """The demo of the services a quickstart started.

    :param quickstart: a :class:`cyborg_quickstart.quickstart.Quickstart`: its
        ``state``, ``ports``, ``custom_ports``, ``keystone``, ``nova``,
        ``glance``, ``osc``, :meth:`path` and :meth:`url`.
    """

    def __init__(self, quickstart):
        self.quickstart = quickstart
        self._session = None

    def image(self, name, data, **properties):
        """The image called ``name`` in Glance, uploaded on first use.

        With Keystone, the administrator uploads it, public.
        """
        keystone = self.quickstart.keystone
        client = self.quickstart.glance.client(
            keystone and keystone.session('admin'))
        # Other images may be there too, such as a server's snapshot.
        for image in client.images.list(filters={'name': name}):
            if image['status'] == 'active' and image.get('owner') == (
                    properties.get('owner', image.get('owner'))):
                return image
        if keystone:
            properties['visibility'] = 'public'
        return glance.upload(client, data, name, **properties)

    def bitstream(self):
        """The demo bitstream's image, uploaded on first use.

        Owned by a project whose images Cyborg trusts, as an operator
        uploads bitstreams: Cyborg loads no other.
        """
        keystone = self.quickstart.keystone
        owner = (keystone.session('cyborg').get_project_id() if keystone
                 else BITSTREAM_OWNER)
        return self.image(
            BITSTREAM_NAME, json.dumps({'afu_id': FUNCTION_ID}).encode(),
            owner=owner, **{
                'bs-name': 'aes-128', 'bs-uuid': FUNCTION_ID,
                'vendor': 'Intel', 'board': 'PAC_ARRIA10',
                'shell_id': INTERFACE_ID, 'region_uuid': INTERFACE_ID,
                'function_uuid': FUNCTION_ID, 'function_name': 'aes',
                'version': '1.0', 'driver': 'OPAE', 'driver_ver': '2.0',
                'driver_path': '/opt/opae'})

    def cloud(self, name):
        """A keystoneauth password plugin: cloud ``name`` of clouds.yaml."""
        return v3.Password(**self.clouds()[name]['auth'])

    def session(self):
        """The demo's keystoneauth session, or None without Keystone.

        It acts as the administrator and sends the token of the user Nova
        calls Cyborg as beside it, as Nova does.
        """
        if self.quickstart.keystone and self._session is None:
            self._session = ks_session.Session(
                auth=service_token.ServiceTokenAuthWrapper(
                    user_auth=self.cloud(ADMIN_CLOUD),
                    service_auth=self.cloud(NOVA_CLOUD)))
        return self._session

    def placement_adapter(self):
        """An adapter for Placement, as the demo's administrator."""
        return placement.adapter(self.quickstart.url('placement'),
                                 nova_sim.PLACEMENT_VERSION, self.session())

    def nova_sim(self, events=None):
        return nova_sim.NovaSim(
            nova_sim.cyborg_adapter(self.quickstart.url('api') + '/v2',
                                    self.session()),
            self.placement_adapter(), events,
            self.quickstart.path('instances.json'), timeout=120)

    def wait_for_devices(self, timeout=300, interval=2):
        """Wait until the agent's devices are in Placement, saying so."""
        adapter = self.placement_adapter()
        deadline = time.monotonic() + timeout
        while True:
            found = {}
            for rp in adapter.get('/resource_providers', params={
                    'required': 'OWNER_CYBORG'}).json().get(
                        'resource_providers', []):
                inventories = adapter.get(
                    '/resource_providers/%s/inventories' %
                    rp['uuid']).json()['inventories']
                for rc in inventories:
                    found[rc] = found.get(rc, 0) + 1
            summary = ', '.join('%d %s' % (n, rc)
                                for rc, n in sorted(found.items()))
            if all(found.get(rc, 0) >= n for rc, n in EXPECTED.items()):
                echo('== devices in Placement: %s' % summary)
                return found
            if time.monotonic() > deadline:
                raise QuickstartError(
                    'the devices did not reach Placement within %d s '
                    '(found: %s); see the logs in %s' % (
                        timeout, summary or 'none',
                        self.quickstart.path('logs')))
            echo('.. waiting for the agent\'s devices in Placement '
                 '(so far: %s)' % (summary or 'none'))
            time.sleep(interval)

    def demo(self):
        """Boot the demo instances, show their devices, delete them."""
        self.wait_for_devices()
        image = self.bitstream()
        events = nova_events.EventReceiver(
            port=self.quickstart.ports['nova']).start()
        try:
            sim = self.nova_sim(events)
            for name, profile, groups in DEMO:
                if name in sim.instances():
                    sim.delete(name)
                self._profile(sim.cyborg, profile, json.loads(
                    json.dumps(groups).replace('{image}', image['id'])))
            booted = []
            for name, profile, _ in DEMO:
                echo('== booting %s with flavor extra spec '
                     'accel:device_profile=%s' % (name, profile))
                record = sim.boot(name, {nova_sim.PROFILE_SPEC: profile},
                                  host=HOST, progress=echo)
                booted.append(name)
                echo('== %s booted as %s on %s; the domain XML gets:' % (
                    name, record['uuid'], record['host']))
                for element in record['hostdevs']:
                    echo(element)
                if not record['hostdevs']:
                    echo('(nothing: Nova skips TEST_PCI attach handles)')
            for name in booted:
                echo('== deleting %s: %d accelerator request(s) '
                     'released' % (name, sim.delete(name)))
        finally:
            events.stop()
        return booted

    def osc_env(self):
        """The environment the openstack CLI reaches the real Nova in.

        With Keystone: the administrator's cloud of clouds.yaml. Without:
        Nova's test auth filter takes any token, and Glance asks for none.
        """
        if self.quickstart.keystone:
            return {'OS_CLIENT_CONFIG_FILE': self.quickstart.path(
                'clouds.yaml'), 'OS_CLOUD': ADMIN_CLOUD,
                'OS_COMPUTE_API_VERSION': nova.MICROVERSION}
        return {'OS_AUTH_TYPE': 'admin_token',
                'OS_ENDPOINT': self.quickstart.nova.url,
                'OS_TOKEN': nova.TOKEN,
                'OS_COMPUTE_API_VERSION': nova.MICROVERSION,
                'OS_IMAGE_ENDPOINT_OVERRIDE': self.quickstart.url('glance')}

    def openstack(self, *args, output=True):
        """Run the openstack CLI on the real Nova; its JSON output.

        :param output: the command shows something (``-f json``).
        """
        echo('$ openstack %s' % ' '.join(args))
        argv = [self.quickstart.osc] + \
            list(args) + (['-f', 'json'] if output else [])
        # The CLI from its virtualenv, with our arguments.
        done = subprocess.run(  # nosec B603
            argv, capture_output=True, text=True, timeout=300,
            env=dict(os.environ, **self.osc_env()))
        if done.returncode:
            raise QuickstartError('openstack %s failed:\n%s' % (
                ' '.join(args), done.stderr[-2000:]))
        return json.loads(done.stdout) if output else None

    def _flavor(self, compute, name, profile=None):
        """Flavor ``name``'s id; made if missing, asking for ``profile``."""
        for flavor in compute.get('/flavors').json()['flavors']:
            if flavor['name'] == name:
                return flavor['id']
        # A disk: Nova lets only administrators boot from an image with
        # flavors without one.
        flavor = compute.post('/flavors', json={'flavor': {
            'name': name, 'ram': 64, 'vcpus': 1, 'disk': 1}})
        if flavor.status_code != 200:
            raise QuickstartError('Nova refused flavor %s: %s' % (
                name, flavor.text))
        flavor = flavor.json()['flavor']['id']
        if profile:
            compute.post('/flavors/%s/os-extra_specs' % flavor, json={
                'extra_specs': {nova_sim.PROFILE_SPEC: profile}})
            echo('== flavor %s: %s=%s' % (name, nova_sim.PROFILE_SPEC,
                                          profile))
        return flavor

    def tempest_resources(self):
        """What Tempest's configuration names; made where missing.

        ``pci_profile``, ``pci_vendor_id`` and ``pci_product_id``:
        :data:`PCI_DEVICE` and its device profile; with the real Nova,
        ``image_ref`` and ``flavor_ref``: the demo disk's image and
        :data:`PLAIN_FLAVOR`.
        """
        cyborg = nova_sim.cyborg_adapter(self.quickstart.url('api') + '/v2',
                                         self.session())
        self._profile(cyborg, *PCI_PROFILE)
        found = {'pci_profile': PCI_PROFILE[0],
                 'pci_vendor_id': PCI_DEVICE['vendor'],
                 'pci_product_id': PCI_DEVICE['product']}
        if self.quickstart.nova:
            found['image_ref'] = self.image(DISK_NAME, b'a demo disk')['id']
            found['flavor_ref'] = self._flavor(
                self.quickstart.nova.adapter(), PLAIN_FLAVOR)
        return found

    def nova_demo(self):
        """Boot servers with the real Nova, show the driver's records."""
        self.wait_for_devices()
        image = self.bitstream()
        cyborg = nova_sim.cyborg_adapter(self.quickstart.url('api') + '/v2',
                                         self.session())
        compute = self.quickstart.nova.adapter()
        servers = {s['name'] for s in compute.get('/servers').json()[
            'servers']}
        for name, _, _ in NOVA_DEMO:
            if name in servers:
                self.openstack('server', 'delete', '--wait', name,
                               output=False)
        for name, profile, groups in DEMO:
            self._profile(cyborg, profile, json.loads(
                json.dumps(groups).replace('{image}', image['id'])))
            self._flavor(compute, profile, profile)
        booted = []
        for name, profile, _ in NOVA_DEMO:
            server = self.openstack(
                'server', 'create', '--flavor', profile, '--image',
                DISK_NAME, '--no-network', '--wait', name)
            booted.append(name)
            echo('== %s is %s on %s; the fake driver got:' % (
                name, server['status'], server['OS-EXT-SRV-ATTR:host']))
            for record in self.quickstart.nova.records():
                if (record['instance'] == server['id'] and
                        record['call'] == 'spawn'):
                    for arq in record['accel_info']:
                        echo('  %s (%s) %s %s' % (
                            arq['uuid'], arq['state'],
                            arq['attach_handle_type'],
                            json.dumps(arq['attach_handle_info'],
                                       sort_keys=True)))
        for name in booted:
            self.openstack('server', 'delete', '--wait', name, output=False)
            echo('== deleted %s' % name)
        return booted

    def summary(self):
        """Say where everything is and what to try next."""
        qs = self.quickstart
        bin_dir = os.path.dirname(sys.executable)
        api = qs.url('api') + '/v2'
        # The simulator's defaults are the quickstart's default ports.
        sim_options = ''.join(' %s %s' % (option, value) for option, value in (
            ('--cyborg', api), ('--placement', qs.url('placement')),
            ('--events-port', qs.ports['nova']))
            if qs.custom_ports)
        lines = ['', 'Cyborg runs with its state in %s (logs in %s).' % (
            qs.state, qs.path('logs'))]
        if qs.keystone:
            lines += [
                '  Keystone:  %s (state in %s)' % (qs.keystone.auth_url,
                                                   qs.keystone.state),
                '  API:       %s (Keystone tokens)' % api,
                '  Placement: %s (Keystone tokens)' % qs.url('placement'),
                '  Clouds:    %s: %s' % (qs.path('clouds.yaml'), ', '.join(
                    sorted(self.clouds()))),
                '  CLI:       tools/setup-client-venvs.sh, then '
                'OS_CLIENT_CONFIG_FILE=%s .venvs/osc-10.5.0/bin/openstack '
                '--os-cloud %s accelerator device profile list' % (
                    qs.path('clouds.yaml'), ADMIN_CLOUD),
                '  Tempest:   tools/setup-client-venvs.sh tempest, then '
                'cd %s && %s' % (
                    qs.path(tempest_conf.WORKSPACE), shlex.join(
                        tempest_conf.command(qs.state, os.path.abspath(
                            tempest_conf.TEMPEST))))]
        else:
            lines += [
                '  API:       %s (noauth)' % api,
                '  Placement: %s (token %s)' % (qs.url('placement'),
                                                placement.TOKEN)]
        if not qs.keystone and not qs.nova:
            lines += [
                '  Boot more: CYBORG_STATE=%s %s/python -m '
                'cyborg_quickstart.nova_sim%s boot '
                '--flavor-extra-spec accel:device_profile=demo-vgpu '
                '--name vm1' % (qs.state, bin_dir, sim_options)]
        if not qs.keystone:
            lines += [
                '  CLI:       tools/setup-client-venvs.sh, then '
                '.venvs/osc-10.5.0/bin/openstack --os-auth-type none '
                '--os-endpoint %s accelerator device profile list' % api]
        if qs.nova:
            lines += [
                '  Nova:      %s (%s; flavors %s, image %s)' % (
                    qs.nova.url, 'Keystone tokens' if qs.keystone else
                    'any token is an admin\'s', ', '.join(
                        profile for _, profile, _ in DEMO), DISK_NAME),
                '  Boot:      %s %s server create --flavor demo-vgpu '
                '--image %s --no-network --wait vm1' % (
                    ' '.join('%s=%s' % e for e in self.osc_env().items()),
                    qs.osc, DISK_NAME)]
        lines += ['  Status:    tools/quickstart.sh status',
                  '  Stop:      tools/quickstart.sh stop']
        for line in lines:
            echo(line)

    def clouds(self):
        """The clouds of clouds.yaml."""
        with open(self.quickstart.path('clouds.yaml')) as f:
            # Written as JSON (cyborg_quickstart.keystone).
            return json.load(f)['clouds']

    def run_demo(self):
        """The demo of the Nova that runs: the real one or the simulator."""
        return self.nova_demo() if self.quickstart.nova else self.demo()

    @staticmethod
    def _profile(cyborg, name, groups):
        """Device profile ``name`` with ``groups``, kept if it has them.

        A rerun finds the profiles of the run before, and servers the
        user booted with them may hold accelerator requests of them. One
        of that name with other groups (an earlier bitstream image, say)
        is replaced, which Cyborg refuses while requests use it.
        """
        found = cyborg.get('/device_profiles', params={'name': name})
        if found.status_code != 200:
            raise QuickstartError('Cyborg answered %s to GET '
                                  '/device_profiles: %s' % (
                                      found.status_code, found.text))
        for profile in found.json()['device_profiles']:
            if profile['groups'] == groups:
                echo('== device profile %s (kept): %s' % (
                    name, json.dumps(groups)))
                return
            deleted = cyborg.delete('/device_profiles/%s' % profile['uuid'])
            if deleted.status_code != 204:
                raise QuickstartError(
                    'device profile %s asks for %s, not for what the demo '
                    'needs, and Cyborg refused to replace it: %s' % (
                        name, json.dumps(profile['groups']), deleted.text))
        response = cyborg.post('/device_profiles', json=[
            {'name': name, 'groups': groups}])
        if response.status_code != 201:
            raise QuickstartError('Cyborg refused device profile %s: %s' % (
                name, response.text))
        echo('== device profile %s: %s' % (name, json.dumps(groups)))
