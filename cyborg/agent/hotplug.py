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
"""Notices PCI devices coming and going, from the kernel's uevents.

pyudev listens to the kernel's own events rather than udevd's: they need
no udevd (which containers often lack), and sysfs already shows a device
when the kernel announces it. A burst of events (enabling 64 VFs sends 64)
costs one report: the callback only wakes the resource tracker.
"""

from oslo_log import log
import pyudev

LOG = log.getLogger(__name__)

#: Kernel actions that change what the drivers would report.
ACTIONS = frozenset(('add', 'remove', 'change', 'bind', 'unbind'))


class HotplugMonitor:
    """Calls ``callback`` on each PCI add, remove, change, bind, unbind."""

    def __init__(self, callback):
        self._callback = callback
        self._observer = None

    def start(self):
        """Listen in a thread; without a netlink socket, only warn.

        :returns: whether the monitor runs.
        """
        try:
            monitor = pyudev.Monitor.from_netlink(pyudev.Context(),
                                                  source='kernel')
            monitor.filter_by('pci')
            # Receive from now on, not only once the thread runs.
            monitor.start()
            self._observer = pyudev.MonitorObserver(
                monitor, callback=self._event, name='pci-hotplug')
            self._observer.start()
        except OSError as e:
            LOG.warning('PCI hot-plug events are not available (%s); '
                        'devices are noticed on the periodic reports only',
                        e)
            return False
        LOG.info('Listening for PCI hot-plug events')
        return True

    def stop(self):
        if self._observer is not None:
            self._observer.stop()
            self._observer = None

    def _event(self, device):
        if device.action in ACTIONS:
            LOG.info('PCI device %(name)s: %(action)s', {
                'name': device.sys_name, 'action': device.action})
            self._callback()
