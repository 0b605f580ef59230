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
"""A test case that runs drivers against a simulated host."""

from cyborg.drivers import pci
from cyborg.tests import base
from cyborg.tests import sysfs_tree


class DriverTestCase(base.TestCase):
    """Builds ``HOST`` (a :func:`cyborg.tests.sysfs.build` description)."""

    HOST = ()

    def setUp(self):
        super().setUp()
        self.tree = self.useFixture(
            sysfs_tree.SimulatedHost(self.conf, self.HOST)).tree

    def scan(self):
        return pci.scan(self.tree.root)

    def discover(self, driver):
        return driver.discover(self.scan())

    @staticmethod
    def deployables(devices):
        """Every deployable of the reports, by name."""
        return {dep.name: dep for dev in devices for dep in dev.deployables}

    @staticmethod
    def attributes(deployable):
        return {a.key: a.value for a in deployable.attributes}

    @staticmethod
    def traits(deployable):
        return {a.value for a in deployable.attributes
                if a.key.startswith('trait')}

    @staticmethod
    def addresses(deployable):
        """The PCI addresses of the deployable's attach handles."""
        return ['%(domain)s:%(bus)s:%(device)s.%(function)s'
                % h.attach_info for h in deployable.attach_handles]
