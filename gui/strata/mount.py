"""Strata ▸ Open Strata data directory…: pick a Strata store and show it in a tab of the main window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMessageBox

from stratagate.errors import StrataGateError
from stratagate_gui.strata.browser import StrataBrowser

MENU_TITLE = "&Strata"
OPEN_ACTION_TEXT = "Open Strata data directory…"


def add_strata_menu(window: Any) -> QAction:
    """Add the Strata menu to `window` (a `MainWindow`, which provides `add_view` and `show_view`)."""
    action = window.menuBar().addMenu(MENU_TITLE).addAction(OPEN_ACTION_TEXT)
    action.triggered.connect(lambda: choose_data_directory(window))
    return action


def choose_data_directory(window: Any) -> None:
    folder = QFileDialog.getExistingDirectory(window, "Open Strata data directory")
    if folder:
        open_data_directory(window, Path(folder))


def open_data_directory(window: Any, folder: Path) -> StrataBrowser | QMessageBox | None:
    """Show the store at `folder` in a new tab; a folder that is not a usable store gets an error dialog."""
    try:
        browser = StrataBrowser(folder, window.writes)
    except (StrataGateError, OSError) as error:
        window.writes.report(f"open the Strata store {folder}", error)
        return window.writes.error_box
    window.add_view(f"Strata — {browser.store.base_dir.name}", browser)
    window.show_view(browser)
    return browser
