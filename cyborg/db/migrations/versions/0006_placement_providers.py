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
"""Cyborg records each provider of a host's tree instead of a digest.

A row per provider keeps what the last Placement sync saw of it, so that
a sync reads again only the providers whose generation moved, whichever
conductor ran the last one, and the traits Cyborg itself put on it, so
that a sync takes off no trait that an operator, another service or
openstack-cyborg put there. The hosts' digest, which this replaces, goes.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28
"""

from alembic import op
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'placement_providers',
        sa.Column('created_at', sa.DateTime),
        sa.Column('updated_at', sa.DateTime),
        sa.Column('uuid', sa.String(36), primary_key=True),
        sa.Column('hostname', sa.String(255), nullable=False),
        sa.Column('generation', sa.Integer),
        sa.Column('traits', db_types.JsonEncodedList, nullable=False),
        sa.Column('inventories', db_types.JsonEncodedDict, nullable=False),
        sa.Column('placed_traits', db_types.JsonEncodedList,
                  nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('placement_providers_hostname_idx',
                    'placement_providers', ['hostname'])
    with op.batch_alter_table('hosts') as batch:
        batch.drop_column('placement_digest')
