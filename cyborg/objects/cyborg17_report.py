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
"""What an openstack-cyborg 17.0.0 agent reports, as it sends it.

During a rolling upgrade, compute hosts keep 17.0.0's ``cyborg-agent``
for hours after the controllers run this release. That agent calls
``report_data(hostname, driver_device_list)`` on the shared
``cyborg-conductor`` topic with its own ``Driver*`` objects, under their
own names and versions; these classes let this release's serializer read
them. Their fields are 17.0.0's as they travel: JSON text where this
release sends dictionaries, and plain strings for its enumerations, so
that a value this release does not know is refused by
:func:`host_report` with a clear reason rather than while decoding.

:func:`host_report` turns such a list into this release's
:class:`cyborg.objects.driver_report.HostReport`, with the names this
release's drivers give the same devices (the rules of the database
conversion, :func:`cyborg.db.cyborg17_rows.deployable_name`), so that the
host is reconciled like any other and keeps its rows when its agent is
upgraded. The resource classes and traits stay 17.0.0's, as its agent
reported them to Placement before.
"""

import itertools
import json

from oslo_versionedobjects import fields as ovo_fields

from cyborg.common import attributes as common_attributes
from cyborg.common import pci_address
from cyborg.db import cyborg17_rows
from cyborg import exception
from cyborg.i18n import _
from cyborg.objects import base
from cyborg.objects import driver_report
from cyborg.objects import fields
from cyborg import states

#: 17.0.0's device states in which a device must not be handed out.
UNCLEAN_STATES = ('pending_cleaning', 'cleaning', 'error')


@base.CyborgObjectRegistry.register
class DriverAttribute(base.CyborgObject):
    # Version 1.0: openstack-cyborg 17.0.0's
    VERSION = '1.0'

    fields = {
        'key': fields.StringField(),
        'value': fields.StringField(),
    }


@base.CyborgObjectRegistry.register
class DriverAttachHandle(base.CyborgObject):
    # Version 1.0: openstack-cyborg 17.0.0's
    VERSION = '1.0'

    fields = {
        'attach_type': fields.StringField(),
        # JSON text of an object.
        'attach_info': fields.StringField(),
        'in_use': fields.BooleanField(default=False),
    }


@base.CyborgObjectRegistry.register
class DriverControlPathID(base.CyborgObject):
    # Version 1.0: openstack-cyborg 17.0.0's
    VERSION = '1.0'

    fields = {
        'cpid_type': fields.StringField(),
        # JSON text of an object.
        'cpid_info': fields.StringField(),
    }


@base.CyborgObjectRegistry.register
class DriverDeployable(base.CyborgObject):
    # Version 1.0: openstack-cyborg 17.0.0's
    VERSION = '1.0'

    fields = {
        'name': fields.StringField(),
        'num_accelerators': fields.IntegerField(),
        'attribute_list': fields.ListOfObjectsField(
            'DriverAttribute', default=[], nullable=True),
        'attach_handle_list': fields.ListOfObjectsField(
            'DriverAttachHandle', default=[], nullable=True),
        'driver_name': fields.StringField(nullable=True),
    }


@base.CyborgObjectRegistry.register
class DriverDevice(base.CyborgObject):
    # Versions 1.0-1.3: openstack-cyborg's, each adding a device type
    # Version 1.4: device_state (openstack-cyborg 17.0.0's)
    VERSION = '1.4'

    fields = {
        'vendor': fields.StringField(),
        'model': fields.StringField(),
        'type': fields.StringField(),
        'std_board_info': fields.StringField(nullable=True),
        'vendor_board_info': fields.StringField(nullable=True),
        'controlpath_id': fields.ObjectField('DriverControlPathID'),
        'deployable_list': fields.ListOfObjectsField('DriverDeployable',
                                                     default=[]),
        # True: keep the device as recorded (17.0.0's conductor neither
        # adds nor removes it).
        'stub': fields.BooleanField(default=False),
        'device_state': fields.StringField(nullable=True),
    }


def _get(obj, name):
    """A field's value, or its default when the sender left it unset."""
    if obj.obj_attr_is_set(name):
        return getattr(obj, name)
    default = obj.fields[name].default
    return None if default is ovo_fields.UnspecifiedDefault else default


def _json_object(text, what):
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        value = None
    if not isinstance(value, dict):
        raise ValueError(_('%(what)s is no JSON object: %(text)r')
                         % {'what': what, 'text': text})
    return {k: None if v is None else str(v) for k, v in value.items()}


#: 17.0.0's drivers that name a deployable after the system's host name
#: (``socket.gethostname()``) rather than ``[DEFAULT] host``, and its fake
#: driver, which rewrites the name's dots.
_NOT_NAMED_AFTER_HOST = ('intel', 'fake')


