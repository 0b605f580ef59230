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
"""The agent's resource tracker: discover, check, report when changed.

Every ``[agent] report_interval`` seconds, and at once when asked (a PCI
hot-plug event, a programmed FPGA), the tracker scans the host's PCI
devices, runs every driver's discovery on the scan, checks the result and
sends it to the conductor when it differs from the last report sent. Every
``[agent] full_report_every`` passes the report goes out anyway, so the
conductor can reconcile.

A pass where any driver fails sends nothing: a partial report would make
the conductor remove the devices of the failed driver.

Each device's health (:mod:`cyborg.drivers.health`) is read on every pass
and is part of the report, so a device turning unhealthy is reported on
the pass that sees it.
"""

import hashlib
import threading

from oslo_log import log
import oslo_messaging as messaging
from oslo_serialization import jsonutils

from cyborg.agent import older_conductor
from cyborg.common import attributes
from cyborg.common import pci_address
import cyborg.conf
from cyborg import context as cyborg_context
from cyborg.drivers import health
from cyborg.drivers import pci
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import base as objects_base
from cyborg.objects import driver_report
from cyborg import states

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)


class ResourceTracker:
    """Reports this host's accelerators to the conductor."""

    def __init__(self, host, drivers, conductor_api):
        self.host = host
        self.drivers = drivers
        self._conductor = conductor_api
        self._context = cyborg_context.get_admin_context()
        self._lock = threading.Lock()
        self._sent = None
        self._health = health.Monitor()
        self._passes = 0
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = None
        self._older = older_conductor.Notice()

    def scan(self):
        """The host's PCI devices, as the drivers see them."""
        return pci.scan(CONF.agent.sysfs_root)

    def discover(self):
        """Run every driver on one PCI scan; the checked HostReport.

        :raises InvalidDriverReport: a driver failed or reported nonsense.
        """
        pci_devices = self.scan()
        devices = []
        names = {}
        for driver in self.drivers:
            try:
                found = driver.discover(pci_devices)
                check(driver.name, found, driver.reported_name)
            except exception.InvalidDriverReport:
                raise
            except Exception as e:
                raise exception.InvalidDriverReport(
                    driver=driver.name,
                    reason=_('discovery failed: %s') % e) from e
            for dev in found:
                for dep in dev.deployables:
                    if dep.name in names:
                        raise exception.InvalidDriverReport(
                            driver=driver.name,
                            reason=_('deployable %(name)s is also reported '
                                     'by %(other)s') % {
                                'name': dep.name, 'other': names[dep.name]})
                    names[dep.name] = driver.name
            devices.extend((driver, dev) for dev in found)
        for driver, dev in devices:
            dev.health, dev.health_reasons = self._health.check(
                *_functions(dev, pci_devices),
                kernel_drivers=driver.kernel_drivers,
                error_files=driver.error_files)
        return driver_report.HostReport(
            hostname=self.host, devices=[dev for _driver, dev in devices])

    def report(self, force=False):
        """Run one pass; send the report if it changed, is due or forced.

        :returns: whether the report was sent.
        :raises InvalidDriverReport: nothing was sent, see :meth:`discover`.
        """
        with self._lock:
            host_report = self.discover()
            digest = fingerprint(host_report)
            self._passes += 1
            full = self._passes % CONF.agent.full_report_every == 0
            if digest != self._sent:
                why = 'changed'
            elif force or full:
                why = 'forced' if force else 'full report'
            else:
                LOG.debug('Devices unchanged; report not sent')
                return False
            self._conductor.report_host(self._context, host_report)
            self._sent = digest
            LOG.info('Reported %(devices)d device(s) with %(deps)d '
                     'deployable(s) to the conductor (%(why)s)',
                     {'devices': len(host_report.devices),
                      'deps': sum(len(d.deployables)
                                  for d in host_report.devices),
                      'why': why})
            return True

    # --- the periodic loop -------------------------------------------------

    def start(self):
        """Report now, then every ``report_interval`` and when triggered."""
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run,
                                        name='resource-tracker', daemon=True)
        self._thread.start()

    def trigger(self):
        """Run a pass as soon as possible (a hot-plug event happened)."""
        self._wake.set()

    def stop(self):
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self):
        while not self._stopping.is_set():
            self._wake.clear()
            try:
                self.report()
            except (exception.HostLeaseHeld,
                    exception.ServiceUnavailable) as e:
                # Another conductor works on the host, or none answered
                # (one restarts): expected, and the next pass sends again.
                LOG.warning('Device report not taken; the next pass is in '
                            '%(interval)d seconds: %(err)s',
                            {'interval': CONF.agent.report_interval,
                             'err': e.message})
            except exception.HostNameConflict as e:
                # The configuration must change; the agent keeps trying,
                # so that the error stays in its log until it does.
                LOG.error('Device report refused; the next pass is in '
                          '%(interval)d seconds: %(err)s',
                          {'interval': CONF.agent.report_interval,
                           'err': e.message})
            except messaging.MessagingException as e:
                if not older_conductor.is_older(e):
                    LOG.exception('Device report failed; the next pass is '
                                  'in %d seconds', CONF.agent.report_interval)
                else:
                    self._older.older('report_host', e)
            except Exception:
                LOG.exception('Device report failed; the next pass is in '
                              '%d seconds', CONF.agent.report_interval)
            else:
                self._older.answered()
            self._wake.wait(CONF.agent.report_interval)


