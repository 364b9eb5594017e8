"""Keyboard-first triage in the curation view: j/k, p, f, /, and the shortcuts dialog."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from stratagate.memory import open as open_memory
from stratagate_gui import shortcuts
from stratagate_gui.curation.controller import CurationController
from stratagate_gui.curation.view import CurationView, SupersedeDialog
from stratagate_gui.shortcuts import select_row
from stratagate_gui.undo import UndoHistory
from stratagate_gui.workers import DatabaseWorker
from stratagate_gui.writes import Writes
from tests.conftest import REFERENCE_NAMESPACE


@pytest.fixture
def triage(qtbot, reference_db_copy: Path):
    worker = DatabaseWorker()
    writes = Writes(worker)
    stack = UndoHistory(writes)
    controller = CurationController(writes, stack)
    controller.confirm = lambda *_: True
    view = CurationView(controller)
    qtbot.addWidget(view)
    memory = open_memory(
        reference_db_copy, REFERENCE_NAMESPACE, now=lambda: datetime(2026, 12, 1, tzinfo=UTC)
    )
    writes.set_memory(memory)
    view.set_memory(memory)
    view.show()
    qtbot.waitExposed(view)
    view.activateWindow()
    qtbot.waitUntil(lambda: view.model.rowCount() == 12)
    view.table.setFocus()
    yield view, memory, worker, stack
    stack.clear()
    worker.call(memory.close)
    worker.shutdown()


def _idle(qtbot, worker):
    qtbot.waitUntil(lambda: worker.pending == 0)


def test_j_and_k_move_the_selected_row(qtbot, triage):
    view, *_ = triage
    select_row(view.table, 0)
    qtbot.keyClick(view.table, Qt.Key.Key_J)
    assert view.selected_ids() == ["evt_52"]
    qtbot.keyClick(view.table, Qt.Key.Key_J)
    qtbot.keyClick(view.table, Qt.Key.Key_J)
    assert view.selected_ids() == ["evt_54"]
    qtbot.keyClick(view.table, Qt.Key.Key_K)
    assert view.selected_ids() == ["evt_53"]
    for _ in range(20):
        qtbot.keyClick(view.table, Qt.Key.Key_J)
    assert view.selected_ids() == ["evt_87"]  # stops at the last row


def test_p_toggles_the_pin_and_f_toggles_forget(qtbot, triage):
    view, memory, worker, stack = triage
    select_row(view.table, 0)  # evt_51
    qtbot.keyClick(view.table, Qt.Key.Key_P)
    _idle(qtbot, worker)
    assert worker.call(lambda: memory.get_event("evt_51").weight.pinned)
    qtbot.keyClick(view.table, Qt.Key.Key_P)
    _idle(qtbot, worker)
    assert not worker.call(lambda: memory.get_event("evt_51").weight.pinned)
    qtbot.keyClick(view.table, Qt.Key.Key_F)
    _idle(qtbot, worker)
    assert worker.call(lambda: memory.get_event("evt_51").status) == "forgotten"
    qtbot.keyClick(view.table, Qt.Key.Key_F)
    _idle(qtbot, worker)
    assert worker.call(lambda: memory.get_event("evt_51").status) == "active"
    assert [stack.command(index).text() for index in range(stack.count())] == [
        "Pin evt_51",
        "Unpin evt_51",
        "Forget evt_51",
        "Restore evt_51",
    ]


def test_p_on_a_multi_selection_pins_them_all_in_one_command(qtbot, triage):
    view, memory, worker, stack = triage
    select_row(view.table, 0)
    qtbot.keyClick(view.table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(view.table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    ids = view.selected_ids()
    assert ids == ["evt_51", "evt_52", "evt_53"]
    qtbot.keyClick(view.table, Qt.Key.Key_P)
    _idle(qtbot, worker)
    assert stack.count() == 1
    assert all(event.weight.pinned for event in worker.call(lambda: memory.get_events(ids)))


def test_slash_focuses_the_search_box_and_typing_there_curates_nothing(qtbot, triage):
    view, _memory, worker, stack = triage
    qtbot.keyClick(view.table, Qt.Key.Key_Slash)
    assert QApplication.focusWidget() is view.search
    qtbot.keyClicks(view.search, "peanut")
    qtbot.keyClick(view.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: view.model.rowCount() == 1)
    _idle(qtbot, worker)
    assert stack.count() == 0 and view.search.text() == "peanut"


def test_shortcuts_dialog_lists_every_binding():
    dialog = shortcuts.ShortcutsDialog()
    listed = [dialog.table.item(row, 1).text() for row in range(dialog.table.rowCount())]
    assert listed == [shortcut.action for shortcut in shortcuts.SHORTCUTS]
    keys = [dialog.table.item(row, 0).text() for row in range(dialog.table.rowCount())]
    for expected in ("J", "K", "P", "F", "/", "Ctrl+Z", "Ctrl+Shift+Z or Ctrl+Y", "F1 or ?"):
        assert expected in keys
    dialog.deleteLater()


def test_read_only_memory_disables_every_curation_control(qtbot, reference_db_copy: Path):
    worker = DatabaseWorker()
    writes = Writes(worker)
    stack = UndoHistory(writes)
    controller = CurationController(writes, stack)
    view = CurationView(controller)
    qtbot.addWidget(view)
    memory = open_memory(reference_db_copy, REFERENCE_NAMESPACE, read_only=True)
    writes.set_memory(memory)
    view.set_memory(memory)
    view.show()  # the list is read when the view is shown
    qtbot.waitUntil(lambda: view.model.rowCount() == 12)
    assert not any(button.isEnabled() for button in view.buttons.values())
    select_row(view.table, 0)
    view.toggle_pin()
    _idle(qtbot, worker)
    assert stack.count() == 0
    worker.call(memory.close)
    worker.shutdown()


def test_a_hidden_curation_view_reads_its_list_only_when_shown(qtbot, reference_db_copy: Path):
    """Opening a memory must not list its events for a tab nobody looks at (a million ids before the paint)."""
    worker = DatabaseWorker()
    writes = Writes(worker)
    view = CurationView(CurationController(writes, UndoHistory(writes)))
    qtbot.addWidget(view)
    memory = open_memory(reference_db_copy, REFERENCE_NAMESPACE, read_only=True)
    writes.set_memory(memory)
    view.set_memory(memory)
    view.status_filter.setCurrentIndex(1)  # a filter changed while hidden: still nothing read
    qtbot.wait(100)
    assert worker.pending == 0 and view.model.total == 0
    view.show()
    qtbot.waitUntil(lambda: view.model.rowCount() > 0)
    assert view.count_label.text().endswith("events")
    worker.call(memory.close)
    worker.shutdown()


def test_s_asks_for_the_replacement_searching_the_ids_on_the_worker(qtbot, triage, monkeypatch):
    view, memory, worker, stack = triage
    asked = []

    def answer_like_a_user(dialog):
        asked.append(dialog)
        qtbot.keyClicks(dialog.existing_id, "87")
        qtbot.waitUntil(lambda: dialog.suggestions.stringList() == ["evt_87"])  # answered by the database
        dialog.existing_id.setText("evt_87")
        dialog.ok_button.click()
        return dialog.result()

    monkeypatch.setattr(SupersedeDialog, "exec", answer_like_a_user)
    select_row(view.table, 0)  # evt_51
    qtbot.keyClick(view.table, Qt.Key.Key_S)
    _idle(qtbot, worker)
    assert len(asked) == 1
    assert worker.call(lambda: memory.get_event("evt_51").superseded_by) == "evt_87"
    assert stack.count() == 1
