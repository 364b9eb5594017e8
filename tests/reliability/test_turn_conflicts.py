"""A caller of `append_turn` can always tell "nothing stored" (a conflict: retry) from "turn stored" (a
result, `deferred` when its derived work lost a race), on SQLite and on PostgreSQL.

Another writer is made to commit at the exact moment that matters from inside this writer's summarizer, so
the race is deterministic; a lock held by a raw connection stands for a writer that keeps the lock too long.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

import stratagate
from stratagate.blocks import default_summary
from stratagate.errors import StorageBusyError, StorageConflictError
from tests.postgres_server import fresh_database

NAMESPACE = "turns"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "turns.sqlite")
    return fresh_database(request.getfixturevalue("postgres_server"))


@contextmanager
def write_lock_held(database: str) -> Iterator[None]:
    """Hold the namespace's write lock from a raw connection, as a writer stuck inside a transaction would."""
    if database.startswith("postgresql"):
        url = make_url(database)
        with psycopg.connect(host=url.query["host"], port=int(url.query["port"]), user=url.username,
                             dbname=url.database) as connection:
            connection.execute("SELECT revision FROM memory_spaces WHERE namespace = %s FOR UPDATE", [NAMESPACE])
            yield
            connection.rollback()
    else:
        connection = sqlite3.connect(database, isolation_level=None)
        try:
            connection.execute("BEGIN IMMEDIATE")
            yield
            connection.rollback()
        finally:
            connection.close()


def contents(database: str) -> list[str]:
    """Every stored user message, sealed or in the open tail, in order."""
    with stratagate.open(database, NAMESPACE, read_only=True) as memory:
        sealed = [m.content for block in sorted(memory.list_blocks(), key=lambda b: b.sequence) for m in block.l5_raw]
        return [content for content in sealed + [m.content for m in memory.list_open_tail()]
                if not content.startswith("ok")]


def other_appends(other: stratagate.StrataGate) -> None:
    other.refresh()
    other.append_turn("from other", "ok other", thread_id="elsewhere")  # a tail of its own: no seal


def summarizer_that(action: Callable[[], None]):
    """A summarizer that first lets `action` run (another writer's commit), once."""
    pending = [action]

    def summarize(messages):
        while pending:
            pending.pop()()
        return default_summary(messages)
    return summarize


def test_a_seal_that_loses_a_race_still_seals_and_reports_the_stored_turn(database: str):
    stratagate.open(database, NAMESPACE, block_turn_size=2).close()
    other = stratagate.open(database, NAMESPACE)
    writer = stratagate.open(database, NAMESPACE,
                             summarizer=summarizer_that(lambda: other_appends(other)))
    writer.append_turn("first", "ok 1")
    # The turn commits; while its block is summarized the other writer commits, so the seal's commit is stale.
    result = writer.append_turn("second", "ok 2")
    assert result.sealed_block is not None and not result.deferred
    assert [m.content for m in result.sealed_block.l5_raw] == ["first", "ok 1", "second", "ok 2"]
    assert contents(database) == ["first", "second", "from other"]
    other.close()
    writer.close()


def test_derived_work_that_cannot_commit_is_deferred_not_raised_and_resumed(database: str):
    stratagate.open(database, NAMESPACE, block_turn_size=2).close()
    other = stratagate.open(database, NAMESPACE)
    held = write_lock_held(database)

    def other_commits_then_holds_the_lock() -> None:
        other_appends(other)
        held.__enter__()

    writer = stratagate.open(database, NAMESPACE, timeout=0.3,
                             summarizer=summarizer_that(other_commits_then_holds_the_lock))
    writer.append_turn("first", "ok 1")
    try:
        result = writer.append_turn("second", "ok 2")
    finally:
        held.__exit__(None, None, None)
    assert result.deferred and result.sealed_block is None
    assert contents(database) == ["first", "second", "from other"]  # stored once: the caller must not retry
    sealed = writer.resume_pending_work().sealed_blocks
    assert [m.content for m in sealed[0].l5_raw] == ["first", "ok 1", "second", "ok 2"]
    assert contents(database) == ["first", "second", "from other"]
    other.close()
    writer.close()


def test_a_writer_that_waits_past_its_timeout_gets_a_conflict_and_stores_nothing(database: str):
    stratagate.open(database, NAMESPACE).close()
    writer = stratagate.open(database, NAMESPACE, timeout=0.3)
    with write_lock_held(database), pytest.raises(StorageConflictError) as raised:
        writer.append_turn("blocked", "ok")
    assert isinstance(raised.value, StorageBusyError)
    assert "another writer" in str(raised.value)
    assert contents(database) == []
    assert writer.append_turn("blocked", "ok") is not None  # the retry the conflict asks for
    assert contents(database) == ["blocked"]
    writer.close()


def test_a_stale_writer_still_gets_a_conflict_first_and_its_retry_wins(database: str):
    stratagate.open(database, NAMESPACE).close()
    first, second = stratagate.open(database, NAMESPACE), stratagate.open(database, NAMESPACE)
    first.append_turn("from first", "ok")
    with pytest.raises(StorageConflictError):
        second.append_turn("from second", "ok")
    # The retry runs under the write lock on reloaded state, so a writer that commits meanwhile cannot
    # make it lose again: here `first` commits between the conflict and the retry.
    first.append_turn("first again", "ok")
    second.append_turn("from second", "ok")
    assert contents(database) == ["from first", "first again", "from second"]
    first.close()
    second.close()
