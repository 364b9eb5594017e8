"""Strata ▸ Open Strata data directory…: pick a Strata store and show it in a tab of the main window."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMessageBox

from stratagate.errors import StrataGateError
from stratagate_gui.strata.browser import StrataBrowser

if TYPE_CHECKING:
    from stratagate_gui.context import AppContext

MENU_TITLE = "&Strata"
OPEN_ACTION_TEXT = "Open Strata data directory…"


def mount(ctx: AppContext) -> QAction:
    """Add the Strata menu; each store opened from it becomes a tab of the window."""
    action = ctx.host.add_menu(MENU_TITLE).addAction(OPEN_ACTION_TEXT)
    action.triggered.connect(lambda: choose_data_directory(ctx))
    return action


def choose_data_directory(ctx: AppContext) -> None:
    folder = QFileDialog.getExistingDirectory(ctx.host, "Open Strata data directory")
    if folder:
        open_data_directory(ctx, Path(folder))


def open_data_directory(ctx: AppContext, folder: Path) -> StrataBrowser | QMessageBox | None:
    """Show the store at `folder` in a new tab; a folder that is not a usable store gets an error dialog."""
    try:
        browser = StrataBrowser(folder, ctx.writes)
    except (StrataGateError, OSError) as error:
        ctx.writes.report(f"open the Strata store {folder}", error)
        return ctx.writes.error_box
    ctx.host.add_view(f"Strata — {browser.store.base_dir.name}", browser)
    ctx.host.show_view(browser)
    return browser
