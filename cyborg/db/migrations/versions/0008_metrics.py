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
"""The histograms conductors observe for /metrics (bind and Placement sync
durations), one row per bucket of each series.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28
"""

from alembic import op
import sqlalchemy as sa

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'metric_buckets',
        sa.Column('created_at', sa.DateTime),
        sa.Column('updated_at', sa.DateTime),
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('labels', sa.String(255), nullable=False),
        sa.Column('bucket', sa.Integer, nullable=False,
                  autoincrement=False),
        sa.Column('observed', sa.BigInteger, nullable=False,
                  server_default='0'),
        sa.Column('value_sum', sa.Float, nullable=False,
                  server_default='0'),
        sa.PrimaryKeyConstraint('name', 'labels', 'bucket'),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
