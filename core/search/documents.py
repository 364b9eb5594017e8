"""The weighted search fields of an event (spec §6.4) and of an element fact (spec §6.5).

Records are snapshot-shaped camelCase dicts. Field order and text are the reference's exactly, so
`weighted_search_tokens` of these fields is the reference's token stream for the document. A missing value
is the empty string, as the reference's `?? ''` (so an event without dates adds the field text `" "`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stratagate.search.tokenize import weighted_search_tokens

SearchField = tuple[str, str, float]


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _joined(values: Any) -> str:
    return " ".join(_text(value) for value in values or [])


def event_search_fields(event: Mapping[str, Any]) -> list[SearchField]:
    """`(field name, text, weight)` for the nine fields BM25 sees in an event card."""
    temporal = event.get("temporal") or {}
    happened = f"{_text(temporal.get('happenedStart'))} {_text(temporal.get('happenedEnd'))}"
    return [
        ("title", _text(event.get("title")), 4),
        ("summary", _text(event.get("summary")), 3),
        ("tags", _joined(event.get("tags")), 2),
        ("quotes", _joined(event.get("quotes")), 2),
        ("narrative", _text(event.get("narrative")), 1),
        ("participants", _joined(temporal.get("participants")), 5),
        ("eventType", _text(temporal.get("eventType")), 5),
        ("originalText", _text(temporal.get("originalText")), 4),
        ("happened", happened, 4),
    ]


def element_fact_search_fields(element: Mapping[str, Any], fact: Mapping[str, Any]) -> list[SearchField]:
    """`(field name, text, weight)` for the five fields BM25 sees in one fact of an element."""
    value = fact.get("value")
    return [
        ("name", _text(element.get("name")), 5),
        ("aliases", _joined(element.get("aliases")), 4),
        ("type", _text(element.get("type")), 2),
        ("factKey", _text(fact.get("key")), 4),
        ("factValue", _joined(value) if isinstance(value, list) else _text(value), 5),
    ]


def field_tokens(fields: list[SearchField]) -> list[str]:
    """The reference's weighted token stream for these fields."""
    return weighted_search_tokens((text, weight) for _name, text, weight in fields)
