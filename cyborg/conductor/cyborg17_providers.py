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
"""openstack-cyborg 17.0.0's resource providers, which Cyborg adopts.

openstack-cyborg 17.0.0 marked only some of its providers with
``OWNER_CYBORG``, and named some deployables otherwise than Cyborg does.
The Placement sync (:mod:`cyborg.conductor.placement_plan`) takes such a
provider over, keeping its uuid, allocations and traits, when it is
exactly what that service made for one of the host's deployables. All of
that lives here, to be deleted once no cloud upgrades from 17.0.0.
"""

from cyborg.common import placement_names


def adoptable(rp, provider, parent_uuid):
    """Whether ``rp`` is openstack-cyborg's provider of ``provider``.

    openstack-cyborg marked only some of its providers with
    ``OWNER_CYBORG`` (GPUs and generic PCI devices, not FPGAs, QAT, NICs
    or SSDs). A provider without it is taken over only when it is exactly
    what that service made for this deployable, directly below the compute
    node: the same name and the uuid derived from that name, or the
    provider the deployable records (see :func:`recorded`). A provider
    of that name with any other uuid or parent is someone else's.
    """
    return (rp['parent_provider_uuid'] == parent_uuid and (
        rp['name'] == provider.name and rp['uuid'] == provider.uuid or
        _recorded_by_openstack_cyborg(rp, provider)))


def _recorded_by_openstack_cyborg(rp, provider):
    """Whether the deployable records ``rp``, whose uuid its name derives.

    openstack-cyborg named a deployable's provider after the deployable,
    and its database, converted, keeps the provider's uuid in the
    deployable's ``rp_uuid``.
    """
    return (rp['uuid'] == provider.deployable.rp_uuid and
            rp['uuid'] == placement_names.provider_uuid(rp['name']))


def recorded(tree, provider, wanted):
    """The provider the deployable records, where it has another name.

    openstack-cyborg named some deployables otherwise than Cyborg does
    (after the system's host name, an FPGA after its last virtual
    function, a vGPU without its type): the database conversion renames
    the deployable but keeps its ``rp_uuid``, so its provider is found
    and keeps its uuid and allocations. Not where another deployable of
    the host wants that provider's name or uuid.
    """
    rp = tree.get(provider.deployable.rp_uuid)
    if (rp is None or rp['name'] in wanted or rp['uuid'] in wanted or
            not _recorded_by_openstack_cyborg(rp, provider)):
        return None
    return rp
