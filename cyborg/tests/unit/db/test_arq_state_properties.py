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
"""The ARQ state machine under random sequences of changes, on SQLite.

hypothesis drives :mod:`cyborg.db.accelerator_request` with sequences of
the changes the conductor makes (and of bare transitions), and a model
of :data:`cyborg.states.TRANSITIONS` says what each must do. After every
step: the state is the model's, one of ``ALL_STATES``; a refused change
changed nothing; an ARQ holds an attach handle exactly when the model
says so, never in a state that may not hold one, always when Bound; no
handle is in use that no ARQ holds; every move to Bound or BindFailed of
an instance's ARQ recorded one event for Nova.
"""

import dataclasses

import hypothesis
from hypothesis import strategies as st
from oslo_utils import uuidutils

from cyborg.db import accelerator_request as arq_db
from cyborg.db import api as db_api
from cyborg.db import models
from cyborg import exception
from cyborg import states
from cyborg.tests import base
from cyborg.tests import db_utils

ARQS = 2
HANDLES = 1
#: The states in which an ARQ may hold a handle (Bound always does).
HOLDING = frozenset((states.BIND_STARTED, states.BOUND,
                     states.UNBIND_FAILED))

_REFUSED = (exception.AcceleratorRequestInvalidState,
            exception.AttachHandleUnavailable)


@dataclasses.dataclass
class Model:
    state: str = states.INITIAL
    held: bool = False
    instance: str = None
    events: int = 0


def _steps(operations):
    return st.lists(st.tuples(st.sampled_from(operations),
                              st.integers(0, ARQS - 1),
                              st.sampled_from(states.ALL_STATES)),
                    min_size=10, max_size=40)


