"""Event cards: turning caller or extractor input into a card, supersession, and curation status changes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stratagate.errors import DuplicateIdError, InvalidInputError, UnknownIdError
from stratagate.model import (
    CRITICALITIES,
    EVENT_SCOPES,
    Event,
    EventTemporal,
    EventWeight,
)
from stratagate.state import Mutation
from stratagate.validation import (
    MAX_TITLE_LENGTH,
    optional_id,
    optional_str,
    require_choice,
    require_number,
    require_str,
    require_str_list,
    unique_in_order,
)
from stratagate.weights import SUPERSEDED_CAP, criticality_floor

MAX_TAGS = 12
MAX_QUOTES = 12
_TEMPORAL_STRINGS = ("mentioned_at", "happened_start", "happened_end", "precision", "basis", "status",
                     "event_type", "original_text", "same_event_id", "thread_id")
_TEMPORAL_LISTS = ("participants", "supersedes_event_ids", "conflicts_with_event_ids", "before_event_ids",
                   "after_event_ids")
_INPUT_ALIASES = {"sourceMessageIds": "source_message_ids", "sourceBlockId": "source_block_id"}


@dataclass
class EventInput:
    """A validated event card request (from `add_event` or an extractor)."""

    title: str
    summary: str
    narrative: str
    tags: list[str]
    quotes: list[str]
    source_message_ids: list[str]
    source_block_id: str | None
    temporal: EventTemporal | None
    scope: str
    criticality: str
    confidence: float
    id: str | None


def coerce_temporal(value: Any, field: str = "temporal") -> EventTemporal | None:
    """An EventTemporal from an EventTemporal or a camelCase (or snake_case) dict, type-checked."""
    if value is None:
        return None
    if isinstance(value, EventTemporal):
        temporal = EventTemporal.from_record(value.to_record())
    elif isinstance(value, Mapping):
        record = dict(value)
        snake_to_camel = {"mentioned_at": "mentionedAt", "happened_start": "happenedStart", "happened_end": "happenedEnd",
                          "event_type": "eventType", "original_text": "originalText",
                          "supersedes_event_ids": "supersedesEventIds", "conflicts_with_event_ids": "conflictsWithEventIds",
                          "same_event_id": "sameEventId", "before_event_ids": "beforeEventIds",
                          "after_event_ids": "afterEventIds", "thread_id": "threadId"}
        for snake, camel in snake_to_camel.items():
            if snake in record:
                record[camel] = record.pop(snake)
        temporal = EventTemporal.from_record(record)
    else:
        raise InvalidInputError(f"{field} must be an object, got {type(value).__name__}")
    for name in _TEMPORAL_STRINGS:
        optional_str(getattr(temporal, name), f"{field}.{name}", max_length=MAX_TITLE_LENGTH)
    for name in _TEMPORAL_LISTS:
        items = getattr(temporal, name)
        if items is not None:
            require_str_list(items, f"{field}.{name}")
    return temporal


def event_input(data: Mapping[str, Any], field: str = "event") -> EventInput:
    """Validate an event request given as keyword-style data (snake_case, or the reference's camelCase)."""
    values = {_INPUT_ALIASES.get(key, key): value for key, value in data.items()}
    known = {"title", "summary", "narrative", "tags", "quotes", "source_message_ids", "source_block_id",
             "temporal", "scope", "criticality", "confidence", "id"}
    unknown = set(values) - known
    if unknown:
        raise InvalidInputError(f"{field}: unknown field(s) {', '.join(sorted(unknown))}")
    title = require_str(values.get("title"), f"{field}.title", max_length=MAX_TITLE_LENGTH).strip()
    summary = require_str(values.get("summary", ""), f"{field}.summary").strip()
    narrative = require_str(values.get("narrative") or "", f"{field}.narrative").strip() or summary
    confidence = values.get("confidence")
    confidence = 1.0 if confidence is None else min(1.0, max(0.0, require_number(confidence, f"{field}.confidence")))
    return EventInput(
        title=title,
        summary=summary,
        narrative=narrative,
        tags=unique_in_order(require_str_list(values.get("tags") or [], f"{field}.tags"))[:MAX_TAGS],
        quotes=unique_in_order(require_str_list(values.get("quotes") or [], f"{field}.quotes"))[:MAX_QUOTES],
        source_message_ids=require_str_list(values.get("source_message_ids") or [], f"{field}.source_message_ids"),
        source_block_id=optional_id(values.get("source_block_id"), f"{field}.source_block_id"),
        temporal=coerce_temporal(values.get("temporal"), f"{field}.temporal"),
        scope=require_choice(values.get("scope") or "user", f"{field}.scope", EVENT_SCOPES),
        criticality=require_choice(values.get("criticality") or "routine", f"{field}.criticality", CRITICALITIES),
        confidence=confidence,
        id=optional_id(values.get("id"), f"{field}.id"),
    )


def add_event(tx: Mutation, data: EventInput, *, event_id: str, source_block_id: str, now: str,
              strict_supersedes: bool = False) -> Event:
    """Create the card in `tx` (the reference's addEventInMemory), superseding the events it names."""
    if tx.get("events", event_id) is not None:
        raise DuplicateIdError(f"Duplicate event ID: {event_id}")
    block = tx.get("blocks", source_block_id)
    if block is None:
        raise UnknownIdError(f"Unknown source block: {source_block_id}")
    block_messages = [message.id for message in block.l5_raw]
    allowed = set(block_messages)
    cited = unique_in_order(message_id for message_id in data.source_message_ids if message_id in allowed)
    temporal = data.temporal or EventTemporal(mentioned_at=now)
    event = Event(
        id=event_id, title=data.title, summary=data.summary, narrative=data.narrative, tags=list(data.tags),
        quotes=list(data.quotes), source_message_ids=cited or block_messages, source_block_id=source_block_id,
        temporal=temporal, scope=data.scope, criticality=data.criticality, confidence=data.confidence,
        status="active", superseded_by=None,
        weight=EventWeight(mention_count=1, last_adopted_turn=tx.current_turn, floor_weight=criticality_floor(data.criticality)),
        created_at=now, updated_at=now,
    )
    tx.put("events", event)
    for old_id in temporal.supersedes_event_ids or []:
        if old_id == event_id:
            continue
        if tx.get("events", old_id) is None:
            if strict_supersedes:
                raise UnknownIdError(f"Unknown event to supersede: {old_id}")
            continue
        supersede(tx, old_id, event_id, now)
    return event


def supersede(tx: Mutation, old_id: str, new_id: str, now: str) -> Event:
    """Mark `old_id` superseded by `new_id` (capped at 0.1). A forgotten or archived event keeps that status:
    supersession never brings back something a person chose to hide (the reference did, §11.13)."""
    old = tx.edit("events", old_id)
    if old is None:
        raise UnknownIdError(f"Unknown event: {old_id}")
    if old.status not in ("forgotten", "archived"):
        old.status = "superseded"
    old.superseded_by = new_id
    old.weight.forced_cap = SUPERSEDED_CAP
    old.updated_at = now
    return old


def edit_event(tx: Mutation, event_id: str) -> Event:
    event = tx.edit("events", event_id)
    if event is None:
        raise UnknownIdError(f"Unknown event: {event_id}")
    return event


def set_status(tx: Mutation, event_id: str, status: str, now: str) -> Event:
    event = edit_event(tx, event_id)
    event.status = status
    event.updated_at = now
    return event


def restore(tx: Mutation, event_id: str, now: str) -> Event:
    """Undo forget/archive: back to 'superseded' if a newer event replaced it, else 'active'."""
    event = edit_event(tx, event_id)
    event.status = "superseded" if event.superseded_by else "active"
    event.updated_at = now
    return event


def unsupersede(tx: Mutation, event_id: str, now: str) -> Event:
    """Undo a supersession: active again, without the cap (the reference's restoreEvent kept the cap)."""
    event = edit_event(tx, event_id)
    if event.status == "superseded":
        event.status = "active"
    event.superseded_by = None
    event.weight.forced_cap = None
    event.updated_at = now
    return event