def server_name(hostname, driver_device_list):
    """The name a 17.0.0 agent serves RPC under, from what it reports.

    It reports under its compute node's provider name (``hostname``) and
    serves under ``[DEFAULT] host``, which the two may differ by; most of
    its drivers name a deployable ``<[DEFAULT] host>_<PCI address>``. The
    first such name gives the server, else the system's host name that
    the Intel drivers put there (``[DEFAULT] host``'s default), else
    ``hostname``.
    """
    found = {}
    for device in driver_device_list:
        for deployable in _get(device, 'deployable_list') or ():
            name = _get(deployable, 'name') or ''
            prefix, _sep, address = name.rpartition('_')
            try:
                pci_address.parse(address.lower())
            except ValueError:
                continue
            if not prefix:
                continue
            driver = (_get(deployable, 'driver_name') or '').lower()
            found.setdefault(driver in _NOT_NAMED_AFTER_HOST, prefix)
    return found.get(False) or found.get(True) or hostname


def stub_addresses(driver_device_list):
    """The control path addresses of the stub devices of the list.

    A stub is a device its driver could not read whole (17.0.0's Intel
    FPGA driver reports a card with no region so): 17.0.0's conductor
    neither adds nor removes it, and neither does this release.
    """
    out = set()
    for device in driver_device_list:
        if _get(device, 'stub'):
            out.add(pci_address.address_of(_json_object(
                device.controlpath_id.cpid_info, 'cpid_info')))
    return out


def _attributes(deployable):
    """Its attributes; a trait key given twice takes a free number."""
    pairs = [(attr.key, attr.value)
             for attr in _get(deployable, 'attribute_list') or ()]
    taken = {key for key, _value in pairs}
    out, seen = [], set()
    for key, value in pairs:
        if key in seen and common_attributes.is_trait_key(key):
            key = next(k for k in map('trait%d'.__mod__, itertools.count())
                       if k not in taken)
            taken.add(key)
        seen.add(key)
        out.append(driver_report.AttributeReport(key=key, value=value))
    return out


def _handle(handle):
    info = _json_object(handle.attach_info, 'attach_info')
    if handle.attach_type == states.ATTACH_MDEV:
        info.pop(cyborg17_rows.MDEV_MARK, None)
    return driver_report.AttachHandleReport(
        attach_type=handle.attach_type, attach_info=info,
        in_use=bool(_get(handle, 'in_use')))


def _device(hostname, device):
    cpid = device.controlpath_id
    cpid_info = _json_object(cpid.cpid_info, 'cpid_info')
    deployables = _get(device, 'deployable_list') or []
    out = driver_report.DeviceReport(
        type=device.type, vendor=device.vendor, model=device.model,
        std_board_info=_get(device, 'std_board_info'),
        vendor_board_info=_get(device, 'vendor_board_info'),
        controlpath_id=driver_report.ControlpathReport(
            cpid_type=cpid.cpid_type, cpid_info=cpid_info),
        deployables=[driver_report.DeployableReport(
            name=cyborg17_rows.deployable_name(
                hostname, device.type, _get(dep, 'driver_name'), dep.name,
                pci_address.address_of(cpid_info), len(deployables) == 1),
            num_accelerators=dep.num_accelerators,
            driver_name=_get(dep, 'driver_name') or '',
            attributes=_attributes(dep),
            attach_handles=[_handle(h) for h in
                            _get(dep, 'attach_handle_list') or ()])
            for dep in deployables])
    state = _get(device, 'device_state')
    if state in UNCLEAN_STATES:
        # This release does not clean devices: keep it from being handed
        # out, as the database conversion does.
        out.health = states.DEVICE_UNHEALTHY
        out.health_reasons = [_(
            "openstack-cyborg 17.0.0's agent reports its device_state "
            "%s") % state]
    return out


def host_report(hostname, driver_device_list, recorded=None):
    """This release's report of what a 17.0.0 agent reported.

    :param hostname: the name it reported under: the name of its compute
        node's resource provider.
    :param driver_device_list: its :class:`DriverDevice` objects.
    :param recorded: {control path address: DeviceReport} of the host's
        recorded devices that the list has as stubs (see
        :func:`stub_addresses`): reported as recorded; a stub not recorded
        is left out.
    :returns: a :class:`cyborg.objects.driver_report.HostReport`.
    :raises InvalidHostReport: a value this release does not know, or
        text that is no JSON object where one is due.
    """
    recorded = recorded or {}
    try:
        devices = []
        for device in driver_device_list:
            if not _get(device, 'stub'):
                devices.append(_device(hostname, device))
                continue
            kept = recorded.get(pci_address.address_of(_json_object(
                device.controlpath_id.cpid_info, 'cpid_info')))
            if kept is not None:
                devices.append(kept)
        return driver_report.HostReport(hostname=hostname, devices=devices)
    except (ValueError, TypeError, AttributeError,
            NotImplementedError) as e:
        # ValueError: an enumeration's value this release does not know;
        # NotImplementedError: oslo.versionedobjects' unset field.
        raise exception.InvalidHostReport(host=hostname, reason=str(e))
