"""The writer the crash loop kills, and the checks run on the database after every kill.

The workload appends turns (each with an ingestion receipt; every third turn seals a block and runs the rule-based
extractor and projector), adds event cards and curates them with journal entries, forever. It logs each
operation's start and the revision after it to a line-buffered file, so after a SIGKILL the checker knows which
commits certainly landed and whether the kill hit an operation in flight.
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from contextlib import closing
from multiprocessing.synchronize import Event as EventFlag
from pathlib import Path
from typing import Any

import stratagate
from stratagate.journal import backend_entries, new_entry, verify_backend
from stratagate.rules import engine_options

NAMESPACE = "crash"
TURNS_PER_BLOCK = 3
# Commits one call may make: the turn, the seal, then claim and finish of one extraction and one projection
# step, with room for work a killed writer left pending.
COMMITS_PER_OPERATION = 8


def run_workload(database: str, log_path: Path, ready: EventFlag, seed: int) -> None:
    """Write until killed. Runs in a forked child; never returns normally."""
    memory = stratagate.open(database, NAMESPACE, block_turn_size=TURNS_PER_BLOCK, **engine_options())
    rng = random.Random(seed)
    with log_path.open("a", buffering=1) as log:
        ready.set()
        while True:
            operation = rng.choices(("turn", "event", "curate"), weights=(5, 1, 3))[0]
            log.write(f"begin {operation} {memory.revision}\n")
            _perform(memory, operation, rng)
            log.write(f"end {operation} {memory.revision}\n")


def _perform(memory: stratagate.StrataGate, operation: str, rng: random.Random) -> None:
    blocks = memory.list_blocks()
    events = memory.list_events()
    if operation == "event" and blocks:
        number = sum(event.id.startswith("manual-") for event in events) + 1
        memory.add_event(f"Manual card {number}", "Alice prefers tea over coffee.", id=f"manual-{number}",
                         source_block_id=rng.choice(blocks).id, criticality="preference")
    elif operation == "curate" and events:
        event = rng.choice(events)
        pinned = not event.weight.pinned
        action = "pin" if pinned else "unpin"
        entry = new_entry("crash-loop", action, [event.id], {"pinned": event.weight.pinned}, {"pinned": pinned})
        memory.pin_event(event.id, pinned, journal_entry=entry)
    else:
        turn = memory.current_turn + 1
        memory.append_turn(f"Alice decided the Atlas project moves to Postgres on May {turn % 28 + 1}, 2026.",
                           f"Noted turn {turn}.", receipt_id=f"turn-{turn}")


def last_logged(log_path: Path) -> tuple[int, str | None]:
    """(revision before the operation in flight or after the last finished one, that operation or None)."""
    revision, in_flight = 0, None
    for line in log_path.read_text().splitlines():
        parts = line.split()
        if len(parts) != 3:  # a line cut short by the kill: its operation was in flight
            in_flight = in_flight or "unknown"
            continue
        revision, in_flight = int(parts[2]), parts[1] if parts[0] == "begin" else None
    return revision, in_flight


def check_database(database: Path, logged_revision: int, in_flight: bool) -> dict[str, Any]:
    """Every invariant a half-applied mutation would break; returns a few counts for the report."""
    with closing(sqlite3.connect(database)) as connection, connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with stratagate.open(database, NAMESPACE, read_only=True) as memory:
        snapshot = memory.export_snapshot()
        revision = memory.revision
        verified = verify_backend(memory.backend, NAMESPACE)
        entries = backend_entries(memory.backend, NAMESPACE)

    # Killed between operations: exactly the logged revision; inside one: some of that call's commits.
    newest_possible = logged_revision + (COMMITS_PER_OPERATION if in_flight else 0)
    assert logged_revision <= revision <= newest_possible, (logged_revision, revision, in_flight)
    turns = snapshot["currentTurn"]
    # Every turn and its receipt were committed together, numbered without gaps.
    assert sorted(receipt["id"] for receipt in snapshot["ingestionReceipts"]) == sorted(
        f"turn-{n}" for n in range(1, turns + 1))
    blocks = sorted(snapshot["blocks"], key=lambda block: block["sequence"])
    sealed = 0
    for block in blocks:  # blocks tile the turns in order, each holding exactly one block's worth
        assert (block["startTurn"], block["endTurn"]) == (sealed + 1, sealed + TURNS_PER_BLOCK), block["id"]
        sealed = block["endTurn"]
    tail_turns = sum(message["role"] == "user" for message in snapshot["openTail"])
    assert sealed + tail_turns == turns
    # Extraction jobs belong to sealed blocks; a card and its projection job are committed together.
    block_ids = {block["id"] for block in blocks}
    assert {job["blockId"] for job in snapshot["extractionJobs"]} <= block_ids
    projected = {event_id for job in snapshot["elementProjectionJobs"] for event_id in job["sourceEventIds"]}
    for event in snapshot["events"]:
        assert event["sourceBlockId"] in block_ids, event["id"]
        assert event["id"] in projected, event["id"]
    # The journal verifies, and each pin flag is what its newest journal entry says (change and entry atomic).
    assert verified.ok, verified.describe()
    newest = {record.ids[0]: record.after["pinned"] for record in entries}
    pins = {event["id"]: event["weight"]["pinned"] for event in snapshot["events"]}
    for event_id, pinned in pins.items():
        assert pinned == newest.get(event_id, False), event_id
    return {"revision": revision, "turns": turns, "events": len(snapshot["events"]),
            "journal": len(entries), "actions": Counter(record.action for record in entries)}
