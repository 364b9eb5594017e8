"""Curation through the undo stack, on real SQLite copies of the reference database.

Every action goes through the engine facade with a journal entry; undo/redo are exact inverses; a second
writer on the same file produces a conflict that is resolved by reload or retry without losing anything.
"""

from __future__ import annotations

import gc
import hashlib
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from stratagate import journal
from stratagate.memory import open as open_memory
from stratagate.weights import SUPERSEDED_CAP
from stratagate_gui.curation.actions import Action
from stratagate_gui.curation.controller import CurationController
from stratagate_gui.curation.dialogs import preview_rows
from stratagate_gui.curation.view import matching_event_ids
from stratagate_gui.undo import UndoHistory
from stratagate_gui.widgets.conflict_dialog import ConflictChoice
from stratagate_gui.workers import DatabaseWorker
from stratagate_gui.writes import Writes
from tests.conftest import REFERENCE_NAMESPACE
from tests.core.helpers import reference_memory

FIXED_NOW = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
JOURNAL_TABLES = {journal.JOURNAL_TABLE, journal.HEADS_TABLE}


def _open(path: Path, read_only: bool = False):
    return open_memory(path, REFERENCE_NAMESPACE, read_only=read_only, now=lambda: FIXED_NOW)


def dump_rows(path: Path) -> dict[str, list[tuple]]:
    """Every row of every StrataGate table. The journal grows on purpose, and the space row's revision and
    wall-clock `updated_at` move on every commit, so those are left out."""
    with closing(sqlite3.connect(path)) as connection, connection:
        names = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = {}
        for name in sorted(set(names) - JOURNAL_TABLES):
            cursor = connection.execute(f'SELECT * FROM "{name}"')
            columns = [description[0] for description in cursor.description]
            keep = [i for i, column in enumerate(columns) if (name, column) not in _MOVING_COLUMNS]
            rows[name] = sorted((tuple(row[i] for i in keep) for row in cursor), key=repr)
    connection.close()
    return rows


_MOVING_COLUMNS = {("memory_spaces", "revision"), ("memory_spaces", "updated_at")}


class Harness:
    def __init__(self, qtbot, path: Path, read_only: bool = False):
        self.qtbot = qtbot
        self.path = path
        self.memory = _open(path, read_only)
        self.worker = DatabaseWorker()
        self.writes = Writes(self.worker)
        self.writes.set_memory(self.memory)
        self.stack = UndoHistory(self.writes)
        self.controller = CurationController(self.writes, self.stack)
        self.previews: list[tuple[str, list, int]] = []
        self.conflicts: list[tuple] = []
        self.conflict_choice = ConflictChoice.RETRY
        self.controller.confirm = lambda title, steps, turn: (
            self.previews.append((title, steps, turn)) or True
        )
        self.writes.resolve_conflict = self._resolve

    def _resolve(self, what, error, expected, current):
        self.conflicts.append((what, error, expected, current))
        return self.conflict_choice

    def request(self, action: Action, ids: list[str], replacement_id: str | None = None) -> None:
        self.controller.request(action, ids, replacement_id)
        self.idle()

    def idle(self) -> None:
        self.qtbot.waitUntil(lambda: self.worker.pending == 0)

    def event(self, event_id: str):
        return self.worker.call(lambda: self.memory.get_event(event_id))

    def journal(self) -> list[journal.JournalRecord]:
        return self.worker.call(lambda: journal.read_entries(self.memory.backend.engine, REFERENCE_NAMESPACE))

    def close(self) -> None:
        self.worker.call(self.memory.close)
        self.worker.shutdown()
        # Delete the commands here, on the GUI thread, not whenever the garbage collector next runs.
        self.stack.clear()
        gc.collect()


@pytest.fixture
def harness(qtbot, reference_db_copy: Path):
    h = Harness(qtbot, reference_db_copy)
    yield h
    h.close()


def test_pin_previews_weights_writes_a_journal_entry_and_pushes_one_command(harness):
    harness.request(Action.PIN, ["evt_51"])
    assert harness.event("evt_51").weight.pinned
    ((title, steps, turn),) = harness.previews
    assert title == "Pin evt_51" and turn == 40
    row = preview_rows(steps, turn)[0]
    assert row[0] == "evt_51" and row[3] == "no → yes"
    assert row[4].endswith("→ 1.000") and not row[4].startswith("1.000")
    assert harness.stack.count() == 1 and harness.stack.undo_text() == "Pin evt_51"
    (entry,) = harness.journal()
    assert (entry.actor, entry.action, entry.ids) == ("reviewer", "pin", ["evt_51"])
    assert (entry.before["pinned"], entry.after["pinned"]) == (False, True)


def test_an_action_that_changes_nothing_pushes_nothing(harness):
    harness.request(Action.RESTORE, ["evt_51"])  # already active
    assert harness.stack.count() == 0 and harness.journal() == []


