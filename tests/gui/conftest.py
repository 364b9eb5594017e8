"""A main window with the core views, opened on a private copy of the reference memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from stratagate_gui.application import build_main_window, create_application


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    """Per-test settings in a temp file, so recent files and theme never touch the user's own."""
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def make_window(qtbot, settings):
    create_application()
    windows = []

    def make():
        window = build_main_window(settings)
        qtbot.addWidget(window)
        window.resize(1280, 800)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.close()


@pytest.fixture
def opened_window(make_window, reference_db_copy: Path):
    """The window on the reference memory, writable (a copy: the original fixture is never opened)."""
    window = make_window()
    window.open_location(str(reference_db_copy), "project:atlas")
    assert window.wait_idle()
    assert window.memory is not None
    return window
