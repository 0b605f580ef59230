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
"""Initial schema: hardware inventory, device profiles and ARQs.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from alembic import op
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None

_MYSQL = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}

DEVICE_TYPES = ('FPGA', 'GPU', 'AICHIP', 'QAT', 'NIC', 'SSD', 'MDEV', 'PCI',
                'NVME')
ARQ_STATES = ('Initial', 'BindStarted', 'Bound', 'BindFailed', 'Unbound',
              'UnbindFailed', 'Deleting')


def _common():
    return [
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('created_at', sa.DateTime),
        sa.Column('updated_at', sa.DateTime),
    ]


def _create(name, *columns):
    op.create_table(
        name, *_common(), *columns,
        sa.UniqueConstraint('uuid', name='uniq_%s0uuid' % name), **_MYSQL)


def upgrade():
    _create(
        'devices',
        sa.Column('type', sa.Enum(*DEVICE_TYPES, name='device_type'),
                  nullable=False),
        sa.Column('vendor', sa.String(255), nullable=False),
        sa.Column('model', sa.String(255), nullable=False),
        sa.Column('std_board_info', sa.Text),
        sa.Column('vendor_board_info', sa.Text),
        sa.Column('hostname', sa.String(255), nullable=False),
        sa.Column('status', sa.Enum('enabled', 'maintaining',
                                    name='device_status'),
                  nullable=False, server_default='enabled'))
    op.create_index('devices_hostname_idx', 'devices', ['hostname'])

    _create(
        'deployables',
        sa.Column('parent_id', sa.Integer, sa.ForeignKey('deployables.id')),
        sa.Column('root_id', sa.Integer, sa.ForeignKey('deployables.id')),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('num_accelerators', sa.Integer, nullable=False),
        sa.Column('device_id', sa.Integer, sa.ForeignKey('devices.id'),
                  nullable=False),
        sa.Column('rp_uuid', sa.String(36)),
        sa.Column('driver_name', sa.String(100)),
        sa.Column('bitstream_id', sa.String(36)))
    op.create_index('deployables_device_id_idx', 'deployables', ['device_id'])
    op.create_index('deployables_rp_uuid_idx', 'deployables', ['rp_uuid'])

    _create(
        'attributes',
        sa.Column('deployable_id', sa.Integer,
                  sa.ForeignKey('deployables.id'), nullable=False),
        sa.Column('key', sa.String(255), nullable=False),
        sa.Column('value', sa.String(255), nullable=False),
        sa.UniqueConstraint('deployable_id', 'key',
                            name='uniq_attributes0deployable_id0key'))

    _create(
        'controlpath_ids',
        sa.Column('device_id', sa.Integer, sa.ForeignKey('devices.id'),
                  nullable=False),
        sa.Column('cpid_type', sa.Enum('PCI', name='cpid_type'),
                  nullable=False),
        sa.Column('cpid_info', db_types.JsonEncodedDict, nullable=False))
    op.create_index('controlpath_ids_device_id_idx', 'controlpath_ids',
                    ['device_id'])

    _create(
        'attach_handles',
        sa.Column('deployable_id', sa.Integer,
                  sa.ForeignKey('deployables.id'), nullable=False),
        sa.Column('cpid_id', sa.Integer, sa.ForeignKey('controlpath_ids.id'),
                  nullable=False),
        sa.Column('in_use', sa.Boolean, nullable=False,
                  server_default=sa.false()),
        sa.Column('attach_type', sa.Enum('PCI', 'MDEV', 'TEST_PCI',
                                         name='attach_type'),
                  nullable=False),
        sa.Column('attach_info', db_types.JsonEncodedDict, nullable=False))
    op.create_index('attach_handles_deployable_id_in_use_idx',
                    'attach_handles', ['deployable_id', 'in_use'])

    _create(
        'device_profiles',
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('groups', db_types.JsonEncodedList, nullable=False),
        sa.Column('description', sa.Text),
        sa.Column('enabled', sa.Boolean, nullable=False,
                  server_default=sa.true()),
        sa.UniqueConstraint('name', name='uniq_device_profiles0name'))

    _create(
        'accelerator_requests',
        sa.Column('project_id', sa.String(255)),
        sa.Column('state', sa.Enum(*ARQ_STATES, name='arq_state'),
                  nullable=False, server_default='Initial'),
        sa.Column('device_profile_id', sa.Integer,
                  sa.ForeignKey('device_profiles.id'), nullable=False),
        sa.Column('device_profile_group_id', sa.Integer, nullable=False),
        sa.Column('device_profile_group', db_types.JsonEncodedDict,
                  nullable=False),
        sa.Column('hostname', sa.String(255)),
        sa.Column('device_rp_uuid', sa.String(36)),
        sa.Column('instance_uuid', sa.String(36)),
        sa.Column('attach_handle_id', sa.Integer,
                  sa.ForeignKey('attach_handles.id')),
        sa.Column('deployable_id', sa.Integer,
                  sa.ForeignKey('deployables.id')),
        sa.UniqueConstraint('attach_handle_id',
                            name='uniq_accelerator_requests0attach_handle_id'))
    for column in ('instance_uuid', 'project_id', 'state', 'hostname',
                   'device_rp_uuid', 'device_profile_id'):
        op.create_index('accelerator_requests_%s_idx' % column,
                        'accelerator_requests', [column])
