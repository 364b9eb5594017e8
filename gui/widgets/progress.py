"""The app's one progress dialog for long work (opening, a long write, a slow query): it appears only once the
work has lasted half a second, and its Cancel button calls back so the work can stop at its next step."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressDialog, QWidget

APP_TITLE = "StrataGate Inspector"
SHOW_AFTER_MS = 500
"""Quick work never flashes a dialog."""


def cancellable_progress(
    parent: QWidget | None, text: str, on_cancel: Callable[[], object], maximum: int = 0
) -> QProgressDialog:
    """A window-modal progress dialog (busy indicator when `maximum` is 0) shown after `SHOW_AFTER_MS`."""
    dialog = QProgressDialog(text, "Cancel", 0, maximum, parent)
    dialog.setWindowTitle(APP_TITLE)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(SHOW_AFTER_MS)
    # Restart the show timer: the constructor's runs for Qt's default 4 s, and setMinimumDuration restarts it
    # only once a value was set.
    dialog.setValue(0)
    dialog.canceled.connect(on_cancel)
    return dialog


def close_progress(dialog: QProgressDialog | None) -> None:
    """Hide the dialog (or stop it from appearing) and let Qt delete it."""
    if dialog is not None:
        dialog.reset()
        dialog.deleteLater()
