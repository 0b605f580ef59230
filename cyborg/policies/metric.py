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
"""Policy rule of the Prometheus metrics (they show the whole cloud)."""

from cyborg.policies import base

GET = 'cyborg:metrics:get'


def list_rules():
    return [
        base.rule(GET, base.ADMIN,
                  'Scrape the Prometheus metrics of the whole cloud '
                  '(served while [metrics] enabled is true). Give a '
                  'monitoring user its own role, e.g. "role:admin or '
                  'role:metrics", to scrape without being an '
                  'administrator.',
                  [('GET', '/metrics')], base.LEGACY_ADMIN_API),
    ]
