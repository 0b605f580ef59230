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
"""The one plain model of a host's inventory between its report and its rows.

A host's agent reports its tree as wire objects
(:class:`cyborg.objects.driver_report.HostReport`); the conductor turns
them into the plain tree below (:class:`ReportedDevice` and what it
holds), matches it against the host's rows and says what to write: a
:class:`Plan` (:mod:`cyborg.conductor.inventory_plan`). The database layer
writes the plan as it is (:mod:`cyborg.db.inventory`): it decides nothing.
Both sides read this module, which holds data and no rule.
"""

import collections
import dataclasses
import typing


# --- the report --------------------------------------------------------------

class ReportedHandle(typing.TypedDict):
    """An attach handle as its host reports it."""

    attach_type: str
    attach_info: dict
    in_use: bool


class ReportedDeployable(typing.TypedDict):
    """A deployable as its host reports it; ``attributes`` are (key, value)."""

    name: str
    parent_name: typing.Optional[str]
    num_accelerators: int
    driver_name: str
    bitstream_id: typing.Optional[str]
    attributes: list
    attach_handles: typing.List[ReportedHandle]


class ReportedDevice(typing.TypedDict):
    """A device as its host reports it, with its control path."""

    type: str
    vendor: str
    model: str
    std_board_info: typing.Optional[str]
    vendor_board_info: typing.Optional[str]
    cpid_type: str
    cpid_info: dict
    deployables: typing.List[ReportedDeployable]


# --- the plan ----------------------------------------------------------------

class Ref(typing.NamedTuple):
    """The id of a row that the plan adds, by table and key.

    ``key`` is a device's PCI address in ``devices`` and
    ``controlpath_ids``, a deployable's name in ``deployables``.
    """

    table: str
    key: str


class New(typing.NamedTuple):
    """A row to insert; ``ref`` names it for rows that refer to it.

    ``values`` are its columns but its uuid (and a device's host name);
    a :class:`Ref` stands for the id of another new row.
    """

    ref: typing.Optional[Ref]
    values: dict


class Update(typing.NamedTuple):
    """The columns of row ``id`` that change, with their new values."""

    id: int
    values: dict


@dataclasses.dataclass(frozen=True)
class Changes:
    """What to write to one table.

    ``insert`` holds one tuple of :class:`New` rows per INSERT statement,
    in order: a deployable is inserted after its parent, which gives it
    its id. ``delete`` holds the ids of rows to delete.
    """

    insert: tuple = ()
    update: tuple = ()
    delete: tuple = ()


#: A held handle no longer reported, kept until its ARQ releases it.
KeptHandle = collections.namedtuple('KeptHandle', 'uuid deployable arq_uuid')
#: A device no longer reported, kept while ARQs hold it; ``mark`` says
#: whether to set its ``vanished_at`` (it is not set yet).
Vanishing = collections.namedtuple('Vanishing', 'id uuid arq_uuids mark')


@dataclasses.dataclass(frozen=True)
class InventoryDiff:
    """What applying a report did, by deployable name.

    ``changed`` lists deployables whose row, attributes, attach handles or
    device changed; ``vanished`` those no longer reported but kept because
    accelerator requests hold them. ``devices_added`` and
    ``devices_removed`` hold the devices that were inserted and deleted
    (set once the plan is written, which gives new rows their uuids).
    """

    added: tuple = ()
    removed: tuple = ()
    changed: tuple = ()
    vanished: tuple = ()
    devices_added: tuple = ()
    devices_removed: tuple = ()

    def __bool__(self):
        return bool(self.added or self.removed or self.changed)

    def __str__(self):
        return ('%d added, %d removed, %d changed, %d vanished deployable(s)'
                % (len(self.added), len(self.removed), len(self.changed),
                   len(self.vanished)))


@dataclasses.dataclass(frozen=True)
class Plan:
    """What to write, table by table, and what to tell.

    ``in_use`` holds (handle id, in use) for handles no ARQ holds whose
    use follows the host's; ``reappeared`` (device uuid, PCI address) for
    vanished devices reported again.
    """

    devices: Changes = Changes()
    control_paths: Changes = Changes()
    deployables: Changes = Changes()
    attributes: Changes = Changes()
    attach_handles: Changes = Changes()
    in_use: tuple = ()
    reappeared: tuple = ()
    kept_handles: tuple = ()
    vanishing: tuple = ()
    diff: InventoryDiff = InventoryDiff()
