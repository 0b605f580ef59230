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
"""SQLAlchemy models of Cyborg's tables.

Hardware: devices own a tree of deployables (parent_id and
root_id point inside the same table), which carry attributes and
attach_handles; controlpath_ids say how the host reaches a device.
Hosts: one row per reporting host, with its inventory lease, and
placement_providers, the providers of its tree as Cyborg last saw them.
Requests: device_profiles and the accelerator_requests made from them;
nova_events, what Nova is still to be told of their binding.
Metrics: metric_buckets, the histograms conductors observe for /metrics.
The alembic migrations under cyborg/db/migrations must build exactly
these tables; a test compares them on every engine.
"""

from oslo_db.sqlalchemy import models
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa
from sqlalchemy import orm

from cyborg import states


def _table_args(*extra):
    return extra + ({'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'},)


class CyborgBase(models.TimestampMixin, models.ModelBase):
    """Columns and helpers every table shares."""


BASE = orm.declarative_base(cls=CyborgBase)


class Device(BASE):
    """A physical card found on a host."""

    __tablename__ = 'devices'
    __table_args__ = _table_args(
        sa.UniqueConstraint('uuid', name='uniq_devices0uuid'),
        sa.Index('devices_hostname_idx', 'hostname'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    type = sa.Column(sa.Enum(*states.DEVICE_TYPES, name='device_type'),
                     nullable=False)
    vendor = sa.Column(sa.String(255), nullable=False)
    model = sa.Column(sa.String(255), nullable=False)
    std_board_info = sa.Column(sa.Text, nullable=True)
    vendor_board_info = sa.Column(sa.Text, nullable=True)
    hostname = sa.Column(sa.String(255), nullable=False)
    status = sa.Column(sa.Enum(*states.DEVICE_STATUSES, name='device_status'),
                       nullable=False, default=states.DEVICE_ENABLED,
                       server_default=states.DEVICE_ENABLED)
    # Set while the host no longer reports the device but an accelerator
    # request still holds one of its attach handles; see
    # cyborg.db.api.inventory_apply.
    vanished_at = sa.Column(sa.DateTime, nullable=True)
    # What the host's agent last said of the device's health: NULL until
    # an agent that reports health does, and why it is not healthy.
    health = sa.Column(sa.String(16), nullable=True)
    health_reasons = sa.Column(db_types.JsonEncodedList(), nullable=False,
                               default=list, server_default='[]')
    # When ``health`` last changed: a recovered device leaves quarantine
    # a quiet period after it.
    health_changed_at = sa.Column(sa.DateTime, nullable=True)
    # Set while the device is quarantined: its inventory is reserved.
    quarantined_at = sa.Column(sa.DateTime, nullable=True)


class Host(BASE):
    """A compute host whose agent reports devices.

    The lease columns say which conductor reconciles the host's inventory
    now; the row is created by the first lease or Placement sync.
    """

    __tablename__ = 'hosts'
    __table_args__ = _table_args(
        sa.UniqueConstraint('hostname', name='uniq_hosts0hostname'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    hostname = sa.Column(sa.String(255), nullable=False)
    compute_rp_uuid = sa.Column(sa.String(36), nullable=True)
    # Its name, which Nova gives as the host of a bind.
    compute_rp_name = sa.Column(sa.String(255), nullable=True)
    lease_owner = sa.Column(sa.String(255), nullable=True)
    lease_expires_at = sa.Column(sa.DateTime, nullable=True)
    # When the host's agent last sent a report that was applied.
    reported_at = sa.Column(sa.DateTime, nullable=True)


class PlacementProvider(BASE):
    """A resource provider of a host's compute node tree, as Cyborg saw it.

    One row per provider that the host's Placement syncs met, Cyborg's or
    not (see :mod:`cyborg.conductor.placement_sync`): its generation,
    traits and inventories after the last sync that read or wrote it
    (generation NULL: read it again), and ``placed_traits``, the traits
    Cyborg itself put on it, the only ones it ever takes off.
    """

    __tablename__ = 'placement_providers'
    __table_args__ = _table_args(
        sa.Index('placement_providers_hostname_idx', 'hostname'),
    )

    uuid = sa.Column(sa.String(36), primary_key=True)
    hostname = sa.Column(sa.String(255), nullable=False)
    generation = sa.Column(sa.Integer, nullable=True)
    traits = sa.Column(db_types.JsonEncodedList(), nullable=False)
    inventories = sa.Column(db_types.JsonEncodedDict(), nullable=False)
    placed_traits = sa.Column(db_types.JsonEncodedList(), nullable=False)


class Deployable(BASE):
    """A part of a device that can be handed out or programmed."""

    __tablename__ = 'deployables'
    __table_args__ = _table_args(
        sa.UniqueConstraint('uuid', name='uniq_deployables0uuid'),
        sa.Index('deployables_device_id_idx', 'device_id'),
        sa.Index('deployables_rp_uuid_idx', 'rp_uuid'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    parent_id = sa.Column(sa.Integer, sa.ForeignKey('deployables.id'),
                          nullable=True)
    root_id = sa.Column(sa.Integer, sa.ForeignKey('deployables.id'),
                        nullable=True)
    name = sa.Column(sa.String(255), nullable=False)
    num_accelerators = sa.Column(sa.Integer, nullable=False)
    device_id = sa.Column(sa.Integer, sa.ForeignKey('devices.id'),
                          nullable=False)
    rp_uuid = sa.Column(sa.String(36), nullable=True)
    driver_name = sa.Column(sa.String(100), nullable=True)
    bitstream_id = sa.Column(sa.String(36), nullable=True)
    # Set on an FPGA region and every deployable below it while the host's
    # agent programs the region: see cyborg.db.programming.
    programming_since = sa.Column(sa.DateTime, nullable=True)


class Attribute(BASE):
    """A key/value fact about a deployable (resource class, traits...)."""

    __tablename__ = 'attributes'
    __table_args__ = _table_args(
        sa.UniqueConstraint('uuid', name='uniq_attributes0uuid'),
        sa.UniqueConstraint('deployable_id', 'key',
                            name='uniq_attributes0deployable_id0key'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    deployable_id = sa.Column(sa.Integer, sa.ForeignKey('deployables.id'),
                              nullable=False)
    key = sa.Column(sa.String(255), nullable=False)
    value = sa.Column(sa.String(255), nullable=False)


class ControlpathID(BASE):
    """How the host's software reaches a device (e.g. its PCI PF)."""

    __tablename__ = 'controlpath_ids'
    __table_args__ = _table_args(
        sa.UniqueConstraint('uuid', name='uniq_controlpath_ids0uuid'),
        sa.Index('controlpath_ids_device_id_idx', 'device_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    device_id = sa.Column(sa.Integer, sa.ForeignKey('devices.id'),
                          nullable=False)
    cpid_type = sa.Column(sa.Enum(*states.CPID_TYPES, name='cpid_type'),
                          nullable=False)
    cpid_info = sa.Column(db_types.JsonEncodedDict(), nullable=False)


class AttachHandle(BASE):
    """What is attached to an instance: a PCI function or an mdev."""

    __tablename__ = 'attach_handles'
    __table_args__ = _table_args(
        sa.UniqueConstraint('uuid', name='uniq_attach_handles0uuid'),
        sa.Index('attach_handles_deployable_id_in_use_idx',
                 'deployable_id', 'in_use'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    deployable_id = sa.Column(sa.Integer, sa.ForeignKey('deployables.id'),
                              nullable=False)
    cpid_id = sa.Column(sa.Integer, sa.ForeignKey('controlpath_ids.id'),
                        nullable=False)
    in_use = sa.Column(sa.Boolean, nullable=False, default=False,
                       server_default=sa.false())
    attach_type = sa.Column(sa.Enum(*states.ATTACH_TYPES,
                                    name='attach_type'), nullable=False)
    attach_info = sa.Column(db_types.JsonEncodedDict(), nullable=False)


class DeviceProfile(BASE):
    """A named set of accelerator requirements, like a flavor for devices."""

    __tablename__ = 'device_profiles'
    __table_args__ = _table_args(
        sa.UniqueConstraint('uuid', name='uniq_device_profiles0uuid'),
        sa.UniqueConstraint('name', name='uniq_device_profiles0name'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255), nullable=False)
    groups = sa.Column(db_types.JsonEncodedList(), nullable=False)
    description = sa.Column(sa.Text, nullable=True)
    enabled = sa.Column(sa.Boolean, nullable=False, default=True,
                        server_default=sa.true())


class AcceleratorRequest(BASE):
    """One requested accelerator for one instance (an ARQ)."""

    __tablename__ = 'accelerator_requests'
    __table_args__ = _table_args(
        sa.UniqueConstraint('uuid', name='uniq_accelerator_requests0uuid'),
        # A handle serves at most one ARQ, whatever the code above does.
        sa.UniqueConstraint('attach_handle_id',
                            name='uniq_accelerator_requests0attach_handle_id'),
        sa.Index('accelerator_requests_instance_uuid_idx', 'instance_uuid'),
        sa.Index('accelerator_requests_project_id_idx', 'project_id'),
        sa.Index('accelerator_requests_state_idx', 'state'),
        sa.Index('accelerator_requests_hostname_idx', 'hostname'),
        sa.Index('accelerator_requests_device_rp_uuid_idx', 'device_rp_uuid'),
        sa.Index('accelerator_requests_device_profile_id_idx',
                 'device_profile_id'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    project_id = sa.Column(sa.String(255), nullable=True)
    state = sa.Column(sa.Enum(*states.ALL_STATES, name='arq_state'),
                      nullable=False, default=states.INITIAL,
                      server_default=states.INITIAL)
    device_profile_id = sa.Column(sa.Integer,
                                  sa.ForeignKey('device_profiles.id'),
                                  nullable=False)
    device_profile_group_id = sa.Column(sa.Integer, nullable=False)
    device_profile_group = sa.Column(db_types.JsonEncodedDict(),
                                     nullable=False)
    hostname = sa.Column(sa.String(255), nullable=True)
    device_rp_uuid = sa.Column(sa.String(36), nullable=True)
    instance_uuid = sa.Column(sa.String(36), nullable=True)
    attach_handle_id = sa.Column(sa.Integer,
                                 sa.ForeignKey('attach_handles.id'),
                                 nullable=True)
    deployable_id = sa.Column(sa.Integer, sa.ForeignKey('deployables.id'),
                              nullable=True)

    device_profile = orm.relationship(DeviceProfile, lazy='joined',
                                      innerjoin=True)
    attach_handle = orm.relationship(AttachHandle, lazy='joined')


class NovaEvent(BASE):
    """An ``accelerator-request-bound`` event Nova is still to receive.

    Written in the transaction that binds or fails the ARQ, removed once
    Nova took it (or refused it for good, or it was too late to matter).
    ``next_try_at`` is when a conductor may (re)send it; a conductor that
    takes it moves that time on first, so that no other sends it too.
    """

    __tablename__ = 'nova_events'
    __table_args__ = _table_args(
        sa.Index('nova_events_next_try_at_idx', 'next_try_at'),
    )

    id = sa.Column(sa.Integer, primary_key=True)
    instance_uuid = sa.Column(sa.String(36), nullable=False)
    arq_uuid = sa.Column(sa.String(36), nullable=False)
    status = sa.Column(sa.Enum(*states.NOVA_EVENT_STATUSES,
                               name='nova_event_status'), nullable=False)
    attempts = sa.Column(sa.Integer, nullable=False, default=0,
                         server_default='0')
    next_try_at = sa.Column(sa.DateTime, nullable=False)


class MetricBucket(BASE):
    """A bucket of a histogram that conductors observe, for /metrics.

    Buckets are cumulative, as Prometheus shows them: an observation adds
    one to ``observed`` and its value to ``value_sum`` of every bucket of
    its series from the first whose bound it does not exceed up to the
    last, the ``+Inf`` one, which so holds the series' count and sum.
    ``bucket`` is the index of the bound in the histogram's definition
    (:mod:`cyborg.objects.metric`); ``labels`` the series' label values,
    ``name=value`` pairs joined by commas in the order of its label names.
    Rows are made by the first observation of a series.
    """

    __tablename__ = 'metric_buckets'
    __table_args__ = _table_args()

    name = sa.Column(sa.String(64), primary_key=True)
    labels = sa.Column(sa.String(255), primary_key=True)
    bucket = sa.Column(sa.Integer, primary_key=True, autoincrement=False)
    observed = sa.Column(sa.BigInteger, nullable=False, default=0,
                         server_default='0')
    value_sum = sa.Column(sa.Float, nullable=False, default=0.0,
                          server_default='0')
