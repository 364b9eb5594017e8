"""What the stored index holds for one event: its term frequencies and its filter and sort inputs, derived
from the event's record (or its `events` row) once, when it is written."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, func, select

from stratagate.search.collation import locale_compare_key
from stratagate.search.documents import event_search_fields
from stratagate.search.tokenize import field_repeat, normalize_search_text, search_tokens
from stratagate.storage import schema
from stratagate.timeutil import parse_js_date

CANDIDATE_STATUSES = ("active", "superseded")


def chronology_text(record: dict[str, Any]) -> str:
    """The first of happenedStart, happenedEnd, mentionedAt and createdAt that is set (`event_cache.chronology`)."""
    temporal = record.get("temporal") or {}
    for name in ("happenedStart", "happenedEnd", "mentionedAt"):
        if temporal.get(name) is not None:
            return temporal[name]
    return record["createdAt"]


def _epoch(value: str | None) -> float | None:
    if value is None:
        return None
    parsed = parse_js_date(value) if value else None
    return None if parsed is None else float(parsed)


@dataclass(frozen=True)
class EventDocument:
    """What the index holds for one candidate: its term frequencies and its filter and sort inputs."""

    counts: dict[str, int]
    length: int
    row: dict[str, Any]
    """The `search_events` row without namespace and position."""
    participants: frozenset[str]
    """Its distinct normalized participant names (`search_participants` rows), the empty name left out."""


def term_counts(record: dict[str, Any]) -> dict[str, int]:
    """The term frequencies of the event's weighted token stream."""
    counts: Counter[str] = Counter()
    for _name, text, weight in event_search_fields(record):
        repeat = field_repeat(weight)
        for token in search_tokens(text):
            counts[token] += repeat
    return dict(counts)


def event_document(record: dict[str, Any]) -> EventDocument:
    counts = term_counts(record)
    temporal = record.get("temporal") or {}
    first = temporal.get("happenedStart") if temporal.get("happenedStart") is not None else temporal.get("happenedEnd")
    last = temporal.get("happenedEnd") if temporal.get("happenedEnd") is not None else temporal.get("happenedStart")
    weight = record["weight"]
    length = sum(counts.values())
    names = _normalized_names(record)
    return EventDocument(counts, length, {
        "event_id": record["id"],
        "length": length,
        "participants": "\n".join(names),
        "event_type": normalize_search_text(temporal.get("eventType") or ""),
        "type_text": normalize_search_text(f"{record['title']} {record['summary']} {' '.join(record['tags'])}"),
        "happened_start": _epoch(first),
        "happened_end": _epoch(last),
        "chronology_key": locale_compare_key(chronology_text(record)),
        "updated_key": locale_compare_key(record["updatedAt"]),
        "pinned": int(bool(weight["pinned"])),
        "floor_weight": weight["floorWeight"],
        "forced_cap": weight.get("forcedCap"),
        "mention_count": weight["mentionCount"],
        "last_adopted_turn": weight["lastAdoptedTurn"],
    }, frozenset(name for name in names if name))


def _normalized_names(record: dict[str, Any]) -> list[str]:
    return [normalize_search_text(name) for name in (record.get("temporal") or {}).get("participants") or []]


def participant_names(record: dict[str, Any]) -> frozenset[str]:
    """The event's distinct normalized participant names (`search_participants`), the empty name left out."""
    return frozenset(name for name in _normalized_names(record) if name)


NAME_TERM_PREFIX = "participant:"
"""A participant's name term: the postings of every candidate naming it (frequency 1). No query token has this
prefix (`tokenize.search_tokens`: word, han1, han2), and BM25's statistics (N, total length) are the state's,
so these terms never score: they give a participants filter its positions as one blob."""


def participant_term(name: str) -> str:
    return NAME_TERM_PREFIX + name


def read_event_records(connection: Connection, namespace: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(position, the fields a document needs) for every candidate, in section order, streamed."""
    e = schema.events
    statement = (
        select(*DOCUMENT_COLUMNS)
        .where(e.c.namespace == namespace, e.c.status.in_(CANDIDATE_STATUSES))
        .order_by(e.c.position)
        .execution_options(yield_per=2000)
    )
    for row in connection.execute(statement):
        yield row.position, document_record(row)


DOCUMENT_COLUMNS = tuple(getattr(schema.events.c, name) for name in (
    "position", "id", "title", "summary", "narrative", "tags_json", "quotes_json", "temporal_json", "pinned",
    "floor_weight", "forced_cap", "mention_count", "last_adopted_turn", "created_at", "updated_at"))


def document_record(row: Any) -> dict[str, Any]:
    """The event record fields a document is derived from, from a row of `DOCUMENT_COLUMNS`."""
    return {
        "id": row.id, "title": row.title, "summary": row.summary, "narrative": row.narrative,
        "tags": json.loads(row.tags_json), "quotes": json.loads(row.quotes_json),
        "temporal": json.loads(row.temporal_json), "createdAt": row.created_at, "updatedAt": row.updated_at,
        "weight": {"pinned": row.pinned, "floorWeight": row.floor_weight, "forcedCap": row.forced_cap,
                   "mentionCount": row.mention_count, "lastAdoptedTurn": row.last_adopted_turn},
    }


def count_candidates(connection: Connection, namespace: str) -> int:
    e = schema.events
    return connection.scalar(select(func.count()).select_from(e).where(
        e.c.namespace == namespace, e.c.status.in_(CANDIDATE_STATUSES))) or 0
