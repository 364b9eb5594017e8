"""The dry-run preview shown before a tier move: what would move, what conflicts, what fails."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from stratagate.strata.janitor import FileResult

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
        self.table = QTableWidget(len(plan), len(PLAN_COLUMNS), self)
        self.table.setHorizontalHeaderLabels(list(PLAN_COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        for row, result in enumerate(plan):
            outcome = (
                result.status.removeprefix("would_") if result.status.startswith("would_") else result.status
            )
            for column, value in enumerate((result.path, outcome, result.detail)):
                self.table.setItem(row, column, QTableWidgetItem(value))
        self.table.resizeColumnsToContents()
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
        self.resize(640, 360)