class TestARQStateMachine(base.TestCase):

    USES_DB = True

    def setUp(self):
        super().setUp()
        self.profile = db_utils.create_profile(self.admin_context)

    def _row(self, uuid):
        return db_api.get(self.admin_context, 'accelerator_request', uuid)

    def _check(self, uuid, model):
        """The row's state and Nova events are the model's."""
        ctx = self.admin_context
        row = self._row(uuid)
        self.assertIn(row.state, states.ALL_STATES)
        self.assertEqual(model.state, row.state)
        with db_api.main_context_manager.reader.using(ctx):
            self.assertEqual(model.events, ctx.session.query(
                models.NovaEvent).filter_by(arq_uuid=uuid).count())
        return row

    def _check_handles(self, uuid, model, deployable_id):
        """The row holds a handle as the model says; none leaked."""
        ctx = self.admin_context
        row = self._check(uuid, model)
        self.assertEqual(model.held, row.attach_handle_id is not None)
        if row.attach_handle_id is not None:
            self.assertIn(row.state, HOLDING)
        if row.state == states.BOUND:
            self.assertIsNotNone(row.attach_handle_id)
        with db_api.main_context_manager.reader.using(ctx):
            held = ctx.session.query(models.AcceleratorRequest).filter(
                models.AcceleratorRequest.attach_handle_id.isnot(
                    None)).count()
            in_use = ctx.session.query(models.AttachHandle).filter_by(
                deployable_id=deployable_id, in_use=True).count()
        self.assertEqual(held, in_use)

    def _claim(self, uuid, model, deployable_id, free):
        """The conductor's claim: the model's outcome, or False."""
        allowed = model.state == states.BIND_STARTED and (model.held or
                                                          free > 0)
        self._apply(allowed, arq_db.claim_handle, uuid, deployable_id)
        if allowed:
            model.held = True
        return allowed

    def _apply(self, allowed, func, *args, **kwargs):
        if allowed:
            func(self.admin_context, *args, **kwargs)
        else:
            self.assertRaises(_REFUSED, func, self.admin_context, *args,
                              **kwargs)

    def _step(self, operation, uuid, model, state, deployable_id, free):
        """Apply one conductor change to the database and the model."""
        can = states.can_transition
        if operation in ('start', 'start_stale'):
            # A bind moves the ARQ from the state it saw, maybe stale.
            if operation == 'start':
                state = model.state
            allowed = state == model.state and can(state,
                                                   states.BIND_STARTED)
            instance = uuidutils.generate_uuid()
            self._apply(allowed, arq_db.start_binds, {uuid: (state, {
                'hostname': 'host1', 'instance_uuid': instance,
                'device_rp_uuid': uuidutils.generate_uuid()})})
            if allowed:
                model.state, model.instance = states.BIND_STARTED, instance
        elif operation == 'claim':
            self._claim(uuid, model, deployable_id, free)
        elif operation == 'bound':
            # The conductor claims a handle, then the ARQ is Bound.
            if self._claim(uuid, model, deployable_id, free):
                arq_db.update_state(self.admin_context, uuid, states.BOUND,
                                    expected=[states.BIND_STARTED])
                model.state = states.BOUND
                model.events += 1
        elif operation == 'bind_failed':
            allowed = model.state == states.BIND_STARTED
            self._apply(allowed, arq_db.bind_failed, uuid)
            if allowed:
                model.state, model.held = states.BIND_FAILED, False
                model.events += 1
        elif operation == 'unbind_failed':
            allowed = can(model.state, states.UNBIND_FAILED)
            self._apply(allowed, arq_db.update_state, uuid,
                        states.UNBIND_FAILED, expected=[model.state])
            if allowed:
                model.state = states.UNBIND_FAILED
        elif operation == 'unbind':
            allowed = can(model.state, states.UNBOUND)
            self._apply(allowed, arq_db.unbind, uuid)
            if allowed:
                model.state, model.held = states.UNBOUND, False
                model.instance = None

    @base.property_settings(60)
    @hypothesis.given(_steps(('start', 'start_stale', 'claim', 'bound',
                              'bind_failed', 'unbind_failed', 'unbind')))
    def test_conductor_changes(self, steps):
        ctx = self.admin_context
        _, deployable, _ = db_utils.create_device_tree(
            ctx, hostname=uuidutils.generate_uuid(), handles=HANDLES)
        arqs = [arq.uuid for arq in db_utils.create_arqs(
            ctx, self.profile, count=ARQS)]
        models_ = {uuid: Model() for uuid in arqs}
        for operation, index, state in steps:
            uuid = arqs[index]
            free = HANDLES - sum(m.held for m in models_.values())
            self._step(operation, uuid, models_[uuid], state,
                       deployable.id, free)
            for each in arqs:
                self._check_handles(each, models_[each], deployable.id)
        arq_db.delete_many(ctx, uuids=arqs)
        self._check_all_free(deployable.id)

    def _check_all_free(self, deployable_id):
        ctx = self.admin_context
        with db_api.main_context_manager.reader.using(ctx):
            self.assertEqual(0, ctx.session.query(
                models.AttachHandle).filter_by(deployable_id=deployable_id,
                                               in_use=True).count())

    @base.property_settings(60)
    @hypothesis.given(_steps((None,) + states.ALL_STATES))
    def test_only_the_table_s_transitions_succeed(self, steps):
        instance = uuidutils.generate_uuid()
        arqs = [arq.uuid for arq in db_utils.create_arqs(
            self.admin_context, self.profile, count=ARQS,
            instance_uuid=instance)]
        models_ = {uuid: Model(instance=instance) for uuid in arqs}
        for seen, index, target in steps:
            uuid = arqs[index]
            model = models_[uuid]
            # Narrowed to the state a caller saw, which may be stale.
            expected = [seen] if seen else None
            allowed = states.can_transition(model.state, target) and (
                seen in (None, model.state))
            self._apply(allowed, arq_db.update_state, uuid, target,
                        expected=expected)
            if allowed:
                model.state = target
                model.events += target in states.NOVA_EVENT_STATUS
            self._check(uuid, model)
