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
"""The accelerator request (ARQ) state machine: its one transition table.

Every ARQ state change in the database is a conditional UPDATE whose WHERE
clause is derived from this table, so two conductors can never both move one
ARQ out of the same state.
"""

INITIAL = 'Initial'
BIND_STARTED = 'BindStarted'
BOUND = 'Bound'
BIND_FAILED = 'BindFailed'
UNBOUND = 'Unbound'
UNBIND_FAILED = 'UnbindFailed'
DELETING = 'Deleting'

ALL_STATES = (INITIAL, BIND_STARTED, BOUND, BIND_FAILED, UNBOUND,
              UNBIND_FAILED, DELETING)

#: Nova waits for every ARQ of an instance to reach one of these.
RESOLVED_STATES = frozenset((BOUND, BIND_FAILED, DELETING))

#: The ``status`` of the ``accelerator-request-bound`` event Nova gets
#: when an ARQ reaches one of these states.
NOVA_EVENT_STATUS = {BOUND: 'completed', BIND_FAILED: 'failed'}
NOVA_EVENT_STATUSES = tuple(NOVA_EVENT_STATUS.values())

#: Source state -> states it may move to.
TRANSITIONS = {
    INITIAL: frozenset((BIND_STARTED, UNBOUND, DELETING)),
    BIND_STARTED: frozenset((BOUND, BIND_FAILED, UNBOUND, UNBIND_FAILED,
                             DELETING)),
    BOUND: frozenset((UNBOUND, UNBIND_FAILED, DELETING)),
    BIND_FAILED: frozenset((UNBOUND, UNBIND_FAILED, DELETING)),
    # An unshelved instance binds its ARQs again. Unbinding an Unbound
    # ARQ is no transition: the conductor leaves it as it is and the call
    # succeeds (cyborg.conductor.accelerator_request.start_binds).
    UNBOUND: frozenset((BIND_STARTED, DELETING)),
    # Releasing may be retried after it failed.
    UNBIND_FAILED: frozenset((UNBOUND, DELETING)),
    DELETING: frozenset(),
}


def sources_of(target):
    """Return the states from which an ARQ may move to target."""
    if target not in TRANSITIONS:
        raise ValueError('unknown accelerator request state %r' % target)
    return frozenset(src for src, dests in TRANSITIONS.items()
                     if target in dests)


def can_transition(source, target):
    return target in TRANSITIONS.get(source, ())


# Device status (API microversion 2.3).
DEVICE_ENABLED = 'enabled'
DEVICE_MAINTAINING = 'maintaining'
DEVICE_STATUSES = (DEVICE_ENABLED, DEVICE_MAINTAINING)

# Device health as its host's agent reports it (API microversion 2.9);
# ``unknown`` is what the API shows while no agent said.
DEVICE_HEALTHY = 'healthy'
DEVICE_UNHEALTHY = 'unhealthy'
DEVICE_HEALTH_UNKNOWN = 'unknown'
DEVICE_HEALTHS = (DEVICE_HEALTHY, DEVICE_UNHEALTHY)

# Device types the service knows about.
DEVICE_FPGA = 'FPGA'
DEVICE_TYPES = (DEVICE_FPGA, 'GPU', 'AICHIP', 'QAT', 'NIC', 'SSD', 'MDEV',
                'PCI', 'NVME')

# Ways an accelerator is handed to an instance.
ATTACH_PCI = 'PCI'
ATTACH_MDEV = 'MDEV'
ATTACH_TEST_PCI = 'TEST_PCI'
ATTACH_TYPES = (ATTACH_PCI, ATTACH_MDEV, ATTACH_TEST_PCI)
#: Attach types that hand out a whole PCI function, which one handle only
#: may give out (see :mod:`cyborg.conductor.inventory_plan.functions`).
ATTACH_PCI_FUNCTION_TYPES = (ATTACH_PCI, ATTACH_TEST_PCI)

# Control path identifiers (how the host reaches the device).
CPID_PCI = 'PCI'
CPID_TYPES = (CPID_PCI,)
