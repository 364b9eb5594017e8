"""The write-conflict dialog of the write path: another writer committed first; reload, retry or cancel."""

from __future__ import annotations

from enum import Enum
from typing import Any

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout, QWidget

from stratagate.errors import StorageConflictError
from stratagate_gui.widgets.tables import fit_dialog_to_table, readonly_table


class ConflictChoice(Enum):
    RELOAD = "reload"
    RETRY = "retry"
    CANCEL = "cancel"


class ConflictDialog(QDialog):
    """Another writer committed first. Shows its revision and the affected records as they are now stored,
    next to what this write expected, and offers Reload (drop the write, show the new state) or Retry
    (apply the write again on the new state). Nothing is written until the user chooses.

    A state is shown by `str(state)`: the write's own records say what they are (`EventState.__str__`)."""

    def __init__(
        self,
        what: str,
        error: StorageConflictError,
        expected: list[tuple[str, Any]],
        current: dict[str, Any],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Another writer changed this memory")
        self.choice = ConflictChoice.CANCEL
        found = "deleted" if error.actual_revision is None else f"revision {error.actual_revision}"
        message = QLabel(
            f"“{what}” was not written: another writer committed {found} of {error.namespace} "
            f"after this window read revision {error.expected_revision}.\n"
            "Reload shows the memory as it is now; Retry applies the action again on top of it.",
            self,
        )
        message.setWordWrap(True)
        rows = []
        for record_id, state in expected:
            now = current.get(record_id)
            rows.append(
                (
                    record_id,
                    str(state),
                    "missing" if now is None else str(now),
                    "unchanged" if now == state else "changed",
                )
            )
        self.table = readonly_table(self, ("Record", "This window had", "Stored now", ""), rows)
        buttons = QDialogButtonBox(self)
        self.reload_button = QPushButton("Reload", self)
        self.retry_button = QPushButton("Retry", self)
        buttons.addButton(self.reload_button, QDialogButtonBox.ButtonRole.ResetRole)
        buttons.addButton(self.retry_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.reload_button.clicked.connect(lambda: self._choose(ConflictChoice.RELOAD))
        self.retry_button.clicked.connect(lambda: self._choose(ConflictChoice.RETRY))
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(message)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        fit_dialog_to_table(self, self.table, 300)

    def _choose(self, choice: ConflictChoice) -> None:
        self.choice = choice
        self.accept()
