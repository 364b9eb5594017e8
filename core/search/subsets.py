"""A set of a stored index's documents as an SQL condition on its documents table (`search_events`,
`search_facts`): filters are combined and handed to the database, never listed in Python."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Subset:
    """A set of documents as a condition on their table's row (`?` marks, `values` in their order)."""

    sql: str
    values: tuple = ()
    direct: str | None = None
    """A SELECT of the subset's positions (repeats allowed) with the same `values`, cheaper than the condition
    when the subset is read on its own (the event index's filters give one)."""
    names: tuple[tuple[str, ...], ...] | None = None
    """For a participants filter alone: its groups of matching names (a candidate names one of each group's),
    whose positions the event index also keeps as terms."""


ALL = Subset("1 = 1")
NONE = Subset("1 = 0")


def all_of(subsets: Iterable[Subset]) -> Subset:
    parts = list(subsets)
    if len(parts) == 1:
        return parts[0]
    return Subset(" AND ".join(f"({part.sql})" for part in parts), tuple(v for part in parts for v in part.values))
