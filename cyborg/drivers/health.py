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
"""A device's health, read from what its host shows of its PCI functions.

One place reads every signal (``doc/source/admin/device-health.rst`` says
what each means): the PCI link of each function, the kernel driver bound
to the control path function where the Cyborg driver names the ones it
needs, the fatal and non-fatal AER counters (unhealthy when they rose since
the previous pass, so the first reading is only a baseline), and the error
files a driver names (an FPGA's error registers), unhealthy when non-zero.
A file the host does not show says nothing.
"""

from cyborg import states

#: The AER counter files read, and the kind of error each counts.
#: Correctable errors are the hardware's own business: not read.
AER_FILES = (('aer_dev_fatal', 'fatal', 'TOTAL_ERR_FATAL'),
             ('aer_dev_nonfatal', 'non-fatal', 'TOTAL_ERR_NONFATAL'))


def aer_total(text, key):
    """The ``key`` line's count in an AER counter file, or None."""
    for line in (text or '').splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == key and words[1].isdigit():
            return int(words[1])
    return None


def _link(dev):
    width = dev.read('current_link_width')
    speed = dev.read('current_link_speed')
    if width == '0' or (speed or '').startswith('Unknown'):
        return ['%s: PCI link down (width %s, speed %s)'
                % (dev.address, width, speed)]
    return []


def _errors(dev, patterns):
    reasons = []
    for pattern in patterns:
        for path in dev.glob(pattern):
            with open(path) as f:
                value = f.read().strip()
            try:
                raised = int(value, 0) != 0
            except ValueError:
                continue
            if raised:
                reasons.append('%s: error register %s reads %s' % (
                    dev.address, path[len(dev.path) + 1:], value))
    return reasons


class Monitor:
    """Reads the health of devices pass after pass.

    It keeps each function's AER counts of the previous pass: a count
    that rose since is a new error.
    """

    def __init__(self):
        self._aer = {}  # {(address, file): count}

    def _aer_rises(self, dev):
        reasons = []
        for name, kind, key in AER_FILES:
            count = aer_total(dev.read(name), key)
            before = self._aer.get((dev.address, name))
            self._aer[(dev.address, name)] = count
            if count is not None and before is not None and count > before:
                reasons.append('%s: %d new %s AER error(s), %d in all' % (
                    dev.address, count - before, kind, count))
        return reasons

    def check(self, controlpath, functions, kernel_drivers=(),
              error_files=()):
        """(health, reasons) of a device.

        :param controlpath: the PciDevice of the device's control path,
            or None where it has none on the host (a fake device).
        :param functions: the device's other PciDevices (its handles').
        :param kernel_drivers: the kernel drivers one of which the control
            path function needs bound; empty where any, or none, will do.
        :param error_files: glob patterns, below each function's directory,
            of error registers that read non-zero on an error.
        """
        reasons = []
        if (controlpath is not None and kernel_drivers and
                controlpath.driver not in kernel_drivers):
            reasons.append('%s: kernel driver %s bound, needs %s' % (
                controlpath.address, controlpath.driver or 'none',
                ' or '.join(sorted(kernel_drivers))))
        seen = set()
        for dev in [controlpath] + list(functions):
            if dev is None or dev.address in seen:
                continue
            seen.add(dev.address)
            reasons += _link(dev) + self._aer_rises(dev) + _errors(
                dev, error_files)
        if reasons:
            return states.DEVICE_UNHEALTHY, reasons
        return states.DEVICE_HEALTHY, []
