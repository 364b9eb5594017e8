"""Curation and forensics mounted in the main window: tabs, Edit ▸ Undo/Redo across entities, F1/? help, and a
read-only open that disables every write control and leaves the file byte-identical."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QKeySequence

from stratagate import journal
from stratagate_gui.application import create_application
from stratagate_gui.curation.actions import Action
from stratagate_gui.curation.mount import mount
from stratagate_gui.main_window import MainWindow
from stratagate_gui.shortcuts import ShortcutsDialog, select_row
from tests.conftest import REFERENCE_NAMESPACE


@pytest.fixture
def window(qtbot, tmp_path: Path):
    create_application()
    window = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.views = mount(window.context)
    window.views.controller.confirm = lambda *_: True
    window.show()
    yield window
    window.history.clear()
    window.close()


def _open(window: MainWindow, path: Path, read_only: bool = False) -> None:
    window.open_location(str(path), REFERENCE_NAMESPACE, read_only=read_only)
    assert window.wait_idle()
    assert window.memory is not None


def _tabs(window: MainWindow) -> list[str]:
    return [window.tabs.tabText(index) for index in range(window.tabs.count())]


def test_views_follow_the_open_memory_and_undo_spans_entities(window, qtbot, reference_db_copy: Path):
    assert _tabs(window)[-4:] == ["Curation", "Journal", "Query workbench", "Receipts"]
    _open(window, reference_db_copy)
    views = window.views
    assert views.curation.model.total == 12 and views.receipts.table.rowCount() == 3
    views.controller.request(Action.PIN, ["evt_51"])
    window.wait_idle()
    views.controller.request(Action.FORGET, ["evt_85", "evt_86"])
    window.wait_idle()
    assert window.history.count() == 2
    assert window.undo_action.text().endswith("Forget 2 events")
    # Edit ▸ Undo is disabled while an undo is being written: each key press waits for the previous undo.
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    window.wait_idle()
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    window.wait_idle()
    assert window.history.index() == 0
    memory = window.memory
    events = window.worker.call(lambda: memory.get_events(["evt_51", "evt_85", "evt_86"]))
    assert [(event.weight.pinned, event.status) for event in events] == [(False, "active")] * 3
    qtbot.keyClick(
        window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    # The offscreen platform keeps the last event's modifiers as the application's: let go of Shift, so later
    # tests' clicks do not extend selections.
    qtbot.keyRelease(window, Qt.Key.Key_Shift)
    window.wait_idle()
    assert window.history.index() == 1
    assert window.worker.call(lambda: memory.get_event("evt_51").weight.pinned)
    window.wait_idle()
    assert views.journal.model.rowCount() == 7
    actions = [record.action for record in journal.read_entries(memory.backend.engine, REFERENCE_NAMESPACE)]
    assert actions == ["pin", "forget", "forget", "undo forget", "undo forget", "undo pin", "pin"]


def test_f1_and_question_mark_open_the_shortcuts_dialog(window, qtbot):
    action = next(action for action in window.actions() if action.text() == "&Keyboard shortcuts")
    assert action.shortcuts() == [QKeySequence("F1"), QKeySequence("?")]
    assert action in window.menuBar().actions()[-1].menu().actions()
    action.trigger()
    dialog = window.findChild(ShortcutsDialog)
    assert dialog is not None and dialog.isVisible()
    dialog.close()


def test_read_only_open_disables_curation_and_writes_nothing(window, reference_db_copy: Path):
    digest = hashlib.sha256(reference_db_copy.read_bytes()).hexdigest()
    _open(window, reference_db_copy, read_only=True)
    views = window.views
    assert not any(button.isEnabled() for button in views.curation.buttons.values())
    select_row(views.curation.table, 0)
    views.curation.toggle_pin()
    views.curation.toggle_forget()
    window.wait_idle()
    views.workbench.query.setText("Atlas")
    views.workbench.run()
    window.wait_idle()
    assert views.workbench.hits.rowCount() > 0
    views.journal.verify()
    window.wait_idle()
    assert views.journal.status.text().startswith("✔ journal OK: 0 entries")
    assert window.history.count() == 0
    window.close_memory()
    window.wait_idle()
    assert hashlib.sha256(reference_db_copy.read_bytes()).hexdigest() == digest
    assert sorted(path.name for path in reference_db_copy.parent.iterdir()) == [
        reference_db_copy.name,
        "settings.ini",
    ]
