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
"""Hosts with their inventory lease; devices remember when they vanished.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-28
"""

from alembic import op
import sqlalchemy as sa

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'hosts',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('created_at', sa.DateTime),
        sa.Column('updated_at', sa.DateTime),
        sa.Column('hostname', sa.String(255), nullable=False),
        sa.Column('compute_rp_uuid', sa.String(36)),
        sa.Column('lease_owner', sa.String(255)),
        sa.Column('lease_expires_at', sa.DateTime),
        sa.UniqueConstraint('hostname', name='uniq_hosts0hostname'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.add_column('devices', sa.Column('vanished_at', sa.DateTime))
