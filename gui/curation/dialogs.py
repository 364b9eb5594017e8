"""The preview of what a curation action changes (the write-conflict dialog is the write path's:
`stratagate_gui.widgets.conflict_dialog`)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from stratagate_gui.curation.actions import Step
from stratagate_gui.widgets.human import arrow
from stratagate_gui.widgets.tables import fit_dialog_to_table, readonly_table

PREVIEW_COLUMNS = ("Event", "Title", "Status", "Pinned", "Weight", "Superseded by")


def _weight(value: float) -> str:
    return f"{value:.3f}"


def preview_rows(steps: list[Step], turn: int) -> list[tuple[str, ...]]:
    """One row per step: status, pinned flag, weight (at `turn`) and replacement, before → after."""
    rows = []
    for step in steps:
        weight_before, weight_after = step.weights(turn)
        rows.append(
            (
                step.event_id,
                step.title,
                arrow("new" if step.creates else step.before.status, step.after.status),
                arrow(step.before.pinned, step.after.pinned),
                arrow("—" if step.creates else _weight(weight_before), _weight(weight_after)),
                arrow(step.before.superseded_by or "—", step.after.superseded_by or "—"),
            )
        )
    return rows


class PreviewDialog(QDialog):
    """What an action will change, event by event; Apply runs it, Cancel changes nothing."""

    def __init__(self, title: str, steps: list[Step], turn: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Preview: {title}")
        self.table = readonly_table(self, PREVIEW_COLUMNS, preview_rows(steps, turn))
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
        fit_dialog_to_table(self, self.table, 320)
