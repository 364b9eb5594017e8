"""The facade calls behind curation steps. Runs on the database worker thread only.

Every change goes through the `StrataGate` facade with its journal entries, so the mutation and its journal
entries commit in one transaction. Applying a step and undoing it are the same move: from the state stored now
to the step's goal (`actions.goal_state`), with the fewest changes; an action on a selection is one commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from stratagate.errors import UnknownIdError
from stratagate.journal import new_entry
from stratagate.memory import BlockLift, BlockPointer, EventCuration
from stratagate.model import Event
from stratagate_gui.curation.actions import Action, EventState, Step, goal_state, journal_entry

if TYPE_CHECKING:
    from stratagate.memory import StrataGate


def load_events(memory: StrataGate, event_ids: Sequence[str]) -> list[Event]:
    """The events, in the order asked; an unknown id raises `UnknownIdError` naming it."""
    return [memory.get_event(event_id) for event_id in event_ids]


def current_states(memory: StrataGate, event_ids: Sequence[str]) -> dict[str, EventState | None]:
    """What is stored now (after `memory.refresh()`), None for an event that no longer exists."""
    states: dict[str, EventState | None] = {}
    for event_id in event_ids:
        try:
            states[event_id] = EventState.of(memory.get_event(event_id))
        except UnknownIdError:
            states[event_id] = None
    return states


def write_correction(memory: StrataGate, card: dict[str, Any], steps: Sequence[Step], actor: str) -> None:
    """Add the corrected card superseding the steps' events: one mutation, one journal entry."""
    card_step, *replaced = steps
    first = memory.get_event(replaced[0].event_id)
    entry = new_entry(
        actor,
        Action.CORRECT.value,
        [card_step.event_id, *(step.event_id for step in replaced)],
        {step.event_id: step.before.to_json() for step in replaced},
        {step.event_id: step.after.to_json() for step in steps},
    )
    memory.add_event(
        card["title"],
        card["summary"],
        narrative=card.get("narrative", ""),
        criticality=card.get("criticality", "routine"),
        source_block_id=first.source_block_id,
        id=card_step.event_id,
        supersedes=[step.event_id for step in replaced],
        journal_entry=entry,
    )


def transition_changes(event_id: str, start: EventState, goal: EventState) -> list[EventCuration]:
    """The facade changes that move an event from `start` to `goal`.

    Supersession first (it may change the status as the engine defines), then status, then the pin."""
    changes: list[EventCuration] = []
    status = start.status
    if (start.superseded_by, start.forced_cap) != (goal.superseded_by, goal.forced_cap):
        if goal.superseded_by is None:
            changes.append(EventCuration("unsupersede", event_id))
            status = "active" if status == "superseded" else status
        else:
            changes.append(EventCuration("supersede", event_id, goal.superseded_by))
            status = status if status in ("forgotten", "archived") else "superseded"
    if status != goal.status:
        changes.append(EventCuration(_STATUS_ACTIONS.get(goal.status, "restore"), event_id))
    if start.pinned != goal.pinned:
        changes.append(EventCuration("pin" if goal.pinned else "unpin", event_id))
    return changes


_STATUS_ACTIONS = {"forgotten": "forget", "archived": "archive"}
"""'active' and 'superseded' are both "restore": the engine brings back a superseded event as superseded."""


def move_all(memory: StrataGate, steps: Sequence[Step], actor: str, undo: bool) -> int:
    """Move every step's event to its goal (see `goal_state`) in one commit, in reverse order when undoing;
    returns how many steps wrote.

    Each step starts from the state stored now, so a retry after a conflict converges instead of repeating
    changes, and keeps what another writer changed meanwhile: an event already at its goal needs no change and
    gets no journal entry. One facade call writes every change and one journal entry per moved step, so a
    multi-event action is one revision, and a conflict writes none of it."""
    ordered = list(reversed(steps)) if undo else list(steps)
    changes: list[EventCuration] = []
    entries: list[dict[str, Any]] = []
    for step in ordered:
        current = EventState.of(memory.get_event(step.event_id))
        goal = goal_state(step, current, undo)
        step_changes = transition_changes(step.event_id, current, goal)
        if step_changes:
            changes += step_changes
            entries.append(journal_entry(step, actor, current, goal, undo))
    if changes:
        # Only an undo restores the events' earlier updatedAt: it brings them back to the state they had,
        # while an action or a redo is a new change and gets a new stamp.
        originals = [step.original for step in steps if undo and step.original is not None]
        memory.curate_events(changes, journal_entries=entries, restore_stamps_from=originals)
    return len(entries)


def lift_block(memory: StrataGate, block_id: str, level: int, actor: str) -> BlockLift:
    """Lift a block for the user: the exact pointer written and its journal entry commit together."""
    before = BlockPointer.of(memory.get_block(block_id))
    after = memory.lift_pointer(block_id, level, "user")
    entry = new_entry(actor, "lift", [block_id], before.to_json(), after.to_json())
    return memory.set_block_pointer(block_id, after, journal_entry=entry)


def move_block_pointer(memory: StrataGate, block_id: str, goal: BlockPointer, actor: str, undo: bool) -> bool:
    """Put the block's pointer at `goal` exactly (the undo or redo of a lift); returns whether it wrote."""
    current = BlockPointer.of(memory.get_block(block_id))
    if current == goal:
        return False
    entry = new_entry(actor, "undo lift" if undo else "lift", [block_id], current.to_json(), goal.to_json())
    memory.set_block_pointer(block_id, goal, journal_entry=entry)
    return True
