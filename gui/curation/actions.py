"""What a curation action does to each event, before it is done: the plan behind the preview and the undo.

A `Step` is one action on one event with the event's curation state before and after. Applying a step calls
the engine facade once, with a journal entry, so the mutation and its journal entry commit together; reverting
it calls the facade's inverse with the exact previous state. Nothing here touches Qt: the commands and dialogs
build on these plans.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from stratagate.errors import StrataGateError
from stratagate.journal import new_entry
from stratagate.model import Event, EventWeight
from stratagate.weights import SUPERSEDED_CAP, weight_at


class Action(StrEnum):
    PIN = "pin"
    UNPIN = "unpin"
    FORGET = "forget"
    RESTORE = "restore"
    ARCHIVE = "archive"
    SUPERSEDE = "supersede"
    CORRECT = "correct"
    """Write a corrected card that supersedes the selected events."""


LABELS = {
    Action.PIN: "Pin",
    Action.UNPIN: "Unpin",
    Action.FORGET: "Forget",
    Action.RESTORE: "Restore",
    Action.ARCHIVE: "Archive",
    Action.SUPERSEDE: "Supersede",
    Action.CORRECT: "Correct",
}


class CurationError(StrataGateError):
    """A curation action cannot apply to the selection (names the event and why)."""


@dataclass(frozen=True)
class EventState:
    """The part of an event that curation changes, plus what the weight formula needs."""

    status: str
    pinned: bool
    superseded_by: str | None
    forced_cap: float | None
    weight: EventWeight

    @classmethod
    def of(cls, event: Event) -> EventState:
        return cls(
            event.status, event.weight.pinned, event.superseded_by, event.weight.forced_cap, event.weight
        )

    def weight_at(self, turn: int) -> float:
        weight = replace(self.weight, pinned=self.pinned, forced_cap=self.forced_cap)
        return weight_at(weight, self.status, turn)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "pinned": self.pinned,
            "supersededBy": self.superseded_by,
            "forcedCap": self.forced_cap,
        }


@dataclass(frozen=True)
class Step:
    """One action on one event: the preview row, the journal entry's before/after, and what undo restores."""

    action: Action
    event_id: str
    title: str
    before: EventState
    after: EventState
    replacement_id: str | None = None
    """The superseding event (supersede and correct)."""

    def weights(self, turn: int) -> tuple[float, float]:
        return self.before.weight_at(turn), self.after.weight_at(turn)

    @property
    def changes_anything(self) -> bool:
        return self.before.to_json() != self.after.to_json()


def plan(action: Action, events: Iterable[Event], replacement_id: str | None = None) -> list[Step]:
    """The steps of `action` on `events`. Events the action would not change are left out (pinning a pinned
    event), so the preview, the journal and the undo stack only hold real changes."""
    if action in (Action.SUPERSEDE, Action.CORRECT) and not replacement_id:
        raise CurationError(f"{action.value} needs the id of the replacing event")
    steps = []
    for event in events:
        before = EventState.of(event)
        after = _after(action, event, before, replacement_id)
        step = Step(action, event.id, event.title, before, after, replacement_id)
        if step.changes_anything:
            steps.append(step)
    return steps


def _after(action: Action, event: Event, before: EventState, replacement_id: str | None) -> EventState:
    if action is Action.PIN:
        return replace(before, pinned=True)
    if action is Action.UNPIN:
        return replace(before, pinned=False)
    if action is Action.FORGET:
        return replace(before, status="forgotten")
    if action is Action.ARCHIVE:
        return replace(before, status="archived")
    if action is Action.RESTORE:
        # A superseded event that was forgotten or archived comes back superseded: its replacement still holds.
        return replace(before, status="superseded" if before.superseded_by else "active")
    if event.id == replacement_id:
        raise CurationError(f"event {event.id} cannot supersede itself")
    return replace(before, status="superseded", superseded_by=replacement_id, forced_cap=SUPERSEDED_CAP)


def journal_entry(step: Step, actor: str, undo: bool = False) -> dict[str, Any]:
    """The journal entry of applying (or undoing) a step: undo swaps before and after."""
    ids = [step.event_id] + ([step.replacement_id] if step.replacement_id else [])
    before, after = (step.after, step.before) if undo else (step.before, step.after)
    action = f"undo {step.action.value}" if undo else step.action.value
    return new_entry(actor, action, ids, before.to_json(), after.to_json())
