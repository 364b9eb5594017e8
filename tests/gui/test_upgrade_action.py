"""File ▸ Upgrade to schema v7…: enabled only for an older SQLite file, asks first, then upgrades and reopens."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from stratagate_gui.upgrade import ACTION_TEXT, upgrade_open_file
from tests.storage.legacy_files import dump


def _action(window):
    return next(action for action in window.file_menu.actions() if action.text() == ACTION_TEXT)


def _version(path: Path) -> int:
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as connection:
        return connection.execute("PRAGMA user_version").fetchone()[0]


def test_the_dialog_says_what_the_upgrade_costs_and_cancel_changes_nothing(opened_window, reference_db_copy: Path):
    assert _action(opened_window).isEnabled()
    asked: list[str] = []

    def cancel(box: QMessageBox) -> bool:
        asked.append(f"{box.text()}\n{box.informativeText()}")
        return False

    before = dump(reference_db_copy)
    upgrade_open_file(opened_window, ask=cancel)
    assert opened_window.wait_idle()
    assert "from schema 5 to schema 7" in asked[0]
    assert "reference StrataGate (schema 5) will no longer open this file" in asked[0]
    assert f"{reference_db_copy}.bak-v5" in asked[0]
    assert dump(reference_db_copy) == before and opened_window.memory is not None


def test_accepting_upgrades_after_a_backup_and_reopens_writable(qtbot, opened_window, reference_db_copy: Path):
    original = dump(reference_db_copy)
    upgrade_open_file(opened_window, ask=lambda _box: True)
    qtbot.waitUntil(lambda: opened_window.memory is not None, timeout=30_000)  # closed, upgraded, reopened
    assert opened_window.wait_idle()
    assert _version(reference_db_copy) == 7 and dump(Path(f"{reference_db_copy}.bak-v5")) == original
    assert opened_window.memory is not None and not opened_window.memory.read_only
    assert opened_window.memory.backend.schema_version == 7 and not _action(opened_window).isEnabled()


def test_a_v7_file_has_nothing_to_upgrade(make_window, tmp_path: Path):
    import stratagate

    path = tmp_path / "new.sqlite"
    stratagate.open(path, "ns").close()
    window = make_window()
    window.open_location(str(path))
    assert window.wait_idle() and window.memory is not None
    assert not _action(window).isEnabled()
