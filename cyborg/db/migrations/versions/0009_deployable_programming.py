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
"""Deployables remember that a region of theirs is being programmed.

``programming_since`` is set on an FPGA region and every deployable below
it while its host's agent loads a bitstream; no bind takes an attach
handle of them meanwhile, and a second programming is refused.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04
"""

from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('deployables') as batch:
        batch.add_column(sa.Column('programming_since', sa.DateTime))
