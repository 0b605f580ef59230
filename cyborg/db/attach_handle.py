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
"""Attach handles in the database: claimed by one ARQ at a time.

These run inside the caller's writer transaction (an ARQ's bind, unbind
or delete), so that the handle and the ARQ that holds it change together;
:func:`free_unheld`, for ``cyborg-manage audit --heal``, has its own.
"""

from oslo_log import log
import sqlalchemy as sa

from cyborg.common import pci_address
from cyborg.db import api
from cyborg.db.api import main_context_manager
from cyborg.db import models
from cyborg.db import programming
from cyborg import exception
from cyborg import states

LOG = log.getLogger(__name__)

#: What a claim gives the ARQ that holds the handle.
_COLUMNS = (models.AttachHandle.id, models.AttachHandle.uuid,
            models.AttachHandle.attach_type, models.AttachHandle.attach_info)


def claim(context, deployable_id):
    """Mark a free handle of the deployable in use.

    Each candidate is taken with a conditional UPDATE, so of two
    transactions claiming at once each gets a handle of its own. None is
    taken of a deployable whose region is being programmed: the claim
    holds the lock of the deployable's tree that a programming takes to
    start (:mod:`cyborg.db.programming`). A PCI handle whose function
    another handle of the host has in use (two devices reported it, see
    :mod:`cyborg.conductor.inventory_plan.functions`) is never taken: no
    function is bound to two ARQs.

    :returns: the handle's ``id``, ``uuid``, ``attach_type`` (PCI, MDEV)
        and ``attach_info``, as it was found.
    :raises AttachHandleUnavailable: every handle of the deployable is used.
    :raises DeployableProgramming: its region is being programmed.
    """
    programming.check_free(context.session, deployable_id)
    model = models.AttachHandle
    candidates = context.session.query(*_COLUMNS).filter_by(
        deployable_id=deployable_id, in_use=False).order_by(model.id)
    for handle in candidates.all():
        if handle.attach_type in states.ATTACH_PCI_FUNCTION_TYPES:
            function = pci_address.address_of(handle.attach_info)
            holder = _function_holder(context, deployable_id, handle.id,
                                      function)
            if holder is not None:
                LOG.warning('Attach handle %(id)s of deployable '
                            '%(deployable)s is not claimed: its PCI '
                            'function %(function)s is in use through '
                            'attach handle %(holder)s',
                            {'id': handle.id, 'deployable': deployable_id,
                             'function': function, 'holder': holder})
                continue
        claimed = context.session.query(model).filter_by(
            id=handle.id, in_use=False).update(
                {'in_use': True}, synchronize_session=False)
        if claimed:
            return handle
    raise exception.AttachHandleUnavailable(deployable=deployable_id)


def _function_holder(context, deployable_id, handle_id, function):
    """The id of another in-use PCI handle of ``function`` on the host.

    The host's PCI handles are read with ``SELECT ... FOR UPDATE``, in
    id order, so that of two transactions claiming two handles of one
    function the second waits for the first and then sees its claim.
    The host's deployables are found by a subquery, which a locking read
    does not lock (MySQL and PostgreSQL lock the outer query's rows
    only): a claim locks no deployable but its own tree's root
    (:func:`cyborg.db.programming.check_free`), so two claims of two
    deployables of one host never wait for each other's root, nor
    deadlock.
    """
    if function is None:
        return None
    model = models.AttachHandle
    device, deployable = models.Device, models.Deployable
    host = sa.select(device.hostname).join(
        deployable, deployable.device_id == device.id).where(
            deployable.id == deployable_id).scalar_subquery()
    on_host = sa.select(deployable.id).join(
        device, deployable.device_id == device.id).where(
            device.hostname == host)
    rows = context.session.query(
        model.id, model.in_use, model.attach_info).filter(
            model.deployable_id.in_(on_host),
            model.attach_type.in_(states.ATTACH_PCI_FUNCTION_TYPES),
            model.id != handle_id).order_by(model.id).with_for_update().all()
    return next((row_id for row_id, in_use, info in rows
                 if in_use and pci_address.address_of(info) == function),
                None)


def get(context, handle_id):
    """A handle's ``id``, ``uuid``, ``attach_type`` and ``attach_info``."""
    return context.session.query(*_COLUMNS).filter(
        models.AttachHandle.id == handle_id).one()


def release(context, handle_ids):
    """Mark the handles free; None entries (no handle) are skipped."""
    handle_ids = [h for h in handle_ids if h is not None]
    if handle_ids:
        context.session.query(models.AttachHandle).filter(
            models.AttachHandle.id.in_(handle_ids)).update(
                {'in_use': False}, synchronize_session=False)


@api.retry_on_deadlock
@main_context_manager.writer
def free_unheld(context, handle_id):
    """Mark a handle free if it is in use and still no ARQ holds it.

    One conditional UPDATE, so a handle that a bind claimed since it was
    found is left alone.

    :returns: whether the handle was freed.
    """
    model, arq = models.AttachHandle, models.AcceleratorRequest
    return bool(context.session.query(model).filter(
        model.id == handle_id, model.in_use.is_(True),
        ~sa.exists().where(arq.attach_handle_id == model.id),
    ).update({'in_use': False}, synchronize_session=False))
