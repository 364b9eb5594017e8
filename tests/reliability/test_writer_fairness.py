"""Writers appending turns to one namespace in a tight loop all make progress, on SQLite and PostgreSQL.

Each writer process appends turns (with receipt ids, retrying on `StorageConflictError` as the docs advise)
for a fixed time. With optimistic commits alone the writer that just committed always holds current state
and wins every race while the other starves (thousands of turns against 0). Now a writer that lost a race
retries under the write lock, and SQLite's lock goes to waiters about evenly: each writer stores at least a
third of the mean. Nothing is lost or stored twice.
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

import stratagate
from stratagate.errors import StorageConflictError
from tests.postgres_server import fresh_database

NAMESPACE = "fair"
SECONDS = 5.0


def _append_for(database: str, writer: int, barrier: Barrier, results: Queue) -> None:
    stored, conflicts = [], 0
    with stratagate.open(database, NAMESPACE, timeout=30) as memory:
        barrier.wait(timeout=60)
        deadline = time.monotonic() + SECONDS
        while time.monotonic() < deadline:
            receipt = f"w{writer}-{len(stored)}"
            try:
                memory.append_turn(f"Writer {writer} turn {len(stored)}.", "Ok.", receipt_id=receipt)
            except StorageConflictError:
                conflicts += 1  # nothing was stored: retry the same turn
                continue
            stored.append(receipt)
    results.put((writer, stored, conflicts))


def _contend(database: str, writers: int) -> dict[int, int]:
    stratagate.open(database, NAMESPACE, block_turn_size=12).close()
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(writers), context.Queue()
    processes = [context.Process(target=_append_for, args=(database, n, barrier, results)) for n in range(writers)]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=300) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    expected = sorted(receipt for _writer, stored, _conflicts in outcomes for receipt in stored)
    with stratagate.open(database, NAMESPACE, read_only=True) as memory:
        assert sorted(receipt.id for receipt in memory.list_ingestion_receipts()) == expected
        messages = [m.content for block in memory.list_blocks() for m in block.l5_raw]
        messages += [m.content for m in memory.list_open_tail()]
        users = [content for content in messages if content != "Ok."]
        assert len(users) == len(set(users)) == len(expected)  # none lost, none stored twice
    return {writer: len(stored) for writer, stored, _conflicts in outcomes}


def _assert_fair(turns: dict[int, int]) -> None:
    mean = sum(turns.values()) / len(turns)
    print(f"turns stored per writer: {turns}")
    assert mean > 0
    assert all(count >= mean / 3 for count in turns.values()), f"a writer starved: {turns}"


@pytest.mark.slow
@pytest.mark.parametrize("writers", [2, 4])
def test_sqlite_writers_each_store_a_fair_share(tmp_path: Path, writers: int) -> None:
    _assert_fair(_contend(str(tmp_path / "fair.sqlite"), writers))


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize("writers", [2, 4])
def test_postgresql_writers_each_store_a_fair_share(postgres_server, writers: int) -> None:
    _assert_fair(_contend(fresh_database(postgres_server, "fair"), writers))
