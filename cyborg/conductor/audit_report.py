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
"""What ``cyborg-manage audit`` found: the kinds of finding and the report.

The kinds are documented in ``doc/source/admin/audit.rst``;
:mod:`cyborg.conductor.audit` finds them. A report crosses RPC as
:meth:`Report.as_dict` (``--heal`` runs in a conductor) and is printed
from that by ``cyborg-manage``.
"""

import dataclasses

ORPHANED_ARQ = 'orphaned_arq'
ALLOCATION_WITHOUT_ARQ = 'allocation_without_arq'
HANDLE_WITHOUT_ARQ = 'handle_without_arq'
PROVIDER_WITHOUT_DEVICE = 'provider_without_device'
VANISHED_DEVICE = 'vanished_device'
INVENTORY_DRIFT = 'inventory_drift'
#: In the order they are checked and repaired: an ARQ unbound first
#: frees its handle, and a provider is synced once its strays are gone.
KINDS = (ORPHANED_ARQ, HANDLE_WITHOUT_ARQ, VANISHED_DEVICE,
         ALLOCATION_WITHOUT_ARQ, PROVIDER_WITHOUT_DEVICE, INVENTORY_DRIFT)

DATABASE, PLACEMENT, NOVA = 'database', 'placement', 'nova'
SOURCES = (DATABASE, PLACEMENT, NOVA)


@dataclasses.dataclass
class Finding:
    """One disagreement between the sources.

    ``repair`` makes it right and returns what it did, or is None where
    no repair is safe: ``advice`` then says what the operator must do.
    ``action`` says what ``--heal`` would do; after :meth:`Audit.heal`,
    what it did, and ``repaired`` whether the finding is gone.
    """

    kind: str
    object: str
    host: str
    detail: str
    advice: str = ''
    repair: object = dataclasses.field(default=None, repr=False)
    action: str = ''
    repaired: bool = False

    def as_dict(self):
        return {'kind': self.kind, 'object': self.object,
                'host': self.host, 'detail': self.detail,
                'repairable': self.repair is not None,
                'action': self.action, 'repaired': self.repaired}


@dataclasses.dataclass
class Report:
    """What an audit found, and which sources it could not read.

    ``unchecked`` maps a source (:data:`SOURCES`) to why it could not be
    read; the checks that needed it were skipped.
    """

    findings: list = dataclasses.field(default_factory=list)
    unchecked: dict = dataclasses.field(default_factory=dict)
    #: Why ``--heal`` changed nothing, when it refused to.
    refused: str = ''

    @property
    def remaining(self):
        return [f for f in self.findings if not f.repaired]

    def exit_status(self):
        """0 all agree, 1 findings remain, 2 a source could not be read."""
        if self.unchecked:
            return 2
        return 1 if self.remaining else 0

    def as_dict(self):
        return {'sources': {name: {'checked': name not in self.unchecked,
                                   'reason': self.unchecked.get(name)}
                            for name in SOURCES},
                'findings': [f.as_dict() for f in self.findings],
                'heal_refused': self.refused or None,
                'exit_status': self.exit_status()}
