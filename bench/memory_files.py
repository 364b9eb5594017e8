"""Benchmark memories on disk, built once per size into a cache directory and reused by later runs.

`memory_file(size)` is a StrataGate SQLite file of `size` synthetic event cards (`search.iter_synthetic_events`,
seeded) against 20 sealed blocks, its persistent search index built; `fts5_file(size)` holds the same cards in
an SQLite FTS5 table (the nine search fields as columns) with the filter and order columns beside it, for the
peer. Both are streamed, so a million events build in bounded memory. The cache directory is
`$STRATAGATE_BENCH_CACHE`, else `$XDG_CACHE_HOME/stratagate-bench`; delete a file to rebuild it.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

from search import iter_synthetic_events

import stratagate
from stratagate.search.documents import event_search_fields
from stratagate.storage.backend import ChangeSet
from stratagate.storage.sql import open_backend

NAMESPACE = "bench:search"
BLOCKS = 20
EVENTS_PER_COMMIT = 5000
FORMAT = 1
"""Bump when the generated content changes, so cached files are rebuilt."""
MEMORY_FORMAT = 3
"""`FORMAT` for the memory files; also bumped when their index's layout changes (2: packed postings blobs, 3: the
participants' name terms), so a checkout that cannot read the new layout keeps reading the files it built. A
missing file is copied from the previous format's when that one is there (same events), and its index
brought up to date by a writable open, instead of built from nothing."""


def cache_directory() -> Path:
    override = os.environ.get("STRATAGATE_BENCH_CACHE")
    base = Path(override) if override else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "stratagate-bench"
    base.mkdir(parents=True, exist_ok=True)
    return base


def publish(building: Path, path: Path) -> Path:
    """Move a finished cache file into place as one self-contained file: its WAL folded in, then renamed, so a
    killed build never leaves a half-built file under the final name."""
    with sqlite3.connect(building) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    building.with_name(building.name + "-wal").unlink(missing_ok=True)
    building.with_name(building.name + "-shm").unlink(missing_ok=True)
    building.rename(path)
    return path


def _records(size: int, blocks: list[str]) -> Iterator[dict]:
    """Complete event records: decay inputs vary (mentions 1-3, adopted at turns 0-20) so weights differ."""
    rng = random.Random(size)
    for number, card in enumerate(iter_synthetic_events(size)):
        yield {
            **card, "sourceMessageIds": [], "sourceBlockId": blocks[number % len(blocks)], "scope": "user",
            "criticality": rng.choice(["routine", "routine", "preference"]), "confidence": 1.0,
            "supersededBy": None,
            "weight": {"mentionCount": rng.randint(1, 3), "lastAdoptedTurn": rng.randint(0, BLOCKS),
                       "lastRetrievedAt": None, "pinned": False, "floorWeight": 0.0, "forcedCap": None},
        }


def memory_file(size: int) -> Path:
    path = cache_directory() / f"memory-{size}-v{MEMORY_FORMAT}.sqlite"
    if path.exists():
        with open_backend(path) as backend:  # an index of an earlier format is rebuilt in place, once
            backend.event_search_index(NAMESPACE)
        return path
    building = path.with_suffix(".building")
    for leftover in building.parent.glob(building.name + "*"):
        leftover.unlink()
    previous = cache_directory() / f"memory-{size}-v{MEMORY_FORMAT - 1}.sqlite"
    if previous.exists():
        print(f"bench: bringing {previous} up to date in {path} (once)", file=sys.stderr, flush=True)
        shutil.copyfile(previous, building)
        with open_backend(building) as backend:
            backend.event_search_index(NAMESPACE)
        return publish(building, path)
    print(f"bench: building a {size:,}-event memory in {path} (once)", file=sys.stderr, flush=True)
    with stratagate.open(building, NAMESPACE, block_turn_size=1) as memory:
        for turn in range(BLOCKS):
            memory.append_turn(f"user turn {turn}", f"assistant turn {turn}")
        blocks = [block.id for block in memory.list_blocks()]
    with open_backend(building) as backend:
        revision = backend.load_space(NAMESPACE)["revision"]
        changes = ChangeSet()
        for record in _records(size, blocks):
            changes.upsert("events", record)
            if len(changes.upserts["events"]) >= EVENTS_PER_COMMIT:
                revision = backend.commit(NAMESPACE, changes, revision)
                changes = ChangeSet()
        if not changes.is_empty():
            backend.commit(NAMESPACE, changes, revision)
        # One build of the persistent index from the stored events, as a file written before it existed gets.
        backend.event_search_index(NAMESPACE, lambda done, total: print(
            f"bench: indexed {done:,} / {total:,}", file=sys.stderr, flush=True))
    return publish(building, path)


FTS5_COLUMNS = ("title", "summary", "tags", "quotes", "narrative", "participants", "event_type", "original_text",
                "happened")


def fts5_file(size: int) -> Path:
    """The peer's file: table `events` (FTS5, the nine fields) and `meta` (rowid, happened day, updatedAt,
    indexed for the orders), rowid = card number."""
    path = cache_directory() / f"fts5-{size}-v{FORMAT}.sqlite"
    if path.exists():
        return path
    building = path.with_suffix(".building")
    building.unlink(missing_ok=True)
    connection = sqlite3.connect(building)
    connection.execute(f"CREATE VIRTUAL TABLE events USING fts5({', '.join(FTS5_COLUMNS)})")
    connection.execute("CREATE TABLE meta (rowid INTEGER PRIMARY KEY, happened TEXT, updated_at TEXT)")
    with connection:
        for number, card in enumerate(iter_synthetic_events(size), start=1):
            fields = [text for _name, text, _weight in event_search_fields(card)]
            connection.execute(f"INSERT INTO events (rowid, {', '.join(FTS5_COLUMNS)}) VALUES (?{', ?' * 9})",
                               (number, *fields))
            connection.execute("INSERT INTO meta VALUES (?, ?, ?)",
                               (number, card["temporal"]["happenedStart"], card["updatedAt"]))
    connection.execute("CREATE INDEX meta_happened ON meta (happened)")
    connection.execute("CREATE INDEX meta_updated ON meta (updated_at)")
    connection.commit()
    connection.close()
    building.rename(path)
    return path
