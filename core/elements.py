"""Element projection (the reference's applyElementChanges), state rendering, and time views (expand at T)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from stratagate.model import (
    ELEMENT_TYPES,
    FACT_MODES,
    Element,
    ElementFact,
    ElementProjectionJob,
    EventWeight,
)
from stratagate.search.tokenize import normalize_search_text
from stratagate.state import Mutation
from stratagate.text import compact, string_list
from stratagate.timeutil import parse_js_date

OPERATION_FOR_MODE = {"state": "set_state", "set": "add_set_item", "relation": "set_relation"}
_CHANGE_ALIASES = {"sourceEventIds": "source_event_ids", "validFrom": "valid_from", "validTo": "valid_to"}


def render_element_state(facts: Sequence[ElementFact], include_historical: bool = False) -> str:
    """`key: value` lines: state/relation facts in order, then set facts merged per key."""
    lines: list[str] = []
    sets: dict[str, list[str]] = {}
    for fact in facts:
        if not include_historical and fact.status != "active":
            continue
        values = fact.value if isinstance(fact.value, list) else [fact.value]
        if fact.mode == "set":
            merged = sets.setdefault(fact.key, [])
            merged.extend(value for value in values if value not in merged)
        else:
            lines.append(f"{fact.key}: {', '.join(values)}")
    lines.extend(f"{key}: {', '.join(values)}" for key, values in sets.items())
    return "\n".join(lines)


def _bound(value: str | None, missing: float) -> float:
    parsed = parse_js_date(value) if value else None
    return missing if parsed is None else parsed


def element_view_at(element: Element, at: str | None) -> Element:
    """A copy of the element as it stood at `at`: facts of any status valid at that instant (bounds inclusive;
    a missing or unreadable bound is open). No `at`, or an unreadable one, gives the element as it is now."""
    view = copy.deepcopy(element)
    moment = parse_js_date(at) if at else None
    if moment is None:
        return view
    facts = [
        fact for fact in view.facts
        if _bound(fact.valid_from, -math.inf) <= moment <= _bound(fact.valid_to, math.inf)
    ]
    return replace(view, facts=facts, current_state=render_element_state(facts, include_historical=True))


def event_chronology(event: Any) -> str:
    """The first of happenedStart, happenedEnd, mentionedAt, createdAt that is set (the reference's `??`: an
    empty string is set)."""
    temporal = event.temporal
    for value in (temporal.happened_start, temporal.happened_end, temporal.mentioned_at):
        if value is not None:
            return value
    return event.created_at


def _change_fields(change: Any) -> dict[str, Any] | None:
    """A change's fields with snake_case names. The reference's projectors name the element in a nested
    `element: {name, type, aliases}` (its ElementProjectionChange), which wins as in the reference; the engine's
    own callbacks may give those three fields flat."""
    if not isinstance(change, dict):
        return None
    fields = {_CHANGE_ALIASES.get(key, key): value for key, value in change.items()}
    if "element" in fields:
        element = fields.pop("element")
        element = element if isinstance(element, dict) else {}
        fields.update(name=element.get("name"), type=element.get("type"), aliases=element.get("aliases"))
    return fields


def apply_element_changes(tx: Mutation, job: ElementProjectionJob, changes: Any, *, now: str,
                          new_id: Callable[[str], str]) -> list[str]:
    """Apply a projector's changes for a claimed job; invalid changes are skipped. Returns touched element ids
    in first-touch order."""
    touched: list[str] = []
    batch = set(job.source_event_ids)
    normalized_cache: dict[str, str] = {}

    def norm(text: str) -> str:
        if text not in normalized_cache:
            normalized_cache[text] = normalize_search_text(text)
        return normalized_cache[text]

    for raw in changes if isinstance(changes, list) else []:
        change = _change_fields(raw)
        if change is None:
            continue
        name = compact(change.get("name"), 160)
        element_type = change.get("type")
        key = compact(change.get("key"), 160)
        mode = change.get("mode")
        if not name or element_type not in ELEMENT_TYPES or not key or mode not in FACT_MODES:
            continue
        if change.get("operation") != OPERATION_FOR_MODE[mode]:
            continue
        requested = string_list(change.get("source_event_ids"), 24)
        allowed = [event_id for event_id in requested if event_id in batch]
        if not allowed or len(allowed) != len(requested):
            continue
        raw_value = change.get("value")
        value: str | list[str] = string_list(raw_value, 40) if isinstance(raw_value, list) else compact(raw_value, 1200)
        if not value:
            continue
        confidence = change.get("confidence")
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not math.isfinite(confidence):
            confidence = None  # NaN or a non-number: no confidence rather than a corrupt one (§11.12)
        else:
            confidence = min(1.0, max(0.0, confidence))

        aliases = [alias for alias in string_list(change.get("aliases"), 20, 160) if norm(alias) != norm(name)]
        wanted = {norm(name), *(norm(alias) for alias in aliases)}
        element = next(
            (candidate for candidate in tx.values("elements")
             if candidate.type == element_type
             and any(norm(label) in wanted for label in (candidate.name, *candidate.aliases))),
            None,
        )
        if element is None:
            element = Element(
                id=new_id("elem"), name=name, type=element_type, aliases=[], current_state="", facts=[],
                source_event_ids=[], source_message_ids=[],
                weight=EventWeight(mention_count=1, last_adopted_turn=tx.current_turn), created_at=now, updated_at=now,
            )
            tx.put("elements", element)
        else:
            element = tx.edit("elements", element.id)
        element.aliases.extend(alias for alias in aliases if alias not in element.aliases)

        valid_from = compact(change.get("valid_from"), 80)
        if not valid_from:
            chronologies = [event_chronology(event) for event in (tx.get("events", eid) for eid in allowed) if event]
            # The reference's `sort().at(-1)`: the greatest in UTF-16 code unit order.
            valid_from = max(chronologies, key=lambda text: text.encode("utf-16-be", "surrogatepass"), default="") or now
        valid_to = compact(change.get("valid_to"), 80) or None

        fact_value: str | list[str] | None = value
        if mode in ("state", "relation"):
            for position in element.active_positions(key, mode):
                fact = element.facts[position]
                element.set_fact(position, replace(fact, status="superseded", valid_to=fact.valid_to or valid_from,
                                                   updated_at=now))
        else:
            present = {
                norm(item) for fact in (element.facts[position] for position in element.active_positions(key, "set"))
                for item in (fact.value if isinstance(fact.value, list) else [fact.value])
            }
            incoming = value if isinstance(value, list) else [value]
            fresh = [item for item in dict.fromkeys(incoming) if norm(item) not in present]
            fact_value = fresh or None
        if fact_value is not None:
            element.add_fact(ElementFact(
                id=new_id("fact"), key=key, mode=mode, value=fact_value, source_event_ids=list(allowed),
                status="active", created_at=now, updated_at=now, valid_from=valid_from, valid_to=valid_to,
                confidence=confidence,
            ))
        events = [event for event in (tx.get("events", event_id) for event_id in allowed) if event is not None]
        element.add_sources(allowed, [mid for event in events for mid in event.source_message_ids])
        element.current_state = render_element_state(element.active_facts())
        element.updated_at = now
        if element.id not in touched:
            touched.append(element.id)
    return touched
