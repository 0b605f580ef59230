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
"""os-acc: attach accelerators to an instance through Cyborg's REST API.

For orchestrators other than Nova (and for Nova's own call sequence, which
the simulator of the repository's quickstart, ``cyborg_quickstart.nova_sim``,
follows), after the compute-node workflow of the os-acc specification::

    from keystoneauth1 import adapter, session
    from cyborg import os_acc

    api = adapter.Adapter(session.Session(auth=...),
                          service_type='accelerator')
    os_acc.initialize(api)
    handles = os_acc.plug(
        {'uuid': instance_uuid, 'name': 'vm1', 'project_id': project},
        {'hostname': 'compute1', 'uuid': device_rp_uuid},
        {'accel:device_profile': 'fpga-dp1'})
    ...
    os_acc.unplug({'uuid': instance_uuid, 'name': 'vm1'})

``plug`` creates the profile's accelerator requests, binds them to the
chosen resource provider(s), waits until Cyborg resolved them and returns
one attach handle per accelerator: ``{"pci_id": "0000:5e:00.1", ...}`` for
a PCI function, ``{"mdev_uuid": ..., "mdev_type": ..., "parent_pci_id": ...}``
for a mediated device. ``unplug`` deletes the instance's requests and
returns how many there were.
"""

from cyborg.os_acc.client import Client
from cyborg.os_acc.exception import AcceleratorBindFailed
from cyborg.os_acc.exception import AcceleratorBindTimeout
from cyborg.os_acc.exception import CyborgAgentUnavailable
from cyborg.os_acc.exception import DeviceProfileNotFound
from cyborg.os_acc.exception import OsAccError

__all__ = ['initialize', 'plug', 'unplug', 'Client', 'OsAccError',
           'CyborgAgentUnavailable', 'DeviceProfileNotFound',
           'AcceleratorBindFailed', 'AcceleratorBindTimeout']

_client = None


def initialize(adapter, timeout=60):
    """Wait until Cyborg answers, and remember how to reach it.

    :param adapter: a keystoneauth1 Adapter for the accelerator service.
    :raises CyborgAgentUnavailable: Cyborg did not answer within timeout.
    """
    global _client
    client = Client(adapter)
    client.wait_until_available(timeout)
    _client = client


def _require_client():
    if _client is None:
        raise OsAccError('os_acc.initialize() was not called')
    return _client


def plug(instance_info, selected_rp, flavor_extra_specs, timeout=300):
    """Attach the accelerators the flavor asks for; see :class:`Client`."""
    return _require_client().plug(instance_info, selected_rp,
                                  flavor_extra_specs, timeout=timeout)


def unplug(instance_info):
    """Release the instance's accelerators; returns how many."""
    return _require_client().unplug(instance_info)
