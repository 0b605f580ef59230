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
"""What the takeover rehearsal reads of the cloud: API, Placement, rows.

:class:`CloudView` is mixed into :class:`test_takeover.TestTakeover`,
which sets ``legacy_url`` (the accelerator API, 17.0.0's or ours),
``rp`` (a Placement adapter), ``compute_rps`` ({host: compute node
provider}) and ``engine`` (the database).
"""

import json

import requests
import sqlalchemy as sa

from cyborg.common import pci_address
from cyborg.common import placement_names
from cyborg.tests.functional.upgrade import legacy_host

#: (``[DEFAULT] host``, Nova's compute node, the name 17.0.0's agent is
#: told to use for it in Placement: ``[agent] resource_provider_name``,
#: whose default is the FQDN).
HOSTS = (('compute-s', 'compute-s.example.org', 'compute-s.example.org'),
         ('compute-f.example.org', 'compute-f', 'compute-f'))


class CloudView:
    """Reads of the cloud under upgrade, the same before and after."""

    # --- HTTP -------------------------------------------------------------

    def _get(self, url, **params):
        try:
            response = requests.get(url, params=params, timeout=30, headers={
                'OpenStack-API-Version': 'accelerator 2.0'})
        except requests.ConnectionError:
            return None
        return response.json() if response.status_code == 200 else None

    def _one(self, path, params):
        response = self.rp.get(path, params=params)
        self.assertEqual(200, response.status_code, response.text)
        [found] = response.json()['resource_providers']
        return found

    def _traits(self, rp_uuid):
        response = self.rp.get('/resource_providers/%s/traits' % rp_uuid)
        self.assertEqual(200, response.status_code, response.text)
        return set(response.json()['traits'])

    def providers(self):
        """{uuid: (name, inventories, traits)} of the devices' providers."""
        found = {}
        for host in self.compute_rps:
            response = self.rp.get('/resource_providers', params={
                'in_tree': self.compute_rps[host]})
            for rp in response.json()['resource_providers']:
                if rp['uuid'] == self.compute_rps[host]:
                    continue
                inventories = self.rp.get(
                    '/resource_providers/%s/inventories' % rp['uuid']).json()
                found[rp['uuid']] = (rp['name'], {
                    rc: inv['total'] for rc, inv in
                    inventories['inventories'].items()},
                    self._traits(rp['uuid']))
        return found

    def allocations(self, consumer):
        response = self.rp.get('/allocations/%s' % consumer)
        self.assertEqual(200, response.status_code, response.text)
        return {rp: alloc['resources'] for rp, alloc in
                response.json()['allocations'].items()}

    # --- what 17.0.0 made, from its database ------------------------------

    def rows(self, query):
        with self.engine.connect() as connection:
            return [row._asdict() for row in connection.execute(
                sa.text(query))]

    def legacy_groups(self):
        """{flavor name: (host, device profile group)}.

        Each group asks for the resource class and every trait 17.0.0
        gave a deployable, as an operator's device profile names them:
        one group for each host and set of those, so that the cards of a
        kind, alike, answer the same group. But those saying what an FPGA
        region holds: servers that program the regions come and go, and
        those traits are withheld from a region until its host reports
        what it was loaded with.
        """
        deployables = {}
        for row in self.rows(
                'SELECT d.id, v.hostname, a.`key`, a.value FROM deployables '
                'd JOIN devices v ON v.id = d.device_id JOIN attributes a '
                'ON a.deployable_id = d.id ORDER BY d.id'):
            deployables.setdefault((row['id'], row['hostname']), []).append(
                (row['key'], row['value']))
        groups = {}
        for (_id, hostname), pairs in deployables.items():
            group = {'resources:%s' % value: '1'
                     for key, value in pairs if key == 'rc'}
            group.update({'trait:%s' % value: 'required'
                          for key, value in pairs
                          if key != 'rc' and value != 'OWNER_CYBORG' and
                          not placement_names.names_loaded(value)})
            if (hostname, group) not in groups.values():
                groups['f-%d' % len(groups)] = (hostname, group)
        return groups

    # --- Nova's servers, from the API --------------------------------------

    def server_arqs(self, url, servers):
        """{server: [(device_rp_uuid, attach handle)]} from an API."""
        found = {}
        for server in servers:
            arqs = self._get(url + '/accelerator_requests',
                             instance=server)['arqs']
            found[server] = sorted(
                (arq['device_rp_uuid'], arq['attach_handle_type'],
                 json.dumps(arq['attach_handle_info'], sort_keys=True)
                 if isinstance(arq['attach_handle_info'], dict)
                 else arq['attach_handle_info'], arq['state'])
                for arq in arqs)
        return found

    def devices(self):
        """[(compute node, PCI address)] of every device row, sorted.

        A row is named by its host as either release records it; its
        address is None while 17.0.0 has yet to write its control path.
        """
        nodes = {name: node for host, node, _rp in HOSTS
                 for name in (host, node)}
        return sorted(
            ((nodes[row['hostname']], pci_address.address_of(
                json.loads(row['cpid_info'] or 'null')))
             for row in self.rows(
                'SELECT d.hostname, c.cpid_info FROM devices d LEFT JOIN '
                'controlpath_ids c ON c.device_id = d.id')),
            key=lambda device: (device[0], device[1] or ''))

    def deployables(self):
        """{(uuid, provider)} of every deployable, as the API shows them.

        Not their names: 17.0.0 named deployables after ``[DEFAULT] host``
        (or the system's host name), Cyborg's API shows them under the
        compute node's name, and the two differ in both setups here
        (doc/source/admin/upgrades.rst, "Deployable names");
        test_cyborg17_wire compares the names where they are the same.
        """
        return {(d['uuid'], d['rp_uuid']) for d in self._get(
            self.legacy_url + '/deployables')['deployables']}

    def reported(self, hosts=HOSTS):
        """17.0.0 recorded every device of ``hosts``, with providers."""
        nodes = {node for _host, node, _rp in hosts}
        return [device for device in self.devices()
                if device[0] in nodes] == sorted(
            (node, address) for _host, node, _rp in hosts
            for address in legacy_host.addresses()) and all(
            row['rp_uuid'] for row in self.rows(
                'SELECT rp_uuid FROM deployables'))
