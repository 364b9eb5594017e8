"""Block lifts expose the pointer before and after, and `set_block_pointer` puts an exact earlier pointer back
(one commit with the revision check and the journal entry), on a real SQLite copy of the reference memory."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from stratagate import journal
from stratagate.errors import InvalidInputError, ReadOnlyError, StorageConflictError
from stratagate.memory import BlockPointer
from stratagate.memory import open as open_memory
from tests.conftest import REFERENCE_NAMESPACE

NOW = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)


def _open(path: Path, read_only: bool = False):
    return open_memory(path, REFERENCE_NAMESPACE, read_only=read_only, now=lambda: NOW)


def block_rows(path: Path, block_id: str) -> dict[str, list[tuple]]:
    """The block's row and its message rows, every column."""
    with closing(sqlite3.connect(path)) as connection, connection:
        rows = {
            table: sorted(connection.execute(f'SELECT * FROM "{table}" WHERE {column} = ?', (block_id,)).fetchall())
            for table, column in (("blocks", "id"), ("messages", "block_id"))
        }
    connection.close()
    return rows


def test_lift_then_set_the_pointer_before_leaves_the_rows_identical(reference_db_copy: Path):
    memory = _open(reference_db_copy)
    original = block_rows(reference_db_copy, "blk_50")
    revision, before = memory.revision, BlockPointer.of(memory.get_block("blk_50"))
    lift = memory.lift_block("blk_50", 2, source="user")
    assert lift.before == before and lift.after == BlockPointer.of(memory.get_block("blk_50"))
    assert (lift.after.anchor_level, lift.after.last_lifted_by, lift.after.last_lifted_at) == (
        2, "user", "2026-12-01T12:00:00.000+08:00")
    assert lift.entry.level == 2 and memory.revision == revision + 1
    assert block_rows(reference_db_copy, "blk_50") != original

    undone = memory.set_block_pointer("blk_50", lift.before)
    assert (undone.before, undone.after) == (lift.after, lift.before)
    assert memory.revision == revision + 2
    assert block_rows(reference_db_copy, "blk_50") == original
    memory.close()


def test_the_pointer_and_its_journal_entry_commit_together(reference_db_copy: Path):
    memory = _open(reference_db_copy)
    before = BlockPointer.of(memory.get_block("blk_50"))
    after = memory.lift_pointer("blk_50", "raw", "user")
    entry = journal.new_entry("reviewer", "lift", ["blk_50"], before.to_json(), after.to_json())
    lift = memory.set_block_pointer("blk_50", after, journal_entry=entry)
    assert lift.after == after and lift.before == before
    (stored,) = journal.read_entries(memory.backend.engine, REFERENCE_NAMESPACE)
    assert (stored.action, stored.ids, stored.after["pointerAnchorLevel"]) == ("lift", ["blk_50"], 5)
    memory.close()


def test_a_stale_writer_conflicts_and_writes_nothing(reference_db_copy: Path):
    memory, other = _open(reference_db_copy), _open(reference_db_copy)
    before = BlockPointer.of(memory.get_block("blk_50"))
    other.expand_block("blk_25", 5, source="agent")
    rows = block_rows(reference_db_copy, "blk_50")
    entry = journal.new_entry("reviewer", "undo lift", ["blk_50"], before.to_json(), before.to_json())
    with pytest.raises(StorageConflictError):
        memory.set_block_pointer("blk_50", replace(before, anchor_level=1), journal_entry=entry)
    assert block_rows(reference_db_copy, "blk_50") == rows
    assert journal.read_entries(memory.backend.engine, REFERENCE_NAMESPACE) == []
    memory.close()
    other.close()


def test_read_only_and_bad_pointers_are_refused(reference_db_copy: Path):
    memory = _open(reference_db_copy)
    pointer = BlockPointer.of(memory.get_block("blk_50"))
    with pytest.raises(InvalidInputError, match="pointer.anchor_level must be a level 0-5"):
        memory.set_block_pointer("blk_50", replace(pointer, anchor_level=7))
    with pytest.raises(InvalidInputError, match="pointer.last_lifted_by"):
        memory.set_block_pointer("blk_50", replace(pointer, last_lifted_by="bot"))
    memory.close()
    forensic = _open(reference_db_copy, read_only=True)
    with pytest.raises(ReadOnlyError):
        forensic.set_block_pointer("blk_50", pointer)
    forensic.close()
