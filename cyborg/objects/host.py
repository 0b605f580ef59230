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
"""Host: a compute host whose agent reports devices.

The conductor keeps here the uuid of the host's compute node resource
provider, and takes the host's inventory lease before it changes the
host's inventory, in the database (:meth:`Host.apply_inventory`, which
writes what the conductor's plan says) or in Placement.
"""

import dataclasses

from oslo_utils import versionutils

from cyborg.db import host as host_db
from cyborg.db import host_names as host_names_db
from cyborg.db import inventory as inventory_db
from cyborg import exception
from cyborg.objects import base
from cyborg.objects import device as device_obj
from cyborg.objects import fields
from cyborg.objects import stored


#: Put before ``compute_rp_name`` for a host whose agent is
#: openstack-cyborg 17.0.0's, which serves RPC under the name after it.
#: Such an agent never asks for its compute node; an agent of this release
#: records the plain name as it starts, which ends the mark.
CYBORG17_AGENT = 'cyborg17-agent:'


@base.CyborgObjectRegistry.register
class Host(stored.StoredObject):
    # Version 1.0: Initial version
    # Version 1.1: compute_rp_name
    # Version 1.2: reported_at
    VERSION = '1.2'

    fields = dict(stored.StoredObject.fields, **{
        'id': fields.IntegerField(read_only=True),
        'hostname': fields.StringField(),
        'compute_rp_uuid': fields.StringField(nullable=True),
        'compute_rp_name': fields.StringField(nullable=True),
        'lease_owner': fields.StringField(nullable=True),
        'lease_expires_at': fields.DateTimeField(nullable=True),
        'reported_at': fields.DateTimeField(nullable=True),
    })

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if versionutils.convert_version_to_tuple(target_version) < (1, 1):
            primitive.pop('compute_rp_name', None)
        if versionutils.convert_version_to_tuple(target_version) < (1, 2):
            primitive.pop('reported_at', None)

    @classmethod
    def get_by_hostname(cls, context, hostname):
        """:raises HostNotFound: no agent reported from ``hostname``."""
        return cls._from_db_object(context, host_db.get(context, hostname))

    @classmethod
    def placed(cls, context, hostname):
        """The host, or None while its compute node provider is unknown.

        An agent records the provider before its first report, so a host
        no agent ever started on has none (nor a row).
        """
        try:
            host = cls.get_by_hostname(context, hostname)
        except exception.HostNotFound:
            return None
        return host if host.compute_rp_uuid is not None else None

    @classmethod
    def list(cls, context):
        """Every known host, by name."""
        return cls._from_db_objects(context, host_db.get_all(context))

    @classmethod
    def set_compute_rp(cls, context, hostname, rp_uuid, rp_name=None):
        """Record the host's compute node provider; returns the host."""
        return cls._from_db_object(
            context, host_db.set_compute_rp(context, hostname, rp_uuid,
                                            rp_name))

    @classmethod
    def set_cyborg17_agent(cls, context, hostname, rp_uuid, server):
        """Record that the host's agent is openstack-cyborg 17.0.0's.

        :param rp_uuid: the host's compute node provider.
        :param server: the name its agent serves RPC under.
        """
        return cls.set_compute_rp(context, hostname, rp_uuid,
                                  CYBORG17_AGENT + server)

    @property
    def cyborg17_server(self):
        """The server name of its 17.0.0 agent, or None for ours."""
        name = self.compute_rp_name or ''
        if name.startswith(CYBORG17_AGENT):
            return name[len(CYBORG17_AGENT):]
        return None

    @classmethod
    def cyborg17_agents(cls, context):
        """{host name: server name} of the hosts with a 17.0.0 agent."""
        return {host.hostname: host.cyborg17_server
                for host in cls.list(context)
                if host.cyborg17_server is not None}

    @staticmethod
    def set_reported(context, hostname):
        """Record that a report of the host's agent was applied now.

        ``reported_at`` tells how long ago the host last reported, which
        /metrics shows.
        """
        host_db.set_reported(context, hostname)

    @staticmethod
    def acquire_lease(context, hostname, owner, seconds):
        """Take the host's inventory lease for ``seconds``.

        :returns: whether ``owner`` holds it now (it was free, expired or
            already ``owner``'s).
        """
        return host_db.lease_acquire(context, hostname, owner, seconds)

    @staticmethod
    def release_lease(context, hostname, owner):
        """Give the lease back; False if ``owner`` no longer held it."""
        return host_db.lease_release(context, hostname, owner)

    @staticmethod
    def placement_providers(context, hostname):
        """The records that the host's Placement syncs keep, by uuid.

        See :func:`cyborg.db.host.get_placement_providers`.
        """
        return host_db.get_placement_providers(context, hostname)

    @staticmethod
    def set_placement_providers(context, hostname, records, gone=()):
        """Write those records, and delete the records of ``gone`` uuids.

        See :func:`cyborg.db.host.set_placement_providers`.
        """
        host_db.set_placement_providers(context, hostname, records, gone)

    @staticmethod
    def device_addresses(context, hostname):
        """The PCI addresses of the devices recorded under ``hostname``."""
        return host_names_db.addresses(context, hostname)

    @staticmethod
    def unplaced_hostnames(context):
        """Host names of devices whose compute node is not recorded."""
        return host_names_db.unplaced(context)

    @staticmethod
    def apply_inventory(context, hostname, plan, addresses=(),
                        compute_node=None):
        """Write what the conductor's ``plan`` says of the host's rows.

        See :func:`cyborg.db.inventory.apply` for ``plan``, ``addresses``
        and ``compute_node``.

        :returns: the plan's :class:`~cyborg.common.host_inventory.
            InventoryDiff`, with the devices added and removed as
            :class:`~cyborg.objects.device.Device` objects.
        """
        diff = inventory_db.apply(context, hostname, plan, addresses,
                                  compute_node)
        return dataclasses.replace(diff, **{
            key: tuple(device_obj.Device._from_db_object(context, row)
                       for row in getattr(diff, key))
            for key in ('devices_added', 'devices_removed')})
