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
"""Builders of realistic rows for tests that need a populated database."""

from cyborg.db import api as db_api


def create_device_tree(context, hostname='host1', handles=2,
                       pci_address='0000:5e:00.0'):
    """One FPGA device with one deployable offering ``handles`` VFs.

    :returns: (device, deployable, [attach_handle, ...]) rows.
    """
    domain, bus, rest = pci_address.split(':')
    slot, function = rest.split('.')
    device = db_api.create(context, 'device', {
        'type': 'FPGA', 'vendor': '8086', 'model': 'PAC Arria10',
        'std_board_info': '{"product_id": "09c4"}',
        'hostname': hostname})
    cpid = db_api.create(context, 'controlpath_id', {
        'device_id': device.id, 'cpid_type': 'PCI',
        'cpid_info': {'domain': domain, 'bus': bus, 'device': slot,
                      'function': function}})
    deployable = db_api.create(context, 'deployable', {
        'name': '%s_%s' % (hostname, pci_address),
        'num_accelerators': handles, 'device_id': device.id,
        'driver_name': 'intel_fpga'})
    attach_handles = [
        db_api.create(context, 'attach_handle', {
            'deployable_id': deployable.id, 'cpid_id': cpid.id,
            'attach_type': 'PCI',
            'attach_info': {'domain': domain, 'bus': bus, 'device': slot,
                            'function': str(vf + 1)}})
        for vf in range(handles)]
    return device, deployable, attach_handles


def create_profile(context, name='fpga-dp1', groups=None):
    groups = groups or [{'resources:FPGA': '1',
                         'trait:CUSTOM_FPGA_INTEL': 'required'}]
    return db_api.create(context, 'device_profile',
                         {'name': name, 'groups': groups,
                          'description': 'test profile'})


def create_arqs(context, profile, count=1, project_id='fake-project',
                **values):
    return db_api.arq_create_many(context, [
        dict({'device_profile_id': profile.id,
              'device_profile_group_id': 0,
              'device_profile_group': profile.groups[0],
              'project_id': project_id}, **values)
        for _ in range(count)])
