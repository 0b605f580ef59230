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
"""The hot-plug monitor hears real kernel uevents of PCI devices."""

import glob
import os
import threading

import testtools

from cyborg.agent import hotplug
from cyborg.tests import base


def writable_pci_uevent():
    """A real PCI device's uevent file this process may write, or None.

    Writing ``change`` to it makes the kernel send a change event for the
    device, which udev rules and drivers treat as a no-op re-announcement.
    """
    for path in sorted(glob.glob('/sys/bus/pci/devices/*/uevent')):
        if os.access(path, os.W_OK):
            return path
    return None


class TestHotplugMonitor(base.TestCase):

    @testtools.skipIf(writable_pci_uevent() is None,
                      'needs root and a PCI device to announce')
    def test_kernel_event_calls_back(self):
        heard = threading.Event()
        monitor = hotplug.HotplugMonitor(heard.set)
        self.assertTrue(monitor.start())
        self.addCleanup(monitor.stop)
        with open(writable_pci_uevent(), 'w') as f:
            f.write('change')
        self.assertTrue(heard.wait(10))

    def test_stop_without_start(self):
        hotplug.HotplugMonitor(lambda: None).stop()
