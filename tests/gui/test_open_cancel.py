"""A slow open shows a progress dialog with Cancel; cancelling stops it, closes what it opened, and leaves the
window as it was."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog, QPushButton

import stratagate_gui.opening as opening
from stratagate.storage.sql import SqlBackend


def click_cancel(qtbot, progress: QProgressDialog) -> None:
    cancel = progress.findChild(QPushButton)
    assert cancel is not None and cancel.text() == "Cancel"
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)


def test_cancelling_a_connection_that_never_answers_keeps_the_memory_that_was_open(
    make_window, qtbot, reference_db_copy: Path
):
    # A listening socket that never accepts: the PostgreSQL connection attempt waits for its timeout.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    port = silent.getsockname()[1]
    errors: list[str] = []
    failed: list[tuple[str, str]] = []
    window = make_window()
    window.writes.show_error = lambda _title, text: errors.append(text)
    window.open_failed.connect(lambda location, reason: failed.append((location, reason)))
    window.open_location(str(reference_db_copy), "project:atlas")
    assert window.wait_idle()
    before = window.memory
    try:
        window.open_location(f"postgresql+psycopg://ada:secret@127.0.0.1:{port}/memory")
        progress = window._progress
        qtbot.waitUntil(progress.isVisible, timeout=5_000)
        assert progress.labelText().startswith("Opening postgresql+psycopg://ada:***@")
        click_cancel(qtbot, progress)
        assert window._progress is None
        assert window.memory is before and window.opened.location == str(reference_db_copy)
        assert window.wait_idle(60_000)  # the attempt runs to its connect timeout, then is dropped
    finally:
        silent.close()
    assert window.memory is before
    assert errors == [] and failed == []


def test_cancel_during_a_slow_step_closes_what_the_open_had_opened(make_window, qtbot, reference_db_copy: Path,
                                                                   monkeypatch):
    step_started, release = threading.Event(), threading.Event()
    closed: list[object] = []
    original_list_threads = opening.list_threads

    def slow_list_threads(memory):
        step_started.set()
        release.wait(30)
        return original_list_threads(memory)

    backend_close = SqlBackend.close

    def spy_close(self):
        closed.append(self)
        backend_close(self)

    monkeypatch.setattr(opening, "list_threads", slow_list_threads)
    monkeypatch.setattr(SqlBackend, "close", spy_close)
    window = make_window()
    started = time.monotonic()
    window.open_location(str(reference_db_copy), "project:atlas")
    assert step_started.wait(10)
    qtbot.waitUntil(window._progress.isVisible, timeout=5_000)
    # After half a second, not Qt's default four (loaded machine: some slack).
    assert 0.4 < time.monotonic() - started < 2.5
    click_cancel(qtbot, window._progress)
    release.set()
    assert window.wait_idle()
    assert window.memory is None and window.opened is None
    assert len(closed) == 1 and closed[0].location == str(reference_db_copy)


def test_closing_the_window_during_an_open_closes_what_the_open_had_opened(make_window, reference_db_copy: Path,
                                                                           monkeypatch):
    step_started, release = threading.Event(), threading.Event()
    closed: list[SqlBackend] = []
    original_list_threads, backend_close = opening.list_threads, SqlBackend.close

    def slow_list_threads(memory):
        step_started.set()
        release.wait(30)
        return original_list_threads(memory)

    def spy_close(self):
        closed.append(self)
        backend_close(self)

    monkeypatch.setattr(opening, "list_threads", slow_list_threads)
    monkeypatch.setattr(SqlBackend, "close", spy_close)
    window = make_window()
    window.open_location(str(reference_db_copy), "project:atlas")
    assert step_started.wait(10)
    # Closing waits for the running task; the step finishes shortly after, from another thread.
    threading.Timer(0.2, release.set).start()
    window.close()
    assert len(closed) == 1 and closed[0].location == str(reference_db_copy)
