"""Four processes append turns to one namespace as fast as they can, on SQLite and on PostgreSQL, with and
without receipt ids; every turn a writer was told is stored must be stored exactly once.

Each writer appends numbered turns for `STRATAGATE_CONTENTION_SECONDS` (default 8) with the rule-based engine
(blocks of 4 turns are sealed, extracted and projected, so derived work races too). A `StorageConflictError`
(or its `StorageBusyError`) means nothing was stored and the same turn is retried, as docs/reliability.md
advises; any other error fails the test. Afterwards every user message of the namespace is counted:

- lost: a turn whose `append_turn` returned but whose text is not stored;
- duplicated: a turn text stored more than once (a retry of a turn that had in fact been stored).

The figures go to docs/reliability.md (run with `-s` to print them).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from collections import Counter
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

import stratagate
from stratagate.errors import StorageConflictError
from stratagate.rules import engine_options
from tests.postgres_server import fresh_database

NAMESPACE = "four-writers"
WRITERS = 4
SECONDS = float(os.environ.get("STRATAGATE_CONTENTION_SECONDS", "8"))


def _write(database: str, writer: int, receipts: bool, barrier: Barrier, results: Queue) -> None:
    stored: list[str] = []
    conflicts = deferred = 0
    with stratagate.open(database, NAMESPACE, block_turn_size=4, timeout=30, **engine_options()) as memory:
        barrier.wait(timeout=60)
        deadline = time.monotonic() + SECONDS
        while time.monotonic() < deadline:
            text = f"writer {writer} turn {len(stored)}"
            receipt = f"w{writer}-{len(stored)}" if receipts else None
            while True:
                try:
                    result = memory.append_turn(text, "Ok.", receipt_id=receipt)
                    break
                except StorageConflictError:
                    conflicts += 1  # nothing was stored: retry the same turn
            deferred += result.deferred
            stored.append(text)
    results.put({"writer": writer, "stored": stored, "conflicts": conflicts, "deferred": deferred})


def _contend(database: str, receipts: bool) -> dict[str, object]:
    stratagate.open(database, NAMESPACE, block_turn_size=4).close()
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(WRITERS), context.Queue()
    processes = [
        context.Process(target=_write, args=(database, n, receipts, barrier, results)) for n in range(WRITERS)
    ]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=SECONDS + 600) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    with stratagate.open(database, NAMESPACE, read_only=True) as memory:
        snapshot = memory.export_snapshot()
    messages = snapshot["openTail"] + [message for block in snapshot["blocks"] for message in block["l5Raw"]]
    counts = Counter(message["content"] for message in messages if message["role"] == "user")
    told = [text for outcome in outcomes for text in outcome["stored"]]
    assert set(counts) <= set(told), "a turn no writer finished is stored"
    return {
        "writers x seconds": f"{WRITERS} x {SECONDS:g}",
        "receipt ids": receipts,
        "turns stored": sum(counts.values()),
        "per writer": [len(outcome["stored"]) for outcome in sorted(outcomes, key=lambda o: o["writer"])],
        "conflicts surfaced": sum(outcome["conflicts"] for outcome in outcomes),
        "deferred": sum(outcome["deferred"] for outcome in outcomes),
        "duplicates": sum(count - 1 for count in counts.values()),
        "lost": sum(1 for text in told if counts[text] == 0),
    }


def _check(outcome: dict[str, object], backend: str) -> None:
    print(f"{backend} contention: {json.dumps(outcome)}")
    assert outcome["lost"] == 0
    assert outcome["duplicates"] == 0
    assert min(outcome["per writer"]) > 0  # every writer progressed


@pytest.mark.slow
@pytest.mark.parametrize("receipts", [True, False], ids=["receipts", "no-receipts"])
def test_four_sqlite_writers_lose_and_duplicate_no_turn(tmp_path: Path, receipts: bool) -> None:
    _check(_contend(str(tmp_path / "contended.sqlite"), receipts), "sqlite")


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize("receipts", [True, False], ids=["receipts", "no-receipts"])
def test_four_postgresql_writers_lose_and_duplicate_no_turn(postgres_server, receipts: bool) -> None:
    _check(_contend(fresh_database(postgres_server, "four"), receipts), "postgresql")
