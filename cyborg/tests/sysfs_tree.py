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

"""A simulated sysfs tree as a test fixture."""

import fixtures

from cyborg.tests import sysfs


class SimulatedHost(fixtures.Fixture):
    """A simulated sysfs tree in a temporary directory, as the agent's root.

    Sets ``[agent] sysfs_root`` of ``conf`` to it.
    """

    def __init__(self, conf, description=()):
        super().__init__()
        self.conf = conf
        self.description = description

    def _setUp(self):
        root = self.useFixture(fixtures.TempDir()).path
        self.tree = sysfs.build(root, self.description)
        self.conf.config(sysfs_root=root, group='agent')
