"""The facade calls behind curation steps. Runs on the database worker thread only.

Every change goes through the `StrataGate` facade with a journal entry, so the mutation and its journal entry
commit in one transaction. Applying a step and undoing it are the same move: from the state stored now to the
step's goal (`actions.goal_state`), with the fewest facade calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from stratagate.errors import UnknownIdError
from stratagate.journal import new_entry
from stratagate.memory import BlockLift, BlockPointer
from stratagate.model import Event
from stratagate_gui.curation.actions import Action, EventState, Step, goal_state, journal_entry

Memory = Any
"""A `stratagate.StrataGate`: typed loosely so this module does not pin the facade's import path."""


def load_events(memory: Memory, event_ids: Sequence[str]) -> list[Event]:
    """The events, in the order asked; an unknown id raises `UnknownIdError` naming it."""
    return [memory.get_event(event_id) for event_id in event_ids]


def current_states(memory: Memory, event_ids: Sequence[str]) -> dict[str, EventState | None]:
    """What is stored now (after `memory.refresh()`), None for an event that no longer exists."""
    states: dict[str, EventState | None] = {}
    for event_id in event_ids:
        try:
            states[event_id] = EventState.of(memory.get_event(event_id))
        except UnknownIdError:
            states[event_id] = None
    return states


def write_correction(memory: Memory, card: dict[str, Any], steps: Sequence[Step], actor: str) -> None:
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


def transition_calls(
    memory: Memory, event_id: str, start: EventState, goal: EventState
) -> list[Callable[..., Any]]:
    """The facade calls (each taking `journal_entry=`) that move an event from `start` to `goal`.

    Supersession first (it may change the status as the engine defines), then status, then the pin."""
    calls: list[Callable[..., Any]] = []
    status = start.status
    if (start.superseded_by, start.forced_cap) != (goal.superseded_by, goal.forced_cap):
        if goal.superseded_by is None:
            calls.append(lambda **journal: memory.unsupersede_event(event_id, **journal))
            status = "active" if status == "superseded" else status
        else:
            target = goal.superseded_by
            calls.append(lambda **journal: memory.supersede_event(event_id, target, **journal))
            status = status if status in ("forgotten", "archived") else "superseded"
    if status != goal.status:
        calls.append(_status_call(memory, event_id, goal.status))
    if start.pinned != goal.pinned:
        pinned = goal.pinned
        calls.append(lambda **journal: memory.pin_event(event_id, pinned=pinned, **journal))
    return calls


def _status_call(memory: Memory, event_id: str, status: str) -> Callable[..., Any]:
    if status == "forgotten":
        return lambda **journal: memory.forget_event(event_id, **journal)
    if status == "archived":
        return lambda **journal: memory.archive_event(event_id, **journal)
    # 'active' and 'superseded' are both "restore": the engine brings back a superseded event as superseded.
    return lambda **journal: memory.restore_event(event_id, **journal)


def move(memory: Memory, step: Step, actor: str, undo: bool) -> bool:
    """Move the event to the step's goal (see `goal_state`) from whatever is stored now.

    Starting from the stored state makes a retry after a conflict, or after a partial failure, converge
    instead of repeating calls, and keeps what another writer changed meanwhile: an event already at its goal
    needs no call and gets no journal entry. The journal entry rides on the last call, the one that completes
    the step. Returns whether it wrote."""
    current = EventState.of(memory.get_event(step.event_id))
    goal = goal_state(step, current, undo)
    calls = transition_calls(memory, step.event_id, current, goal)
    for index, call in enumerate(calls):
        last = index == len(calls) - 1
        call(journal_entry=journal_entry(step, actor, current, goal, undo) if last else None)
    return bool(calls)


def move_all(memory: Memory, steps: Sequence[Step], actor: str, undo: bool) -> int:
    """Move every step (in reverse order when undoing); returns how many steps wrote.

    A failure (a conflict with another writer) stops the walk and propagates; the steps already moved stay
    committed with their journal entries, and moving the same steps again finishes the rest."""
    ordered = list(reversed(steps)) if undo else list(steps)
    return sum(move(memory, step, actor, undo) for step in ordered)


def lift_block(memory: Memory, block_id: str, level: int, actor: str) -> BlockLift:
    """Lift a block for the user: the exact pointer written and its journal entry commit together."""
    before = BlockPointer.of(memory.get_block(block_id))
    after = memory.lift_pointer(block_id, level, "user")
    entry = new_entry(actor, "lift", [block_id], before.to_json(), after.to_json())
    return memory.set_block_pointer(block_id, after, journal_entry=entry)


def move_block_pointer(memory: Memory, block_id: str, goal: BlockPointer, actor: str, undo: bool) -> bool:
    """Put the block's pointer at `goal` exactly (the undo or redo of a lift); returns whether it wrote."""
    current = BlockPointer.of(memory.get_block(block_id))
    if current == goal:
        return False
    entry = new_entry(actor, "undo lift" if undo else "lift", [block_id], current.to_json(), goal.to_json())
    memory.set_block_pointer(block_id, goal, journal_entry=entry)
    return True
