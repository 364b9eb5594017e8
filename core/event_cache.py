"""What event search filters and sorts by, derived once per event and kept current on every write.

`search_events` filters candidates (active and superseded events) by participants, event type and happened
range, and orders them by chronology or weight (spec §6.4-§6.5). Deriving those inputs (normalized names
and texts, parsed dates, collation keys) per query costs a pass over every event; here they are derived
when an event is written and looked up per query. Only the decay weight, which depends on the current
turn, is computed per query.

The candidate order is the events section's order (the reference's array order, which breaks ties in
every stable sort): each event key gets a sequence number when it enters the section, kept while it stays.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass

from stratagate.arrays import np
from stratagate.cancellation import checkpoint
from stratagate.model import Event
from stratagate.search.collation import locale_compare_key
from stratagate.search.tokenize import normalize_search_text
from stratagate.timeutil import parse_js_date
from stratagate.weights import weight_at

EVENT_CANDIDATE_STATUSES = ("active", "superseded")


def chronology(event: Event) -> str:
    """The first of happenedStart, happenedEnd, mentionedAt and createdAt that is set."""
    temporal = event.temporal
    for value in (temporal.happened_start, temporal.happened_end, temporal.mentioned_at):
        if value is not None:
            return value
    return event.created_at


def parse_bound(value: str | None, missing: float) -> float:
    """Epoch milliseconds of a date bound; `missing` when empty, NaN when unparseable."""
    if not value:
        return missing
    parsed = parse_js_date(value)
    return math.nan if parsed is None else float(parsed)


def _matches(left: str, right: str) -> bool:
    """`fuzzy_search_match` on texts both already normalized."""
    return bool(left and right and (left == right or right in left or left in right))


@dataclass(frozen=True, slots=True)
class _Entry:
    event: Event
    participants: tuple[str, ...]
    event_type: str
    type_text: str
    """Normalized "title summary tags", the eventType filter's second chance."""
    chronology_key: bytes
    updated_key: bytes


def _entry(event: Event) -> _Entry:
    return _Entry(
        event,
        tuple(normalize_search_text(name) for name in event.temporal.participants or []),
        normalize_search_text(event.temporal.event_type or ""),
        normalize_search_text(f"{event.title} {event.summary} {' '.join(event.tags)}"),
        locale_compare_key(chronology(event)),
        locale_compare_key(event.updated_at),
    )


def _happened_bounds(event: Event) -> tuple[float, float]:
    temporal = event.temporal
    first = temporal.happened_start if temporal.happened_start is not None else temporal.happened_end
    last = temporal.happened_end if temporal.happened_end is not None else temporal.happened_start
    return parse_bound(first, math.nan), parse_bound(last, math.nan)


