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
"""tempest.conf says which services run and what the tests may use.

``cyborg/tests/functional/api/test_tempest.py`` runs Tempest with it
against the quickstart's stack.
"""

import configparser

import testtools

from cyborg_quickstart import tempest_conf

ADMIN = {'auth_url': 'http://127.0.0.1:5000/v3', 'username': 'admin',
         'password': 'secret', 'project_name': 'admin',
         'user_domain_name': 'Default', 'project_domain_name': 'Default'}
PCI = {'pci_profile': 'demo-pci', 'pci_vendor_id': '10ee',
       'pci_product_id': '5021'}


def _parsed(resources, guests=False):
    # Tempest's [DEFAULT] is a section like the others.
    conf = configparser.ConfigParser(interpolation=None,
                                     default_section='none')
    conf.read_string(tempest_conf.render('/ws', ADMIN, resources, guests))
    return conf


class TestRender(testtools.TestCase):

    def test_keystone_alone(self):
        conf = _parsed(PCI)
        self.assertEqual(
            {'cyborg': 'True', 'glance': 'True', 'nova': 'False',
             'neutron': 'False', 'cinder': 'False', 'swift': 'False'},
            dict(conf['service_available']))
        self.assertEqual(('admin', 'secret', 'http://127.0.0.1:5000/v3'), (
            conf['auth']['admin_username'], conf['auth']['admin_password'],
            conf['identity']['uri_v3']))
        self.assertEqual(('demo-pci', '10ee', '5021'), tuple(
            conf['cyborg_pci'][key] for key in (
                'device_profile_name', 'vendor_id', 'product_id')))

    def test_with_nova(self):
        conf = _parsed(dict(PCI, image_ref='img', flavor_ref='42'))
        self.assertEqual(('True', 'True'), (
            conf['service_available']['nova'],
            conf['service_available']['neutron']))
        self.assertEqual(('img', '42', 'demo-net'), (
            conf['compute']['image_ref'], conf['compute']['flavor_ref'],
            conf['compute']['fixed_network_name']))
        # No address to log in to; no network per project in the stand-in.
        self.assertEqual(('False', 'False'), (
            conf['validation']['run_validation'],
            conf['auth']['create_isolated_networks']))

    def test_with_guests(self):
        self.assertIn(r'test_pci_driver_lifecycle\.', tempest_conf.excluded())
        conf = _parsed(dict(PCI, image_ref='img', flavor_ref='42'),
                       guests=True)
        # As devstack logs in to servers on their fixed addresses.
        self.assertEqual(
            {'run_validation': 'True', 'connect_method': 'fixed',
             'network_for_ssh': 'demo-net', 'image_ssh_user': 'cirros',
             'auth_method': 'keypair'}, dict(conf['validation']))
        self.assertEqual(tempest_conf.EXCLUDED,
                         tempest_conf.excluded(guests=True))

    def test_command(self):
        self.assertEqual(
            ['tempest', 'run', '--config-file', '/s/tempest.conf',
             '--exclude-list', '/s/tempest-exclude.txt', '--regex',
             tempest_conf.REGEX], tempest_conf.command('/s'))
