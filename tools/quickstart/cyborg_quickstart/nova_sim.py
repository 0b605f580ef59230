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
"""``cyborg-nova-sim``: boots simulated instances the way Nova does.

A demo, not a console script of the package: ``python -m
cyborg_quickstart.nova_sim``.

It drives the real services with Nova's own call sequence, so the
quickstart, the tests and anyone trying Cyborg see what a cloud sees:

1. the flavor's extra spec ``accel:device_profile=<name>`` names a device
   profile, read with ``GET /v2/device_profiles?name=<name>``;
2. each profile group ``N`` becomes the Placement request group
   ``device_profile_N`` (``resourcesdevice_profile_N`` and
   ``requireddevice_profile_N`` beside the instance's own resources);
3. ``GET /allocation_candidates`` on Placement, and the first candidate
   is claimed for the instance (``PUT /allocations/<instance>``);
4. the accelerator requests are created and bound, each to the resource
   provider that Placement mapped to its group (:mod:`cyborg.os_acc`);
5. Cyborg's ``accelerator-request-bound`` events arrive on this
   process's own ``os-server-external-events`` endpoint
   (:class:`cyborg_quickstart.nova_events.EventReceiver`), after which the
   requests are read with ``GET /v2/accelerator_requests?instance=``;
6. the attach handles are shown as the libvirt ``<hostdev>`` elements
   Nova would write into the domain XML.

``delete`` undoes it: Cyborg unbinds and deletes the instance's requests,
then the allocations are freed. ``register-host`` creates a compute node
resource provider as nova-compute does. The simulated instances are kept
in ``instances.json`` under the state directory.
"""

import argparse
import json
import os
import sys
# Only writes the <hostdev> elements; parses no XML.
from xml.etree import ElementTree  # nosec B405

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import noauth
from keystoneauth1 import session as ks_session
from oslo_utils import uuidutils

from cyborg.common import profile_group
from cyborg import os_acc
from cyborg.os_acc import client as os_acc_client
from cyborg_quickstart import nova_events
from cyborg_quickstart import placement

PROFILE_SPEC = 'accel:device_profile'
#: Placement microversion: string group suffixes (1.33), mappings of
#: groups to providers (1.34), consumer types (1.38).
PLACEMENT_VERSION = '1.39'
#: What a small flavor asks of the compute node itself.
INSTANCE_RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
#: The inventory ``register-host`` gives a compute node.
HOST_INVENTORY = {'VCPU': 16, 'MEMORY_MB': 65536, 'DISK_GB': 500}
#: Project and user of the simulated instances.
PROJECT = 'ab2a1a3f6e2d4a0c9e1b5c7d8f9a0b1c'
USER = '0f1e2d3c4b5a49788796a5b4c3d2e1f0'


class BootFailed(Exception):
    """The simulated boot failed; the message says at which step."""


def placement_query(profile_groups, in_tree=None):
    """The ``GET /allocation_candidates`` parameters for a profile.

    Each group becomes the granular request group Nova makes of it;
    ``accel:`` entries are Cyborg's alone and stay out of Placement.
    """
    query = {'resources': ','.join('%s:%d' % item for item in
                                   sorted(INSTANCE_RESOURCES.items())),
             'group_policy': 'none'}
    if in_tree:
        query['in_tree'] = in_tree
    for index, group in enumerate(profile_groups):
        query.update(profile_group.placement_params(
            group, profile_group.suffix(index)))
    return query


def hostdev(handle):
    """The libvirt ``<hostdev>`` element Nova writes for an attach handle.

    :param handle: an attach handle as :func:`os_acc.client.attach_handle`
        returns it.
    :returns: the element's XML, or None for a ``TEST_PCI`` handle (the
        fake driver's), for which Nova attaches nothing.
    """
    if handle['attach_handle_type'] == 'TEST_PCI':
        return None
    if handle['attach_handle_type'] == 'MDEV':
        element = ElementTree.Element('hostdev', mode='subsystem',
                                      type='mdev', model='vfio-pci',
                                      managed='no')
        source = ElementTree.SubElement(element, 'source')
        ElementTree.SubElement(source, 'address', uuid=handle['mdev_uuid'])
    else:
        domain, bus, rest = handle['pci_id'].split(':')
        slot, function = rest.split('.')
        element = ElementTree.Element('hostdev', mode='subsystem',
                                      type='pci', managed='yes')
        source = ElementTree.SubElement(element, 'source')
        ElementTree.SubElement(source, 'address', domain='0x' + domain,
                               bus='0x' + bus, slot='0x' + slot,
                               function='0x' + function)
    ElementTree.indent(element)
    return ElementTree.tostring(element, encoding='unicode')