def _functions(device, pci_devices):
    """The PciDevices of a DeviceReport: its control path, its handles'.

    :returns: (control path or None, [PciDevice of each handle]); an
        address the host does not show (a fake device's) has none.
    """
    controlpath = pci_devices.get(pci_address.address_of(
        device.controlpath_id.cpid_info))
    functions = [pci_devices.get(pci_address.address_of(handle.attach_info))
                 for dep in device.deployables
                 for handle in dep.attach_handles]
    return controlpath, [dev for dev in functions if dev is not None]


def fingerprint(host_report):
    """A digest that changes exactly when the report's content does."""
    canonical = jsonutils.dumps(_plain(host_report), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _plain(value):
    if isinstance(value, objects_base.CyborgObject):
        return {name: _plain(getattr(value, name))
                for name in value.fields if value.obj_attr_is_set(name)}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def check(driver_name, devices, reported_name=None):
    """Check one driver's reports against the conventions.

    :param reported_name: a function of a device's PCI vendor id giving
        the ``driver_name`` its deployables carry (see
        :meth:`cyborg.drivers.base.Driver.reported_name`); when None, they
        carry ``driver_name``.
    :raises InvalidDriverReport: what is wrong, naming the deployable.
    """
    def invalid(dep, reason):
        return exception.InvalidDriverReport(
            driver=driver_name, reason='%s: %s' % (dep.name, reason))

    for dev in devices:
        names = {dep.name for dep in dev.deployables}
        expected = (reported_name(dev.vendor.lower().removeprefix('0x'))
                    if reported_name else driver_name)
        for dep in dev.deployables:
            if dep.driver_name != expected:
                raise invalid(dep, _('driver_name is %s') % dep.driver_name)
            if dep.parent_name is not None and dep.parent_name not in names:
                raise invalid(dep, _('parent %s is not a deployable of its '
                                     'device') % dep.parent_name)
            try:
                attributes.validate([(a.key, a.value)
                                     for a in dep.attributes])
            except ValueError as e:
                raise invalid(dep, str(e))
            if dep.num_accelerators != len(dep.attach_handles):
                raise invalid(dep, _('%(num)d accelerators but %(handles)d '
                                     'attach handles') % {
                    'num': dep.num_accelerators,
                    'handles': len(dep.attach_handles)})
            for handle in dep.attach_handles:
                required = set(pci_address.PARTS)
                if handle.attach_type == states.ATTACH_MDEV:
                    required.add('asked_type')
                if not required <= set(handle.attach_info):
                    raise invalid(dep, _('an attach handle lacks %s')
                                  % sorted(required - set(
                                      handle.attach_info)))