def test_forgetting_a_selection_is_one_macro_and_undo_restores_each_exact_state(harness):
    before = {event_id: harness.event(event_id) for event_id in ("evt_51", "evt_53", "evt_55")}
    assert before["evt_53"].status == "superseded"
    harness.request(Action.FORGET, list(before))
    command = harness.stack.command(0)
    assert command.text() == "Forget 3 events"
    assert [step.event_id for step in command.steps] == list(before)
    assert {harness.event(event_id).status for event_id in before} == {"forgotten"}

    harness.stack.undo()
    harness.idle()
    for event_id, old in before.items():
        now = harness.event(event_id)
        assert (now.status, now.superseded_by, now.weight.forced_cap) == (
            old.status,
            old.superseded_by,
            old.weight.forced_cap,
        )
    actions = [entry.action for entry in harness.journal()]
    assert actions == ["forget"] * 3 + ["undo forget"] * 3
    assert journal.verify(harness.memory.backend.engine).ok


@pytest.mark.parametrize(
    ("action", "ids", "replacement"),
    [
        (Action.PIN, ["evt_51", "evt_55"], None),
        (Action.UNPIN, ["evt_52"], None),
        (Action.FORGET, ["evt_53", "evt_55"], None),
        (Action.ARCHIVE, ["evt_61", "evt_83"], None),
        (Action.SUPERSEDE, ["evt_51", "evt_54"], "evt_87"),
    ],
)
def test_undo_then_redo_leaves_every_row_identical(harness, action, ids, replacement):
    harness.request(action, ids, replacement)
    after_action = dump_rows(harness.path)
    harness.stack.undo()
    harness.idle()
    assert dump_rows(harness.path) != after_action
    harness.stack.redo()
    harness.idle()
    assert dump_rows(harness.path) == after_action
    assert journal.verify(harness.memory.backend.engine).ok


def test_supersede_by_an_existing_event_and_its_exact_undo(harness):
    harness.request(Action.SUPERSEDE, ["evt_51", "evt_54"], "evt_87")
    first, second = harness.event("evt_51"), harness.event("evt_54")
    assert (first.status, first.superseded_by, first.weight.forced_cap) == (
        "superseded",
        "evt_87",
        SUPERSEDED_CAP,
    )
    assert second.superseded_by == "evt_87"
    original_54 = harness.stack.command(0).steps[1].before
    harness.stack.undo()
    harness.idle()
    first, second = harness.event("evt_51"), harness.event("evt_54")
    assert (first.status, first.superseded_by, first.weight.forced_cap) == ("active", None, None)
    # evt_54 was already superseded by another event: undo gives that supersession back, not "active".
    assert (second.status, second.superseded_by) == (original_54.status, original_54.superseded_by)


def test_a_corrected_card_supersedes_and_undo_archives_it(harness):
    card = {"id": "evt_corrected", "title": "Atlas kickoff (corrected)", "summary": "Kickoff was on Tuesday."}
    harness.controller.request_correction(["evt_51"], card)
    harness.idle()
    new, old = harness.event("evt_corrected"), harness.event("evt_51")
    assert (new.status, new.title) == ("active", "Atlas kickoff (corrected)")
    assert (old.status, old.superseded_by) == ("superseded", "evt_corrected")
    row = preview_rows(harness.previews[0][1], 40)[0]
    assert row[2] == "new → active"
    after_action = dump_rows(harness.path)
    harness.stack.undo()
    harness.idle()
    assert harness.event("evt_corrected").status == "archived"
    assert (harness.event("evt_51").status, harness.event("evt_51").superseded_by) == ("active", None)
    harness.stack.redo()
    harness.idle()
    assert dump_rows(harness.path) == after_action
    assert [entry.action for entry in harness.journal()] == [
        "correct",
        "undo correct",
        "undo correct",
        "correct",
        "correct",
    ]


def test_conflict_with_another_writer_then_retry_keeps_both_changes(harness):
    other = _open(harness.path)
    harness.worker.call(lambda: harness.memory.get_event("evt_51"))  # this window has read the memory
    other.pin_event("evt_51")
    harness.request(Action.FORGET, ["evt_51"])
    ((what, error, expected, current),) = harness.conflicts
    assert what == "Forget evt_51"
    assert error.actual_revision == error.expected_revision + 1
    assert expected[0][1].pinned is False and current["evt_51"].pinned is True
    stored = harness.event("evt_51")
    assert (stored.status, stored.weight.pinned) == ("forgotten", True)
    assert harness.stack.count() == 1
    other.close()


def test_conflict_then_reload_applies_nothing_and_shows_the_other_writers_state(harness):
    other = _open(harness.path)
    harness.worker.call(lambda: harness.memory.get_event("evt_56"))
    other.archive_event("evt_56")
    harness.conflict_choice = ConflictChoice.RELOAD
    harness.request(Action.PIN, ["evt_56"])
    assert len(harness.conflicts) == 1
    stored = harness.event("evt_56")
    assert (stored.status, stored.weight.pinned) == ("archived", False)
    assert harness.stack.count() == 0 and harness.journal() == []
    other.close()


