"""The dialogs of curation: the preview of what an action changes, and the write-conflict dialog."""

from __future__ import annotations

from enum import Enum

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stratagate.errors import StorageConflictError
from stratagate_gui.curation.actions import LABELS, EventState, Step

PREVIEW_COLUMNS = ("Event", "Title", "Status", "Pinned", "Weight", "Superseded by")


def _arrow(before: object, after: object) -> str:
    return str(before) if before == after else f"{before} → {after}"


def _weight(value: float) -> str:
    return f"{value:.3f}"


def _table(parent: QWidget, headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> QTableWidget:
    table = QTableWidget(len(rows), len(headers), parent)
    table.setHorizontalHeaderLabels(list(headers))
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    for row, values in enumerate(rows):
        for column, value in enumerate(values):
            table.setItem(row, column, QTableWidgetItem(value))
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def preview_rows(steps: list[Step], turn: int) -> list[tuple[str, ...]]:
    """One row per step: status, pinned flag, weight (at `turn`) and replacement, before → after."""
    rows = []
    for step in steps:
        weight_before, weight_after = step.weights(turn)
        rows.append(
            (
                step.event_id,
                step.title,
                _arrow("new" if step.creates else step.before.status, step.after.status),
                _arrow(step.before.pinned, step.after.pinned),
                _arrow("—" if step.creates else _weight(weight_before), _weight(weight_after)),
                _arrow(step.before.superseded_by or "—", step.after.superseded_by or "—"),
            )
        )
    return rows


class PreviewDialog(QDialog):
    """What an action will change, event by event; Apply runs it, Cancel changes nothing."""

    def __init__(self, title: str, steps: list[Step], turn: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Preview: {title}")
        self.table = _table(self, PREVIEW_COLUMNS, preview_rows(steps, turn))
        summary = QLabel(f"{len(steps)} event(s) change; weights at turn {turn}.", self)
        buttons = QDialogButtonBox(self)
        self.apply_button = buttons.addButton(title, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(760, 320)


def action_title(steps: list[Step]) -> str:
    action = LABELS[steps[0].action] if steps else "Curate"
    return f"{action} {steps[0].event_id}" if len(steps) == 1 else f"{action} {len(steps)} events"


class ConflictChoice(Enum):
    RELOAD = "reload"
    RETRY = "retry"
    CANCEL = "cancel"


class ConflictDialog(QDialog):
    """Another writer committed first. Shows its revision and the affected events as they are now stored,
    next to what this action expected, and offers Reload (drop the action, show the new state) or Retry
    (apply the action again on the new state). Nothing is written until the user chooses."""

    def __init__(
        self,
        what: str,
        error: StorageConflictError,
        expected: list[tuple[str, EventState]],
        current: dict[str, EventState | None],
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
        for event_id, state in expected:
            now = current.get(event_id)
            rows.append(
                (
                    event_id,
                    _describe(state),
                    "missing" if now is None else _describe(now),
                    "unchanged" if now == state else "changed",
                )
            )
        self.table = _table(self, ("Event", "This window had", "Stored now", ""), rows)
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
        self.resize(720, 300)

    def _choose(self, choice: ConflictChoice) -> None:
        self.choice = choice
        self.accept()


def _describe(state: EventState) -> str:
    parts = [state.status]
    if state.pinned:
        parts.append("pinned")
    if state.superseded_by:
        parts.append(f"by {state.superseded_by}")
    return ", ".join(parts)
