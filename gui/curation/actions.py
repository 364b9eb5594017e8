"""What a curation action does to each event, before it is done: the plan behind the preview and the undo.

A `Step` is one action on one event with the event's curation state before and after. Applying a step calls
the engine facade once, with a journal entry, so the mutation and its journal entry commit together; reverting
it calls the facade's inverse with the exact previous state. Nothing here touches Qt: the commands and dialogs
build on these plans.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from stratagate.errors import StrataGateError
from stratagate.journal import new_entry
from stratagate.model import Event, EventWeight
from stratagate.weights import SUPERSEDED_CAP, criticality_floor, weight_at


class Action(StrEnum):
    PIN = "pin"
    UNPIN = "unpin"
    FORGET = "forget"
    RESTORE = "restore"
    ARCHIVE = "archive"
    SUPERSEDE = "supersede"
    CORRECT = "correct"
    """Write a corrected card that supersedes the selected events."""
    TOGGLE_PIN = "toggle pin"
    """Unpin when every selected event is pinned, else pin (resolved by `resolve`)."""
    TOGGLE_FORGET = "toggle forget"
    """Restore when every selected event is forgotten, else forget."""


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

    def __str__(self) -> str:
        """How the conflict dialog names the state: "superseded, pinned, by evt_87"."""
        parts = [self.status]
        if self.pinned:
            parts.append("pinned")
        if self.superseded_by:
            parts.append(f"by {self.superseded_by}")
        return ", ".join(parts)

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
    creates: bool = False
    """The step of a corrected card: it does not exist before the action. Undoing archives it (nothing is
    ever deleted) and redoing restores it, so `before` says archived."""
    original: Event | None = field(default=None, compare=False, repr=False)
    """The whole event as planned, before the action: an undo that brings it back exactly restores its
    `updatedAt` too (see `StrataGate.curate_events`)."""

    def weights(self, turn: int) -> tuple[float, float]:
        return self.before.weight_at(turn), self.after.weight_at(turn)

    @property
    def changes_anything(self) -> bool:
        return self.before.to_json() != self.after.to_json()


def action_title(steps: list[Step]) -> str:
    action = LABELS[steps[0].action] if steps else "Curate"
    return f"{action} {steps[0].event_id}" if len(steps) == 1 else f"{action} {len(steps)} events"


def resolve(action: Action, events: list[Event]) -> Action:
    """The action a toggle stands for on these events; other actions stand for themselves."""
    if action is Action.TOGGLE_PIN:
        return Action.UNPIN if events and all(event.weight.pinned for event in events) else Action.PIN
    if action is Action.TOGGLE_FORGET:
        return (
            Action.RESTORE
            if events and all(event.status == "forgotten" for event in events)
            else Action.FORGET
        )
    return action


def plan(action: Action, events: Iterable[Event], replacement_id: str | None = None) -> list[Step]:
    """The steps of `action` on `events`. Events the action would not change are left out (pinning a pinned
    event), so the preview, the journal and the undo stack only hold real changes."""
    if action in (Action.SUPERSEDE, Action.CORRECT) and not replacement_id:
        raise CurationError(f"{action.value} needs the id of the replacing event")
    steps = []
    for event in events:
        before = EventState.of(event)
        after = _after(action, event, before, replacement_id)
        step = Step(action, event.id, event.title, before, after, replacement_id, original=event)
        if step.changes_anything:
            steps.append(step)
    return steps


def plan_correction(events: list[Event], card: dict[str, Any], turn: int) -> list[Step]:
    """The steps of writing `card` (which carries its new `id`) to supersede `events`: the card first."""
    if not events:
        raise CurationError("a corrected card must supersede at least one event")
    weight = EventWeight(
        last_adopted_turn=turn, floor_weight=criticality_floor(card.get("criticality", "routine"))
    )
    card_after = EventState("active", False, None, None, weight)
    card_step = Step(
        Action.CORRECT,
        card["id"],
        card["title"],
        replace(card_after, status="archived"),
        card_after,
        creates=True,
    )
    return [card_step, *plan(Action.CORRECT, events, card["id"])]


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
    # The engine keeps a forgotten or archived event hidden when it is superseded.
    status = before.status if before.status in ("forgotten", "archived") else "superseded"
    return replace(before, status=status, superseded_by=replacement_id, forced_cap=SUPERSEDED_CAP)


def goal_state(step: Step, current: EventState, undo: bool = False) -> EventState:
    """Where a step takes an event from its stored state `current`: only the fields the action is about
    change, so a change another writer made meanwhile to other fields is kept (nothing is lost on retry).
    Statuses follow the engine's rules: restore brings a replaced event back as superseded, and supersession
    leaves a forgotten or archived event hidden."""
    target = step.before if undo else step.after
    if step.action in (Action.PIN, Action.UNPIN):
        return replace(current, pinned=target.pinned)
    if step.creates or step.action in (Action.FORGET, Action.ARCHIVE, Action.RESTORE):
        status = target.status
        if status in ("active", "superseded"):
            status = "superseded" if current.superseded_by else "active"
        return replace(current, status=status)
    if target.superseded_by is None:
        status = "active" if current.status == "superseded" else current.status
    else:
        status = current.status if current.status in ("forgotten", "archived") else "superseded"
    return replace(current, status=status, superseded_by=target.superseded_by, forced_cap=target.forced_cap)


def journal_entry(
    step: Step, actor: str, current: EventState, goal: EventState, undo: bool = False
) -> dict[str, Any]:
    """The journal entry of moving a step's event from its stored state to its goal (or back, for undo)."""
    ids = [step.event_id] + ([step.replacement_id] if step.replacement_id else [])
    action = f"undo {step.action.value}" if undo else step.action.value
    return new_entry(actor, action, ids, current.to_json(), goal.to_json())
