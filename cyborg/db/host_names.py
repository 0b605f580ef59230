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
"""The names a compute node's devices are recorded under: one row a device.

A host is known by the name of its compute node resource provider that
its agent found in Placement (:func:`cyborg.agent.service.compute_node_names`),
the name openstack-cyborg 17.0.0 recorded its devices under too. An agent
whose configuration changed may find another name for the same compute
node; :func:`check` keeps its report from recording a device a second
time under it, where a bind could hand out what an instance holds.
"""

import collections

import sqlalchemy as sa

from cyborg.common import pci_address
from cyborg.db.api import main_context_manager
from cyborg.db import models
from cyborg import exception


def _address_rows(query):
    """``query`` on devices joined to their control path ids."""
    return query.select_from(models.Device).join(
        models.ControlpathID,
        models.ControlpathID.device_id == models.Device.id)


@main_context_manager.reader
def addresses(context, hostname):
    """The PCI addresses of the devices recorded under ``hostname``."""
    rows = _address_rows(context.session.query(
        models.ControlpathID.cpid_info)).filter(
            models.Device.hostname == hostname)
    return {pci_address.address_of(info) for info, in rows} - {None}


@main_context_manager.reader
def unplaced(context):
    """The host names of devices whose compute node is not recorded.

    Names that openstack-cyborg 17.0.0 recorded devices under, until an
    agent finds its compute node under them
    (:func:`cyborg.db.host.set_compute_rp`).
    """
    placed = sa.select(models.Host.hostname).where(
        models.Host.compute_rp_uuid.is_not(None))
    return {name for name, in context.session.query(
        models.Device.hostname).filter(
            models.Device.hostname.not_in(placed)).distinct()}


def check(session, hostname, reported, compute_node):
    """Refuse a device recorded under another name of the compute node.

    Run in the transaction that applies the report of ``hostname``. A
    name is the same compute node's when it recorded that compute node,
    or when a deployable of its devices has a provider in the node's tree.

    :param reported: the PCI addresses of the devices the report holds.
    :param compute_node: the uuid of the host's compute node provider, and
        a set of the uuids of the providers of its tree (which may be empty
        when every name has its compute node recorded: see
        :func:`unplaced`).
    :raises HostNameConflict: the report would add a device at the address
        of a device recorded under such a name.
    """
    device = models.Device
    compute_rp_uuid, tree = compute_node
    names = [device.hostname == hostname,
             device.hostname.in_(sa.select(models.Host.hostname).where(
                 models.Host.compute_rp_uuid == compute_rp_uuid))]
    if tree:
        names.append(device.id.in_(
            sa.select(models.Deployable.device_id).where(
                models.Deployable.rp_uuid.in_(tree))))
    recorded = collections.defaultdict(set)
    for name, info in _address_rows(session.query(
            device.hostname, models.ControlpathID.cpid_info)).filter(
                sa.or_(*names)):
        recorded[name].add(pci_address.address_of(info))
    added = reported - recorded.pop(hostname, set())
    for name in sorted(recorded):
        twice = sorted(added & recorded[name])
        if twice:
            raise exception.HostNameConflict(host=hostname, address=twice[0],
                                             other=name)
