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
"""A host's report in the plan's model, indexed and checked.

:func:`devices_of` turns the agent's wire objects into the plain tree of
:mod:`cyborg.common.host_inventory`; :func:`wanted` indexes it by PCI
address, refusing a report that contradicts itself.
"""

from cyborg.common import pci_address
from cyborg import exception


def _field(obj, name):
    """A field's value, or its default when the sender left it unset."""
    if obj.obj_attr_is_set(name):
        return getattr(obj, name)
    return obj.fields[name].default


def devices_of(hostname, host_report):
    """The report's devices in the plan's model (``ReportedDevice``).

    :param host_report: a :class:`cyborg.objects.driver_report.HostReport`.
    :raises InvalidHostReport: a required field is unset.
    """
    try:
        return [{
            'type': device.type,
            'vendor': device.vendor,
            'model': device.model,
            'std_board_info': _field(device, 'std_board_info'),
            'vendor_board_info': _field(device, 'vendor_board_info'),
            'cpid_type': device.controlpath_id.cpid_type,
            'cpid_info': dict(device.controlpath_id.cpid_info),
            'deployables': [{
                'name': dep.name,
                'parent_name': _field(dep, 'parent_name'),
                'num_accelerators': dep.num_accelerators,
                'driver_name': dep.driver_name,
                'bitstream_id': _field(dep, 'bitstream_id'),
                'attributes': [(attr.key, attr.value)
                               for attr in _field(dep, 'attributes')],
                'attach_handles': [{
                    'attach_type': handle.attach_type,
                    'attach_info': dict(handle.attach_info),
                    'in_use': _field(handle, 'in_use'),
                } for handle in _field(dep, 'attach_handles')],
            } for dep in _field(device, 'deployables')],
        } for device in _field(host_report, 'devices')]
    except NotImplementedError as e:
        # oslo.versionedobjects' way of saying a required field is unset.
        raise exception.InvalidHostReport(host=hostname, reason=str(e))


def wanted(hostname, devices):
    """Index the report by key, checking that its keys are unique.

    :param devices: :class:`~cyborg.common.host_inventory.ReportedDevice`
        trees.
    :returns: {PCI address: (device, [deployable, ...] parents first)}.
    :raises InvalidHostReport: the report contradicts itself.
    """
    def invalid(reason, **kwargs):
        return exception.InvalidHostReport(host=hostname,
                                           reason=reason % kwargs)

    result = {}
    names = set()
    for device in devices:
        address = pci_address.address_of(device['cpid_info'])
        if address is None:
            raise invalid('control path %(info)s is not a PCI address',
                          info=device['cpid_info'])
        if address in result:
            raise invalid('device %(address)s reported twice',
                          address=address)
        by_name = {}
        for dep in device['deployables']:
            if dep['name'] in names:
                raise invalid('deployable %(name)s reported twice',
                              name=dep['name'])
            names.add(dep['name'])
            by_name[dep['name']] = dep
            keys = [key for key, _value in dep['attributes']]
            if len(set(keys)) != len(keys):
                raise invalid('deployable %(name)s repeats an attribute',
                              name=dep['name'])
        result[address] = (device, _parents_first(by_name, invalid))
    return result


def _parents_first(by_name, invalid):
    """The deployables of a device sorted so that parents come first."""
    depth = {}

    def depth_of(name, descendants):
        if name not in depth:
            parent = by_name[name]['parent_name']
            if parent is None:
                depth[name] = 0
            elif parent not in by_name:
                raise invalid('the parent %(parent)s of %(name)s is not a '
                              'deployable of its device', parent=parent,
                              name=name)
            elif parent in descendants:
                raise invalid('deployable %(name)s is its own ancestor',
                              name=parent)
            else:
                depth[name] = depth_of(parent, descendants | {name}) + 1
        return depth[name]

    return sorted(by_name.values(),
                  key=lambda dep: depth_of(dep['name'], {dep['name']}))
