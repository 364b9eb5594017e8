"""Event lists ordered by one of their shown values, in SQL: a million events sorted by the database instead
of by building every event's row in Python.

Each order sorts what a list shows: text without case, the weight as `memory_weight_at` computes it at a
turn, ties in section order. SQLite needs its math functions (`exp`, `ln`) for the weight order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, case, cast, func, literal, literal_column
from sqlalchemy.sql.elements import ColumnElement

from stratagate.storage import schema as s

EVENT_ORDERS = (
    "title", "eventType", "status", "criticality", "weight", "mentionedAt", "happened", "participants", "pinned", "id"
)


@dataclass(frozen=True)
class EventOrder:
    name: str
    """One of `EVENT_ORDERS`."""
    descending: bool = False
    turn: int = 0
    """The turn the weight order computes weights at (the memory's current turn)."""
    base_lambda: float | None = None
    """The weight order's base decay rate (`stratagate.weights.BASE_LAMBDA`): passed in, as storage sits below
    the memory's rules."""

    def __post_init__(self) -> None:
        if self.name not in EVENT_ORDERS:
            raise ValueError(f"Unknown event order {self.name!r} (known: {', '.join(EVENT_ORDERS)})")
        if self.name == "weight" and self.base_lambda is None:
            raise ValueError("The weight order needs the base decay rate (base_lambda)")


def order_by(dialect: str, order: EventOrder) -> list[ColumnElement[Any]]:
    """ORDER BY terms for the events table: the order's value, then section order for ties."""
    e = s.events
    value = _value(dialect, order)
    return [value.desc() if order.descending else value.asc(), e.c.position.asc(), e.c.id.asc()]


def _value(dialect: str, order: EventOrder) -> ColumnElement[Any]:
    e = s.events
    name = order.name
    if name in ("title", "status", "criticality", "id"):
        return func.lower(e.c[name])
    if name in ("eventType", "mentionedAt"):
        return func.lower(_temporal(dialect, name))
    if name == "happened":
        start, end = _temporal(dialect, "happenedStart"), _temporal(dialect, "happenedEnd")
        both = (start != "") & (end != "") & (start != end)
        return func.lower(case((both, start + literal(" – ") + end), (start != "", start), else_=end))
    if name == "participants":
        return func.lower(func.coalesce(_participants(dialect), "", type_=Text))
    if name == "pinned":
        return e.c.pinned
    return _weight(dialect, order.turn, order.base_lambda)


def _temporal(dialect: str, field: str) -> ColumnElement[str]:
    return func.coalesce(temporal_field(dialect, s.events.c.temporal_json, field), "", type_=Text)


def temporal_field(dialect: str, column: ColumnElement[Any], field: str) -> ColumnElement[Any]:
    """One field of a temporal JSON column, NULL where it is absent."""
    if dialect == "sqlite":
        return func.json_extract(column, f"$.{field}")
    return func.jsonb_extract_path_text(cast(column, jsonb()), field)


def jsonb() -> Any:
    # The PostgreSQL dialect is imported only where it is used: it pulls in asyncio and every driver's
    # dialect module, which a process reading an SQLite file never needs.
    from sqlalchemy.dialects.postgresql import JSONB

    return JSONB()


def _participants(dialect: str) -> ColumnElement[str]:
    """The participants joined by ", ", as the list shows them."""
    if dialect == "sqlite":
        return literal_column(
            "(SELECT group_concat(value, ', ') FROM json_each(events.temporal_json, '$.participants'))"
        )
    return literal_column(
        "array_to_string(ARRAY(SELECT jsonb_array_elements_text("
        "CAST(events.temporal_json AS JSONB) -> 'participants')), ', ')"
    )


def _weight(dialect: str, turn: int, base_lambda: float) -> ColumnElement[float]:
    """`memory_weight_at(event, turn)`: 0 forgotten or archived, 1 pinned, else max(floor, exp(−λ(n)·Δ))
    capped, λ(n) = base_lambda / (1 + 1.5·ln n)."""
    e = s.events
    greatest, least = (func.max, func.min) if dialect == "sqlite" else (func.greatest, func.least)
    rate = literal(base_lambda) / (literal(1.0) + literal(1.5) * func.ln(greatest(e.c.mention_count, 1)))
    elapsed = greatest(literal(turn) - e.c.last_adopted_turn, 0)
    decayed = greatest(e.c.floor_weight, func.exp(-rate * elapsed))
    capped = case((e.c.forced_cap.is_(None), decayed), else_=least(decayed, e.c.forced_cap))
    return case((e.c.status.in_(("forgotten", "archived")), literal(0.0)), (e.c.pinned != 0, literal(1.0)),
                else_=capped)
