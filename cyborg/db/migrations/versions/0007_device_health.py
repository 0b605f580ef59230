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
"""Devices keep the health their host reports, and their quarantine; hosts
remember when their agent last reported.

A device's health is NULL until an agent that reports health says it; its
reasons say why it is not healthy; ``health_changed_at`` starts the quiet
period after which a recovered device leaves quarantine.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28
"""

from alembic import op
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('devices') as batch:
        batch.add_column(sa.Column('health', sa.String(16)))
        batch.add_column(sa.Column('health_reasons', db_types.JsonEncodedList,
                                   nullable=False, server_default='[]'))
        batch.add_column(sa.Column('health_changed_at', sa.DateTime))
        batch.add_column(sa.Column('quarantined_at', sa.DateTime))
    with op.batch_alter_table('hosts') as batch:
        batch.add_column(sa.Column('reported_at', sa.DateTime))