def cyborg_adapter(url, session=None):
    """A keystoneauth adapter for Cyborg's API at ``url``.

    With ``noauth`` unless ``session`` brings the tokens to send.
    """
    return ks_adapter.Adapter(session or ks_session.Session(
                                  auth=noauth.NoAuth()),
                              service_type='accelerator',
                              endpoint_override=url, raise_exc=False)


class NovaSim:
    """Nova's side of accelerator boots, against live services.

    :param cyborg: keystoneauth adapter for Cyborg's API (``/v2``).
    :param placement: keystoneauth adapter for Placement.
    :param events: a started :class:`nova_events.EventReceiver`, the URL
        Cyborg's ``[nova]`` group points at.
    :param state_file: JSON file of the simulated instances.
    :param timeout: seconds a boot waits for binding and for its events,
        as Nova's ``arq_binding_timeout``.
    """

    def __init__(self, cyborg, placement, events, state_file, timeout=300):
        self.cyborg = cyborg
        self.placement = placement
        self.events = events
        self.state_file = state_file
        self.timeout = timeout

    # --- simulated instances ----------------------------------------------

    def instances(self):
        """The simulated instances by name."""
        if not os.path.exists(self.state_file):
            return {}
        with open(self.state_file) as f:
            return json.load(f)

    def _save(self, instances):
        os.makedirs(os.path.dirname(self.state_file) or '.', exist_ok=True)
        tmp = self.state_file + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(instances, f, indent=2, sort_keys=True)
        os.replace(tmp, self.state_file)

    # --- Placement --------------------------------------------------------

    def _placement(self, method, url, ok, **kwargs):
        response = self.placement.request(url, method, **kwargs)
        if response.status_code not in ok:
            raise BootFailed('Placement answered %s %s with %s: %s' % (
                method, url, response.status_code, response.text))
        return response

    def register_host(self, name):
        """Create the compute node provider as nova-compute does.

        :returns: its uuid; an existing provider of that name is kept.
        """
        found = self._placement('GET', '/resource_providers', (200,),
                                params={'name': name}).json()
        if found['resource_providers']:
            return found['resource_providers'][0]['uuid']
        rp = self._placement('POST', '/resource_providers', (200,), json={
            'name': name, 'uuid': uuidutils.generate_uuid()}).json()
        self._placement(
            'PUT', '/resource_providers/%s/inventories' % rp['uuid'],
            (200,), json={
                'resource_provider_generation': rp['generation'],
                'inventories': {rc: {'total': total} for rc, total in
                                HOST_INVENTORY.items()}})
        return rp['uuid']

    def _host_rp(self, host):
        found = self._placement('GET', '/resource_providers', (200,),
                                params={'name': host}).json()
        if not found['resource_providers']:
            raise BootFailed('Placement knows no compute node %s' % host)
        return found['resource_providers'][0]['uuid']

    def _candidate(self, profile_groups, host):
        """The first allocation candidate and the name of its host."""
        query = placement_query(
            profile_groups, in_tree=self._host_rp(host) if host else None)
        body = self._placement('GET', '/allocation_candidates', (200,),
                               params=query).json()
        if not body['allocation_requests']:
            raise BootFailed(
                'No valid host: Placement has no allocation candidate for '
                '%s' % ' '.join('%s=%s' % kv for kv in sorted(query.items())))
        candidate = body['allocation_requests'][0]
        root = body['provider_summaries'][
            next(iter(candidate['allocations']))]['root_provider_uuid']
        name = self._placement('GET', '/resource_providers/%s' % root,
                               (200,)).json()['name']
        return candidate, name

    def _claim(self, instance, candidate):
        self._placement('PUT', '/allocations/%s' % instance, (204,), json={
            'allocations': candidate['allocations'], 'project_id': PROJECT,
            'user_id': USER, 'consumer_generation': None,
            'consumer_type': 'INSTANCE',
            'mappings': candidate['mappings']})

    def _free(self, instance):
        self._placement('DELETE', '/allocations/%s' % instance, (204, 404))

    # --- boot and delete --------------------------------------------------

    def _profile_groups(self, name):
        response = self.cyborg.get('/device_profiles', params={'name': name})
        if response.status_code != 200:
            raise BootFailed('Cyborg answered %s to GET /device_profiles: '
                             '%s' % (response.status_code, response.text))
        profiles = response.json()['device_profiles']
        if not profiles:
            raise BootFailed('Cyborg has no device profile %s' % name)
        return profiles[0]['groups']

    def boot(self, name, extra_specs, host=None, progress=print):
        """Boot instance ``name`` with a flavor of ``extra_specs``.

        :param host: the compute node to boot on; any when None.
        :param progress: called with a line per step.
        :returns: the instance as kept in the state file: ``uuid``,
            ``host``, ``device_profile``, ``attach_handles`` and
            ``hostdevs`` (the ``<hostdev>`` XML elements).
        :raises BootFailed: with nothing left claimed or bound.
        """
        if name in self.instances():
            raise BootFailed('an instance named %s exists already' % name)
        profile = extra_specs.get(PROFILE_SPEC)
        if not profile:
            raise BootFailed('the flavor has no %s extra spec' % PROFILE_SPEC)
        instance = uuidutils.generate_uuid()
        groups = self._profile_groups(profile)
        progress('%s: device profile %s asks for %s' % (
            name, profile, json.dumps(groups)))
        candidate, host = self._candidate(groups, host)
        self._claim(instance, candidate)
        # Which provider serves which profile group, as Nova matches them.
        rps = {index: candidate['mappings'][profile_group.suffix(index)][0]
               for index in range(len(groups))}
        progress('%s: claimed on host %s, accelerator providers %s' % (
            name, host, ', '.join(rps[i] for i in sorted(rps))))
        try:
            handles = self._plug(name, instance, host, rps, extra_specs,
                                 progress)
        except Exception:
            self._free(instance)
            raise
        record = {'uuid': instance, 'host': host, 'device_profile': profile,
                  'attach_handles': handles,
                  'hostdevs': [x for x in map(hostdev, handles) if x]}
        instances = self.instances()
        instances[name] = record
        self._save(instances)
        return record

    def _plug(self, name, instance, host, rps, extra_specs, progress):
        """Create and bind the requests, wait for the events, read them."""
        client = os_acc.Client(self.cyborg)
        try:
            bound = client.plug(
                {'uuid': instance, 'name': name, 'project_id': PROJECT},
                {'hostname': host, 'groups': rps}, extra_specs,
                timeout=self.timeout)
        except os_acc.OsAccError as e:
            raise BootFailed('%s: %s' % (name, e)) from e
        events = self.events.wait_for(instance, len(bound), self.timeout)
        failed = [e for e in events if e.get('status') != 'completed']
        if len(events) < len(bound) or failed:
            client.unplug({'uuid': instance, 'name': name})
            raise BootFailed(
                '%s: %d accelerator-request-bound event(s) of %d arrived, '
                '%d failed' % (name, len(events), len(bound), len(failed)))
        progress('%s: %d accelerator-request-bound event(s) received' % (
            name, len(events)))
        response = self.cyborg.get('/accelerator_requests',
                                   params={'instance': instance})
        if response.status_code != 200:
            client.unplug({'uuid': instance, 'name': name})
            raise BootFailed('Cyborg answered %s to GET '
                             '/accelerator_requests: %s' % (
                                 response.status_code, response.text))
        return [os_acc_client.attach_handle(arq)
                for arq in response.json()['arqs']]

    def delete(self, name):
        """Delete instance ``name``: its requests, then its allocations.

        :returns: how many accelerator requests it had.
        """
        instances = self.instances()
        if name not in instances:
            raise BootFailed('there is no instance named %s' % name)
        instance = instances[name]['uuid']
        try:
            count = os_acc.Client(self.cyborg).unplug(
                {'uuid': instance, 'name': name})
        except os_acc.OsAccError as e:
            raise BootFailed('%s: %s' % (name, e)) from e
        self._free(instance)
        del instances[name]
        self._save(instances)
        return count


