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
"""Hosts remember their compute node provider's name and Placement digest.

The name lets a bind naming the compute node (as Nova does, by its FQDN)
be checked without asking Placement; the digest of what the last complete
Placement sync saw lets an unchanged sync skip reading every provider,
whichever conductor ran the last one.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27
"""

from alembic import op
import sqlalchemy as sa

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('hosts', sa.Column('compute_rp_name', sa.String(255)))
    op.add_column('hosts', sa.Column('placement_digest', sa.String(64)))
