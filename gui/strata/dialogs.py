"""The dry-run preview shown before a tier move: what would move, what conflicts, what fails."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from stratagate.strata.janitor import FileResult
from stratagate_gui.widgets.tables import fit_dialog_to_table, readonly_table

PLAN_COLUMNS = ("File", "Outcome", "Detail")


def pending_count(plan: list[FileResult]) -> int:
    return sum(result.status.startswith("would_") for result in plan)


class PlanPreviewDialog(QDialog):
    """Lists a janitor plan; Apply is enabled only when at least one file would move."""

    def __init__(self, title: str, plan: list[FileResult], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.plan = plan
        movable = pending_count(plan)
        blocked = len(plan) - movable
        summary = f"{movable} file(s) would move." + (f" {blocked} cannot (see Detail)." if blocked else "")
        self.summary = QLabel(f"Dry run — nothing has changed yet. {summary}", self)
        rows = [(result.path, _outcome(result.status), result.detail) for result in plan]
        self.table = readonly_table(self, PLAN_COLUMNS, rows)  # sorts by any column, like every table
        self.table.setAccessibleName("Plan")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Apply | QDialogButtonBox.StandardButton.Cancel
        )
        self.apply_button = self.buttons.button(QDialogButtonBox.StandardButton.Apply)
        self.apply_button.setEnabled(movable > 0)
        self.apply_button.clicked.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)
        layout.addWidget(self.buttons)
        fit_dialog_to_table(self, self.table, 360)


def _outcome(status: str) -> str:
    """A planned move reads as its verb ("would_migrate" → "migrate"); other outcomes as they are."""
    return status.removeprefix("would_")
