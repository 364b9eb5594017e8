"""The password prompt for a database URL kept without its password (File ▸ Open recent, a typed URL):
masked input, window-modal, never blocking the event loop; the password is used for that open only."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QLineEdit, QWidget


def ask_password(
    parent: QWidget, shown_location: str, refused: bool, on_password: Callable[[str], object]
) -> QInputDialog:
    """Ask for the password of `shown_location` (already masked); `refused` says the server refused the last
    one. `on_password(password)` runs if the user confirms; Cancel drops the open."""
    dialog = QInputDialog(parent)
    dialog.setWindowTitle("Database password")
    reason = "The server refused the password.\n\n" if refused else ""
    dialog.setLabelText(f"{reason}Password for {shown_location}:")
    dialog.setTextEchoMode(QLineEdit.EchoMode.Password)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.textValueSelected.connect(on_password)
    dialog.open()
    return dialog
