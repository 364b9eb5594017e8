"""Two processes writing one namespace: one wins, the other gets StorageConflictError, nothing is lost."""

from __future__ import annotations

import multiprocessing
from typing import Any

from stratagate.errors import StorageConflictError
from stratagate.storage.backend import ChangeSet
from stratagate.storage.sql import open_backend

NS = "shared"
WRITERS = 2


def _receipt(name: str) -> dict[str, Any]:
    return {"id": name, "createdAt": "2026-03-22T00:00:00.000+08:00"}


def _write_once(database: str, name: str, barrier: Any, results: Any) -> None:
    """Read the revision, wait until every writer has read it too, then commit against it."""
    with open_backend(database, timeout=30) as backend:
        revision = backend.load_space(NS)["revision"]
        changes = ChangeSet(space={"currentTurn": revision + 1})
        changes.upsert("ingestionReceipts", _receipt(name))
        barrier.wait(timeout=60)
        try:
            results.put((name, "committed", backend.commit(NS, changes, revision)))
        except StorageConflictError as conflict:
            # The loser reloads and retries: its update must land on top of the winner's, not replace it.
            retried = backend.commit(NS, changes, backend.load_space(NS)["revision"])
            results.put((name, f"conflict at {conflict.expected_revision}", retried))


def test_two_processes_one_conflict_no_lost_update(database: str) -> None:
    with open_backend(database) as backend:
        backend.create_space(NS, {})
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(WRITERS), context.Queue()
    writers = [
        context.Process(target=_write_once, args=(database, f"writer-{n}", barrier, results)) for n in range(WRITERS)
    ]
    for process in writers:
        process.start()
    outcomes = sorted((results.get(timeout=120) for _ in writers), key=lambda outcome: outcome[2])
    for process in writers:
        process.join(timeout=60)
        assert process.exitcode == 0

    assert [(status, revision) for _name, status, revision in outcomes] == [("committed", 2), ("conflict at 1", 3)]
    with open_backend(database, read_only=True) as backend:
        assert backend.load_space(NS)["revision"] == 3
        assert sorted(backend.query_keys(NS, "ingestionReceipts")) == ["writer-0", "writer-1"]
