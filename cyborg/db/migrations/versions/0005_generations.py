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
"""A change counter per noun whose lists the API keeps in memory.

Every write of a device profile adds one to its noun's row in the same
transaction, so that each API process knows, with one read by primary
key, whether the list it answered last is still true.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    generations = op.create_table(
        'generations',
        sa.Column('created_at', sa.DateTime),
        sa.Column('updated_at', sa.DateTime),
        sa.Column('noun', sa.String(64), primary_key=True),
        sa.Column('generation', sa.BigInteger, nullable=False,
                  server_default='0'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.bulk_insert(generations, [{'noun': 'device_profile',
                                  'generation': 0}])