class EventSearchCache:
    """Search candidates in section order with their derived filter and sort inputs."""

    def __init__(self, events: Iterable[Event]):
        self._sequence: dict[str, int] = {}
        self._keys: list[str | None] = []
        self._entries: dict[str, _Entry] = {}
        self._type_texts: dict[str, str] = {}
        self._by_participant: dict[str, set[str]] = {}
        self._by_type: dict[str, set[str]] = {}
        # Happened bounds by sequence number (NaN for non-candidates: a range never matches them).
        self._starts = np.full(1024, math.nan)
        self._ends = np.full(1024, math.nan)
        self._candidate_ids: list[str] | None = None
        # The weight order's keys at one turn (a write drops its event's key; a new turn drops all).
        self._weight_turn: int | None = None
        self._weight_keys: dict[str, tuple[float, bytes]] = {}
        for event in events:
            checkpoint()
            self.update(event.id, event)

    # upkeep -------------------------------------------------------------------------------------------------
    def update(self, key: str, event: Event | None) -> None:
        """Take a written event (None: deleted from the section) into account."""
        self._weight_keys.pop(key, None)
        if event is None:
            if self._drop_entry(key):
                self._candidate_ids = None
            number = self._sequence.pop(key, None)
            if number is not None:
                self._keys[number] = None
            return
        number = self._sequence.get(key)
        if number is None:
            number = self._sequence[key] = len(self._keys)
            self._keys.append(key)
            self._grow(number)
        was_candidate = self._drop_entry(key)
        is_candidate = event.status in EVENT_CANDIDATE_STATUSES
        if is_candidate:
            entry = self._entries[key] = _entry(event)
            self._type_texts[key] = entry.type_text
            for name in set(entry.participants):
                self._by_participant.setdefault(name, set()).add(key)
            self._by_type.setdefault(entry.event_type, set()).add(key)
            self._starts[number], self._ends[number] = _happened_bounds(event)
        if was_candidate != is_candidate:
            if is_candidate and number == len(self._keys) - 1 and self._candidate_ids is not None:
                self._candidate_ids.append(key)
            else:
                self._candidate_ids = None

    def _grow(self, number: int) -> None:
        if number >= len(self._starts):
            extra = np.full(len(self._starts), math.nan)
            self._starts = np.concatenate([self._starts, extra])
            self._ends = np.concatenate([self._ends, extra])

    def _drop_entry(self, key: str) -> bool:
        """Forget the key's derived inputs; True if it was a candidate."""
        entry = self._entries.pop(key, None)
        if entry is None:
            return False
        del self._type_texts[key]
        for name in set(entry.participants):
            self._discard(self._by_participant, name, key)
        self._discard(self._by_type, entry.event_type, key)
        number = self._sequence[key]
        self._starts[number] = self._ends[number] = math.nan
        return True

    @staticmethod
    def _discard(groups: dict[str, set[str]], value: str, key: str) -> None:
        members = groups[value]
        members.discard(key)
        if not members:
            del groups[value]

    # reads --------------------------------------------------------------------------------------------------
    def event(self, key: str) -> Event:
        return self._entries[key].event

    def candidate_ids(self) -> list[str]:
        """Candidate ids in section order (do not modify the list)."""
        if self._candidate_ids is None:
            self._candidate_ids = [key for key in self._sequence if key in self._entries]
        return self._candidate_ids

    def _in_order(self, keys: Iterable[str]) -> list[str]:
        return sorted(keys, key=self._sequence.__getitem__)

    def with_participants(self, wanted: list[str]) -> list[str]:
        """Candidates with, for every wanted (normalized) name, a participant matching it fuzzily."""
        matching: set[str] | None = None
        for name in wanted:
            requested = normalize_search_text(name)
            having = set().union(*(keys for have, keys in self._by_participant.items() if _matches(have, requested)))
            matching = having if matching is None else matching & having
        return self._in_order(matching or ())

    def with_event_type(self, wanted: str) -> list[str]:
        """Candidates whose eventType, or else whose "title summary tags", matches `wanted` fuzzily."""
        requested = normalize_search_text(wanted)
        matching = set().union(*(keys for have, keys in self._by_type.items() if _matches(have, requested)))
        if requested:
            # `_matches(text, requested)` inlined: this runs once per candidate.
            length = len(requested)
            matching.update(key for key, text in self._type_texts.items() if key not in matching and (
                requested in text or (text and len(text) <= length and text in requested)))
        return self._in_order(matching)

    def happened_within(self, low: float, high: float) -> list[str]:
        """Candidates whose happened interval (both ends parseable) overlaps [low, high]."""
        size = len(self._keys)
        starts, ends = self._starts[:size], self._ends[:size]
        with np.errstate(invalid="ignore"):
            inside = np.isfinite(starts) & np.isfinite(ends) & (starts <= high) & (ends >= low)
        keys = self._keys
        return [keys[number] for number in np.flatnonzero(inside).tolist()]  # type: ignore[misc]

    def structured(self, subset: list[str], temporal_intent: object, turn: int, top: int | None = None) -> list[str]:
        """The structured order of `subset` (chronology for a temporal intent, else weight at `turn` then
        updatedAt, both descending; ties keep the subset's order), or only its first `top` ids."""
        entries = self._entries
        if temporal_intent in ("first", "latest"):
            def chronological(key: str) -> bytes:
                return entries[key].chronology_key
            return _ordered(subset, chronological, temporal_intent == "latest", top)

        if turn != self._weight_turn:
            self._weight_turn = turn
            self._weight_keys = {}
        weight_keys = self._weight_keys
        for key in [key for key in subset if key not in weight_keys]:
            event = entries[key].event
            weight_keys[key] = weight_at(event.weight, event.status, turn), entries[key].updated_key
        return _ordered(subset, weight_keys.__getitem__, True, top)


def _ordered(subset: list[str], key: object, descending: bool, top: int | None) -> list[str]:
    """`sorted(subset, key=key, reverse=descending)[:top]`; heapq's n-best functions are documented as
    exactly that (stable), and cost O(n log top)."""
    if top is None or top >= len(subset):
        return sorted(subset, key=key, reverse=descending)  # type: ignore[call-overload]
    pick = heapq.nlargest if descending else heapq.nsmallest
    return pick(top, subset, key=key)  # type: ignore[call-overload]