def _extra_specs(pairs):
    specs = {}
    for pair in pairs:
        key, sep, value = pair.partition('=')
        if not sep:
            raise argparse.ArgumentTypeError(
                'extra specs are KEY=VALUE, not %s' % pair)
        specs[key] = value
    return specs


def _parser():
    state = os.environ.get('CYBORG_STATE', '.state')
    parser = argparse.ArgumentParser(
        prog='cyborg-nova-sim',
        description="Boot and delete simulated instances with Nova's call "
                    "sequence against Cyborg and Placement.")
    parser.add_argument('--cyborg', default='http://127.0.0.1:6666/v2',
                        help="Cyborg's API endpoint (noauth)")
    parser.add_argument('--placement', default='http://127.0.0.1:8778',
                        help='Placement endpoint (noauth2, token admin)')
    parser.add_argument('--events-port', type=int, default=8774,
                        help='port of the os-server-external-events '
                             "endpoint on 127.0.0.1 (Cyborg's [nova] "
                             'endpoint)')
    parser.add_argument('--state-dir', default=state,
                        help='where instances.json is kept (default '
                             '$CYBORG_STATE or .state)')
    parser.add_argument('--timeout', type=int, default=300,
                        help='seconds to wait for binding and its events')
    commands = parser.add_subparsers(dest='command', required=True)
    boot = commands.add_parser('boot', help='boot an instance')
    boot.add_argument('--flavor-extra-spec', action='append', default=[],
                      metavar='KEY=VALUE',
                      help='an extra spec of the flavor, such as '
                           'accel:device_profile=NAME (repeatable)')
    boot.add_argument('--host', help='compute node (default: any)')
    boot.add_argument('--name', required=True, help='instance name')
    delete = commands.add_parser('delete', help='delete an instance')
    delete.add_argument('name')
    commands.add_parser('list', help='list the instances')
    register = commands.add_parser(
        'register-host',
        help='create a compute node resource provider as nova-compute does')
    register.add_argument('name')
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    state_file = os.path.join(args.state_dir, 'instances.json')
    receiver = None
    if args.command == 'boot':
        # Listening before the requests are bound, so no event is missed.
        receiver = nova_events.EventReceiver(port=args.events_port).start()
    sim = NovaSim(cyborg_adapter(args.cyborg),
                  placement.adapter(args.placement, PLACEMENT_VERSION),
                  receiver, state_file, timeout=args.timeout)
    try:
        if args.command == 'boot':
            record = sim.boot(args.name,
                              _extra_specs(args.flavor_extra_spec),
                              host=args.host)
            print('%s: booted as %s on %s; the domain XML gets:' % (
                args.name, record['uuid'], record['host']))
            for element in record['hostdevs']:
                print(element)
        elif args.command == 'delete':
            count = sim.delete(args.name)
            print('%s: deleted; %d accelerator request(s) released' % (
                args.name, count))
        elif args.command == 'register-host':
            print('%s: compute node resource provider %s' % (
                args.name, sim.register_host(args.name)))
        else:
            for name, record in sorted(sim.instances().items()):
                print('%s %s %s %s %s' % (
                    name, record['uuid'], record['host'],
                    record['device_profile'], ' '.join(
                        h.get('pci_id') or h['mdev_uuid']
                        for h in record['attach_handles'])))
    except (BootFailed, argparse.ArgumentTypeError, os_acc.OsAccError) as e:
        print('cyborg-nova-sim: %s' % e, file=sys.stderr)
        return 1
    finally:
        if receiver is not None:
            receiver.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
