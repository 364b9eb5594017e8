"""`curate_events` applies several event changes in one commit (one revision, all journal entries together)
and writes nothing when any change is bad or another writer committed first (real SQLite copy)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from stratagate import journal
from stratagate.errors import ReadOnlyError, StorageConflictError, UnknownIdError
from stratagate.memory import EventCuration
from stratagate.memory import open as open_memory
from tests.conftest import REFERENCE_NAMESPACE

NOW = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
IDS = ("evt_51", "evt_53", "evt_55")


def _open(path: Path, read_only: bool = False):
    return open_memory(path, REFERENCE_NAMESPACE, read_only=read_only, now=lambda: NOW)


def event_rows(path: Path) -> list[tuple]:
    with closing(sqlite3.connect(path)) as connection, connection:
        rows = sorted(connection.execute("SELECT * FROM events").fetchall())
    connection.close()
    return rows


def entries(ids: tuple[str, ...], action: str) -> list[dict]:
    return [journal.new_entry("reviewer", action, [event_id], {}, {}) for event_id in ids]


def test_a_three_event_forget_is_one_revision_with_every_journal_entry(reference_db_copy: Path):
    memory = _open(reference_db_copy)
    revision = memory.revision
    changes = memory.curate_events([EventCuration("forget", event_id) for event_id in IDS],
                                   journal_entries=entries(IDS, "forget"))
    assert memory.revision == revision + 1
    assert [change.before.id for change in changes] == list(IDS)
    assert {change.after.status for change in changes} == {"forgotten"}
    assert changes[1].before.status == "superseded"
    assert [entry.ids[0] for entry in journal.read_entries(memory.backend.engine, REFERENCE_NAMESPACE)] == list(IDS)
    memory.close()


def test_several_changes_to_one_event_apply_in_order(reference_db_copy: Path):
    memory = _open(reference_db_copy)
    (change,) = memory.curate_events([EventCuration("supersede", "evt_51", "evt_87"), EventCuration("pin", "evt_51"),
                                      EventCuration("forget", "evt_51")])
    assert (change.after.status, change.after.superseded_by, change.after.weight.pinned) == (
        "forgotten", "evt_87", True)
    memory.close()


def test_a_conflict_leaves_all_three_unchanged(reference_db_copy: Path):
    memory, other = _open(reference_db_copy), _open(reference_db_copy)
    memory.get_event("evt_51")
    other.pin_event("evt_83")
    rows = event_rows(reference_db_copy)
    with pytest.raises(StorageConflictError):
        memory.curate_events([EventCuration("forget", event_id) for event_id in IDS],
                             journal_entries=entries(IDS, "forget"))
    assert event_rows(reference_db_copy) == rows
    assert journal.read_entries(memory.backend.engine, REFERENCE_NAMESPACE) == []
    assert {memory.get_event(event_id).status for event_id in ("evt_51", "evt_55")} == {"active"}
    memory.close()
    other.close()


def test_one_bad_change_writes_none(reference_db_copy: Path):
    memory = _open(reference_db_copy)
    rows, revision = event_rows(reference_db_copy), memory.revision
    with pytest.raises(UnknownIdError, match="evt_404"):
        memory.curate_events([EventCuration("forget", "evt_51"), EventCuration("supersede", "evt_53", "evt_404")])
    assert event_rows(reference_db_copy) == rows and memory.revision == revision
    memory.close()
    forensic = _open(reference_db_copy, read_only=True)
    with pytest.raises(ReadOnlyError):
        forensic.curate_events([EventCuration("pin", "evt_51")])
    forensic.close()


def event_row(path: Path, event_id: str) -> dict[str, list[tuple]]:
    """The event's row and its source rows, every column."""
    with closing(sqlite3.connect(path)) as connection, connection:
        tables = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'event%'")]
        rows = {}
        for table in tables:
            column = "id" if table == "events" else "event_id"
            rows[table] = sorted(connection.execute(f'SELECT * FROM "{table}" WHERE {column} = ?', (event_id,)))
    connection.close()
    return rows


def test_pin_then_undo_with_the_record_before_leaves_the_row_byte_identical(reference_db_copy: Path):
    memory = _open(reference_db_copy)
    original = event_row(reference_db_copy, "evt_51")
    (pinned,) = memory.curate_events([EventCuration("pin", "evt_51")])
    assert pinned.after.updated_at != pinned.before.updated_at
    memory.curate_events([EventCuration("unpin", "evt_51")], restore_stamps_from=[pinned.before])
    assert event_row(reference_db_copy, "evt_51") == original
    memory.close()


def test_an_undo_keeps_the_new_stamp_when_the_event_changed_otherwise(reference_db_copy: Path):
    memory = _open(reference_db_copy)
    (pinned,) = memory.curate_events([EventCuration("pin", "evt_51")])
    memory.record_memory_use(["evt_51"], receipt_id="answer-1")
    (undone,) = memory.curate_events([EventCuration("unpin", "evt_51")], restore_stamps_from=[pinned.before])
    assert undone.after.weight.mention_count == pinned.before.weight.mention_count + 1
    assert undone.after.updated_at == pinned.after.updated_at != pinned.before.updated_at
    memory.close()
