"""Following a memory another process writes: notice that it moved, and say what changed.

`stored_revision` reads the namespace's revision row from storage (one row, by key), so a follower polls it
cheaply whatever the database: a SQLite file written by an agent, or PostgreSQL. When it differs from what the
follower last saw, a `Census` taken now is compared with the previous one, and `describe_changes` turns the
difference into a feed entry: "since revision 12: 3 turns, 1 block sealed, 2 events, 1 fact superseded".

A census costs what changed, not what the namespace holds (a million events): counts, the keys added since
the previous census (records are appended in section order), the events that are not active, and the
elements with a superseded fact. A record deleted while another is added in the same interval is not seen
as new; the stores delete records only when they are re-added in the same change.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stratagate.errors import StrataGateError
from stratagate.storage.search_cache import sqlite_file_identity
from stratagate.storage.sql import SqlBackend

EVENT_STATUSES_FOLLOWED = ("superseded", "forgotten", "archived")
"""The statuses an event moves to that a feed reports (every event starts active)."""
COUNTED_SECTIONS = ("blocks", "events", "elements", "usageReceipts")


def snapshot_file(backend: Any) -> Path | None:
    """The file behind a read-only SQLite open. Such an open reads the file at rest or a private copy of it,
    never the live file, so it cannot see new writes: a follower watches the file and opens it afresh.
    None for the opens that see new writes themselves (writable ones, PostgreSQL)."""
    if isinstance(backend, SqlBackend) and backend.read_only and backend.dialect == "sqlite":
        return Path(backend.location)
    return None


def file_identity(path: Path) -> str:
    """Changes whenever the file's content may have (size, times, change counter, its WAL)."""
    return sqlite_file_identity(path)


def stored_revision(backend: Any, namespace: str) -> int:
    """The namespace's revision as stored now (not as the open memory last read it)."""
    space = backend.load_space(namespace)
    if space is None:
        raise StrataGateError(f"{backend.location}: namespace {namespace!r} no longer exists")
    return int(space["revision"])


@dataclass(frozen=True)
class Census:
    """What a namespace holds at one revision: counts, what was added since the census before it, and the
    few records whose state a feed reports."""

    revision: int
    turn: int
    counts: Mapping[str, int]
    """Section (`COUNTED_SECTIONS`) → how many keys it holds."""
    added: Mapping[str, tuple[str, ...]]
    """Section → keys past the previous census's count, in section order (none for a first census)."""
    events: Mapping[str, str]
    """Event id → status, for the events that are not active."""
    superseded_facts: Mapping[str, int]
    """Element id → how many of its facts are superseded."""


def take_census(backend: Any, namespace: str, since: Census | None = None) -> Census:
    """A census now; `since` is the previous one, whose counts say where the added keys start."""
    space = backend.load_space(namespace)
    if space is None:
        raise StrataGateError(f"{backend.location}: namespace {namespace!r} no longer exists")
    counts: dict[str, int] = {}
    added: dict[str, tuple[str, ...]] = {}
    for section in COUNTED_SECTIONS:
        known = since.counts[section] if since is not None else sys.maxsize  # a first census lists no key
        counts[section], keys = backend.key_tail(namespace, section, known)
        added[section] = tuple(keys)
    events = backend.key_statuses(namespace, "events", list(EVENT_STATUSES_FOLLOWED))
    with_superseded = backend.query_keys(namespace, "elements", {"factStatus": "superseded"})
    superseded = {}
    for element in backend.fetch(namespace, "elements", with_superseded):
        count = sum(1 for fact in element.get("facts", []) if fact.get("status") == "superseded")
        if count:
            superseded[element["id"]] = count
    return Census(int(space["revision"]), int(space.get("currentTurn", 0)), counts, added, events, superseded)


@dataclass(frozen=True)
class FeedItem:
    """One line of a feed entry: what kind of thing changed, how many, and their ids (to jump to)."""

    kind: str
    """turns, blocks, events, superseded, forgotten, elements, facts or receipts."""
    count: int
    text: str
    ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangeSummary:
    since_revision: int
    revision: int
    items: tuple[FeedItem, ...] = field(default_factory=tuple)

    def text(self) -> str:
        parts = ", ".join(item.text for item in self.items) or "no visible change"
        return f"since revision {self.since_revision}: {parts}"


def _plural(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


def describe_changes(before: Census, after: Census) -> ChangeSummary:
    """What changed from `before` to `after`, a census taken with `since=before`."""
    items: list[FeedItem] = []
    turns = after.turn - before.turn
    if turns > 0:
        items.append(FeedItem("turns", turns, _plural(turns, "turn")))
    sealed = after.added["blocks"]
    if sealed:
        items.append(FeedItem("blocks", len(sealed), f"{_plural(len(sealed), 'block')} sealed", sealed))
    new_events = after.added["events"]
    if new_events:
        items.append(FeedItem("events", len(new_events), _plural(len(new_events), "event"), new_events))
    for status in EVENT_STATUSES_FOLLOWED:
        moved = tuple(event_id for event_id, now in after.events.items()
                      if now == status and before.events.get(event_id) != status)
        if moved:
            items.append(FeedItem(status, len(moved), f"{_plural(len(moved), 'event')} {status}", moved))
    new_elements = after.added["elements"]
    if new_elements:
        items.append(FeedItem("elements", len(new_elements), _plural(len(new_elements), "element"), new_elements))
    fact_changes = {element: count - before.superseded_facts.get(element, 0)
                    for element, count in after.superseded_facts.items()}
    touched = tuple(element for element, delta in fact_changes.items() if delta > 0)
    superseded_facts = sum(delta for delta in fact_changes.values() if delta > 0)
    if superseded_facts:
        items.append(FeedItem("facts", superseded_facts, f"{_plural(superseded_facts, 'fact')} superseded", touched))
    receipts = after.added["usageReceipts"]
    if receipts:
        items.append(FeedItem("receipts", len(receipts), _plural(len(receipts), "usage receipt"), receipts))
    return ChangeSummary(before.revision, after.revision, tuple(items))
