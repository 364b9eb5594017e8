"""A facet filter for a table column with few distinct values (a verdict, an action, a status)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QTableView, QWidget

from stratagate_gui.widgets.tables import sort_key

ALL = "(all)"


class FacetFilter(QComboBox):
    """Shows only the rows whose `column` has the chosen value. Lists the column's values again when the
    table's model is reset, and on `refresh()` for tables filled in place (QTableWidget)."""

    def __init__(self, table: QTableView, column: int, label: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table, self.column = table, column
        self.setAccessibleName(f"Filter by {label}")
        self.setToolTip(f"Show only the rows with this {label}")
        self.addItem(ALL)
        self.currentTextChanged.connect(lambda _text: self.apply())
        model = table.model()
        model.modelReset.connect(self.refresh)
        model.layoutChanged.connect(self.apply)  # a sort moves rows: hide the right ones again

    def _value(self, row: int) -> str:
        value = self.table.model().index(row, self.column).data()
        return "" if value is None else str(value)

    def refresh(self) -> None:
        """List the column's values, keeping the chosen one if it is still there."""
        chosen = self.currentText()
        values = sorted({self._value(row) for row in range(self.table.model().rowCount())}, key=sort_key)
        self.blockSignals(True)
        self.clear()
        self.addItems([ALL, *values])
        self.setCurrentText(chosen if chosen in values else ALL)
        self.blockSignals(False)
        self.apply()

    def apply(self) -> None:
        chosen = self.currentText()
        for row in range(self.table.model().rowCount()):
            self.table.setRowHidden(row, chosen != ALL and self._value(row) != chosen)
