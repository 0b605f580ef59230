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
"""The events Nova is still to be told about, kept until it takes them.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'nova_events',
        sa.Column('id', sa.Integer, primary_key=True),
        sa.Column('created_at', sa.DateTime),
        sa.Column('updated_at', sa.DateTime),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('arq_uuid', sa.String(36), nullable=False),
        sa.Column('status', sa.Enum('completed', 'failed',
                                    name='nova_event_status'),
                  nullable=False),
        sa.Column('attempts', sa.Integer, nullable=False,
                  server_default='0'),
        sa.Column('next_try_at', sa.DateTime, nullable=False),
        sa.Index('nova_events_next_try_at_idx', 'next_try_at'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
