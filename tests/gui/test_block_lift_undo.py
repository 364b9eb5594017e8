"""A user's block lift in the timeline is one step on the window's undo stack: undo puts the block's row back
exactly, redo lifts it again, and each write carries its journal entry (real SQLite copy of the reference)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from stratagate import journal
from tests.conftest import REFERENCE_NAMESPACE


def block_rows(path: Path, block_id: str) -> dict[str, list[tuple]]:
    with closing(sqlite3.connect(path)) as connection, connection:
        rows = {
            table: sorted(connection.execute(f'SELECT * FROM "{table}" WHERE {column} = ?', (block_id,)).fetchall())
            for table, column in (("blocks", "id"), ("messages", "block_id"))
        }
    connection.close()
    return rows


def test_lift_undo_redo(opened_window, reference_db_copy: Path):
    window, timeline = opened_window, opened_window.timeline
    original = block_rows(reference_db_copy, "blk_50")
    timeline.select_block("blk_50")
    timeline.lift_target.setCurrentIndex(2)
    timeline.lift_button.click()
    assert window.wait_idle()
    lifted = block_rows(reference_db_copy, "blk_50")
    assert lifted != original
    assert window.history.count() == 1 and window.history.undo_text() == "Lift blk_50 to L2"
    block = window.worker.call(lambda: window.memory.get_block("blk_50"))
    assert (block.pointer_anchor_level, block.last_lifted_by) == (2, "user")

    window.history.undo()
    assert window.wait_idle()
    assert block_rows(reference_db_copy, "blk_50") == original
    assert ("blk_50", 13, 24, 0) in [(b, s, e, lane) for b, s, e, lane, _level in timeline.plot.bars]

    window.history.redo()
    assert window.wait_idle()
    assert block_rows(reference_db_copy, "blk_50") == lifted
    entries = window.worker.call(lambda: journal.read_entries(window.memory.backend.engine, REFERENCE_NAMESPACE))
    assert [(entry.action, entry.ids) for entry in entries] == [
        ("lift", ["blk_50"]), ("undo lift", ["blk_50"]), ("lift", ["blk_50"])]
    assert entries[1].after == entries[0].before
    assert journal.verify(window.memory.backend.engine).ok


def test_a_conflicting_lift_undo_puts_the_stack_back_and_runs_again(opened_window, qtbot, reference_db_copy: Path):
    from stratagate.memory import open as open_memory
    from stratagate_gui.widgets.conflict_dialog import ConflictChoice

    window, timeline = opened_window, opened_window.timeline
    conflicts: list[str] = []
    window.writes.resolve_conflict = lambda what, *_: conflicts.append(what) or ConflictChoice.CANCEL
    original = block_rows(reference_db_copy, "blk_50")
    timeline.select_block("blk_50")
    timeline.lift_target.setCurrentIndex(4)
    timeline.lift_button.click()
    assert window.wait_idle()
    other = open_memory(reference_db_copy, REFERENCE_NAMESPACE)
    other.pin_event("evt_51")
    lifted = block_rows(reference_db_copy, "blk_50")
    window.history.undo()
    qtbot.waitUntil(lambda: conflicts == ["Undo Lift blk_50 to L4"] and window.history.index() == 1)
    assert window.wait_idle()
    assert block_rows(reference_db_copy, "blk_50") == lifted
    window.history.undo()  # the memory was re-read after the conflict: this time it applies
    assert window.wait_idle()
    assert block_rows(reference_db_copy, "blk_50") == original and window.history.index() == 0
    other.close()
