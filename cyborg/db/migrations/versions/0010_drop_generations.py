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
"""The API keeps no lists in memory: the change counters go.

Migration 0005 made generations so that each API process could tell,
with one read, whether a device-profile list it kept was still true. The
lists are read from the database on every request again (the measurement
is in doc/source/contributor/performance.rst), so the table, and the
session events that counted every profile write, go.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-12
"""

from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade():
    op.drop_table('generations')
