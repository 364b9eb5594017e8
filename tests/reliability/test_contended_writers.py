"""Two processes write one namespace 1,000 times between them, on SQLite and on PostgreSQL.

Half the operations append a turn (with a receipt), half toggle the pin of one shared card with a journal
entry recording the flag read before the write. A writer that loses a race gets `StorageConflictError`
(anything else fails the test), and retries on the state it reloaded. No update is lost when: every receipt
is stored, the revision rose by exactly one per operation, and in the journal each toggle starts from the
flag the previous toggle left (a lost update would show two toggles starting from the same flag).
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

import stratagate
from stratagate.errors import StorageConflictError
from stratagate.journal import backend_entries, new_entry, verify_backend
from tests.postgres_server import fresh_database

NAMESPACE = "contended"
CARD = "shared-card"
WRITERS = 2
OPERATIONS_PER_WRITER = 500


def _prepare(database: str) -> int:
    with stratagate.open(database, NAMESPACE, block_turn_size=1) as memory:
        block = memory.append_turn("Alice keeps the Atlas notes.", "Noted.").sealed_block
        memory.add_event("Shared card", "Both writers pin and unpin this card.", id=CARD, source_block_id=block.id)
        return memory.revision


def _write(database: str, writer: int, barrier: Barrier, results: Queue) -> None:
    conflicts = 0
    with stratagate.open(database, NAMESPACE, timeout=60) as memory:
        barrier.wait(timeout=60)
        for step in range(OPERATIONS_PER_WRITER):
            while True:
                try:
                    if step % 2:
                        pinned = memory.get_event(CARD).weight.pinned
                        entry = new_entry(f"writer-{writer}", "pin", [CARD], {"pinned": pinned}, {"pinned": not pinned})
                        memory.pin_event(CARD, not pinned, journal_entry=entry)
                    else:
                        memory.append_turn(f"Writer {writer} turn {step}.", "Ok.", receipt_id=f"w{writer}-{step}",
                                           defer_processing=True)
                    break
                except StorageConflictError:
                    conflicts += 1  # the memory reloaded what the other writer stored; try again on it
    results.put((writer, conflicts))


def _contend(database: str) -> dict[str, int]:
    start_revision = _prepare(database)
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(WRITERS), context.Queue()
    writers = [context.Process(target=_write, args=(database, n, barrier, results)) for n in range(WRITERS)]
    for process in writers:
        process.start()
    outcomes = dict(results.get(timeout=600) for _ in writers)
    for process in writers:
        process.join(timeout=60)
        assert process.exitcode == 0

    total = WRITERS * OPERATIONS_PER_WRITER
    with stratagate.open(database, NAMESPACE, read_only=True) as memory:
        assert memory.revision == start_revision + total
        receipts = {receipt.id for receipt in memory.list_ingestion_receipts()}
        expected = {f"w{n}-{step}" for n in range(WRITERS) for step in range(0, OPERATIONS_PER_WRITER, 2)}
        assert expected <= receipts and len(receipts) == len(expected)
        assert memory.current_turn == 1 + len(expected)
        assert verify_backend(memory.backend, NAMESPACE).ok
        toggles = backend_entries(memory.backend, NAMESPACE)
        assert len(toggles) == total - len(expected)
        flag = False
        for record in toggles:
            assert record.before == {"pinned": flag}, f"lost update before journal entry {record.seq}"
            flag = record.after["pinned"]
        assert memory.get_event(CARD).weight.pinned is flag
    return {"operations": total, "conflicts": sum(outcomes.values())}


@pytest.mark.slow
def test_two_sqlite_writers_lose_no_update(tmp_path: Path) -> None:
    outcome = _contend(str(tmp_path / "contended.sqlite"))
    print(f"sqlite contention: {outcome}")
    assert outcome["conflicts"] > 0  # the writers did race


@pytest.mark.slow
@pytest.mark.postgres
def test_two_postgresql_writers_lose_no_update(postgres_server) -> None:
    outcome = _contend(fresh_database(postgres_server, "contended"))
    print(f"postgresql contention: {outcome}")
    assert outcome["conflicts"] > 0
