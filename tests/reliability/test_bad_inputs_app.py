"""Every bad database of the corpus, opened in the real main window (headless), gets a dialog naming the file
(at open, or for a damaged row when a view first reads it), and the file's sha256 is unchanged. Files of schema 8-12 open read-only with their notice instead."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.bad_inputs.corpus import database_cases, newer_schema_cases


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def dialogs(monkeypatch) -> list[tuple[str, str]]:
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr("stratagate_gui.writes.Writes._error_dialog",
                        lambda _writes, title, text: shown.append((title, text)))
    return shown


@pytest.mark.slow
def test_each_bad_database_gets_a_dialog_naming_it(make_window, qtbot, tmp_path: Path, dialogs) -> None:
    window = make_window()
    for name, path, words in database_cases(tmp_path / "corpus"):
        before = _sha256(path)
        dialogs.clear()
        window.open_location(str(path))
        assert window.wait_idle()
        for tab in range(window.tabs.count()):  # a damaged row is read when a view first draws it
            window.tabs.setCurrentIndex(tab)
            qtbot.waitUntil(window.wait_idle)  # drawing a view may queue a read after the previous one
        assert dialogs, f"{name}: no dialog"
        title, text = dialogs[0]
        assert str(path) in f"{title}\n{text}" and words in text, f"{name}: {dialogs}"
        assert _sha256(path) == before, f"{name}: the file changed"


def test_newer_schema_files_open_read_only_with_their_notice(make_window, tmp_path: Path, dialogs) -> None:
    window = make_window()
    for name, path, notice in newer_schema_cases(tmp_path / "newer"):
        before = _sha256(path)
        window.open_location(str(path), "bad")
        assert window.wait_idle()
        assert dialogs == [], f"{name}: {dialogs}"
        assert window.memory is not None and window.memory.read_only, name
        assert notice in window.opened.notice, name
        assert _sha256(path) == before, f"{name}: the file changed"