def test_a_conflicting_undo_puts_the_stack_back_and_retry_finishes_it(harness):
    harness.request(Action.PIN, ["evt_55"])
    other = _open(harness.path)
    other.forget_event("evt_83")
    harness.conflict_choice = ConflictChoice.CANCEL
    harness.stack.undo()
    harness.idle()
    harness.qtbot.waitUntil(lambda: len(harness.conflicts) == 1 and harness.stack.index() == 1)
    harness.idle()
    assert harness.event("evt_55").weight.pinned  # the undo did not happen, and the stack says so
    harness.stack.undo()  # the memory was re-read after the conflict: this time it applies
    harness.idle()
    assert not harness.event("evt_55").weight.pinned and harness.stack.index() == 0
    assert harness.event("evt_83").status == "forgotten"
    other.close()


def test_read_only_memory_refuses_curation_and_the_file_stays_byte_identical(qtbot, reference_db_copy: Path):
    digest = hashlib.sha256(reference_db_copy.read_bytes()).hexdigest()
    h = Harness(qtbot, reference_db_copy, read_only=True)
    messages: list[str] = []
    h.writes.message.connect(messages.append)
    assert not h.controller.writable
    h.request(Action.PIN, ["evt_51"])
    h.controller.request_correction(["evt_51"], {"id": "evt_x", "title": "t", "summary": "s"})
    h.idle()
    assert h.previews == [] and h.stack.count() == 0
    assert messages and "read-only" in messages[0]
    h.close()
    assert hashlib.sha256(reference_db_copy.read_bytes()).hexdigest() == digest
    assert not reference_db_copy.with_name(reference_db_copy.name + "-wal").exists()


BATCH_IDS = ["evt_51", "evt_53", "evt_55"]


def test_a_selection_action_is_one_revision_and_so_is_its_undo(harness):
    before = dump_rows(harness.path)
    revision = harness.worker.call(lambda: harness.memory.revision)
    harness.request(Action.FORGET, BATCH_IDS)
    assert harness.worker.call(lambda: harness.memory.revision) == revision + 1
    assert [entry.action for entry in harness.journal()] == ["forget"] * 3
    harness.stack.undo()
    harness.idle()
    assert harness.worker.call(lambda: harness.memory.revision) == revision + 2
    assert {harness.event(event_id).status for event_id in ("evt_51", "evt_55")} == {"active"}
    assert harness.event("evt_53").status == "superseded"
    assert len(dump_rows(harness.path)["events"]) == len(before["events"])


def test_a_conflict_leaves_the_whole_selection_unchanged(harness):
    harness.worker.call(lambda: harness.memory.get_event("evt_51"))
    other = _open(harness.path)
    other.pin_event("evt_83")
    rows = dump_rows(harness.path)
    harness.conflict_choice = ConflictChoice.RELOAD
    harness.request(Action.FORGET, BATCH_IDS)
    assert len(harness.conflicts) == 1
    assert dump_rows(harness.path) == rows
    assert harness.stack.count() == 0 and harness.journal() == []
    other.close()


@pytest.mark.parametrize(
    ("action", "ids", "replacement"),
    [
        (Action.PIN, ["evt_51"], None),
        (Action.FORGET, ["evt_51", "evt_53", "evt_55"], None),
        (Action.SUPERSEDE, ["evt_51", "evt_54"], "evt_87"),
    ],
)
def test_do_then_undo_leaves_every_row_byte_identical(harness, action, ids, replacement):
    original = dump_rows(harness.path)
    harness.request(action, ids, replacement)
    assert dump_rows(harness.path) != original
    harness.stack.undo()
    harness.idle()
    assert dump_rows(harness.path) == original  # updatedAt included: the undo restores the earlier stamps


def test_supersede_by_an_unknown_id_is_refused_before_any_preview(harness):
    errors: list[str] = []
    harness.writes.show_error = lambda _title, text: errors.append(text)
    harness.request(Action.SUPERSEDE, ["evt_51"], "blk_bogus:evt:99")
    assert harness.previews == [] and harness.stack.count() == 0
    (error,) = errors
    assert "blk_bogus:evt:99" in error


@pytest.mark.parametrize("stored", ["sqlite", "in memory"])
def test_the_supersede_lookup_finds_ids_by_any_part_the_exact_one_first(stored, reference_db_copy: Path):
    memory = _open(reference_db_copy, read_only=True) if stored == "sqlite" else reference_memory()
    try:
        every_id = memory.event_ids()
        assert matching_event_ids(memory, "EVT_8") == [i for i in every_id if "evt_8" in i]
        exact = every_id[-1]
        assert matching_event_ids(memory, exact)[0] == exact
        assert matching_event_ids(memory, "evt_", limit=3) == every_id[:3]
        assert matching_event_ids(memory, "blk_bogus:evt:99") == []
        assert matching_event_ids(memory, "%") == []  # a character, not a pattern
        assert matching_event_ids(memory, "evt_8" * 20_000) == []  # a paste longer than a LIKE pattern may be
    finally:
        memory.close()
