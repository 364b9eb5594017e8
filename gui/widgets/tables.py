"""Table helpers: a read-only table of text rows for dialogs (previews, conflicts, plans), header sorting."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHeaderView,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

SOURCE_ROW = Qt.ItemDataRole.UserRole + 2
"""Set on the first cell of a `SortableItem` row: the row's index in the list it was filled from."""


LONG_TEXT = 40
WIDEST_COLUMN = 480
"""A dialog's table column never grows wider than this: its long cells are elided, their tooltip has it all."""
DIALOG_MARGIN = 48
MIN_ELIDED_COLUMN = 120


def sort_key(value: object) -> tuple[int, float, str]:
    """Numbers as numbers (so 10 sorts after 9), then text without case."""
    if isinstance(value, int | float):
        return (0, float(value), "")
    text = "" if value is None else str(value)
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text.casefold())


class SortableItem(QTableWidgetItem):
    """A table cell that sorts by `sort_key` of its text instead of Qt's plain string order."""

    def __lt__(self, other: QTableWidgetItem) -> bool:
        return sort_key(self.text()) < sort_key(other.text())


def fill_rows(table: QTableWidget, rows: Sequence[Sequence[object]]) -> None:
    """Put `rows` in `table` (already sized), each first cell remembering its source index, then re-apply the
    header's sort: sorting stays off while filling so rows land where they were put."""
    sorting = table.isSortingEnabled()
    table.setSortingEnabled(False)
    for row, values in enumerate(rows):
        for column, value in enumerate(values):
            item = SortableItem("" if value is None else str(value))
            if len(item.text()) > LONG_TEXT:
                item.setToolTip(item.text())  # the column may be too narrow to show it all
            if column == 0:
                item.setData(SOURCE_ROW, row)
            table.setItem(row, column, item)
    table.setSortingEnabled(sorting)


def source_row(table: QTableWidget, visual_row: int) -> int:
    """The index in the filled list of the row shown at `visual_row` (they differ once the user sorted)."""
    item = table.item(visual_row, 0)
    return visual_row if item is None else int(item.data(SOURCE_ROW))


def visual_row(table: QTableWidget, source: int) -> int:
    """Where the row filled from index `source` is shown now."""
    for row in range(table.rowCount()):
        if source_row(table, row) == source:
            return row
    return source


def readonly_table(parent: QWidget, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> QTableWidget:
    table = QTableWidget(len(rows), len(headers), parent)
    table.setHorizontalHeaderLabels(list(headers))
    table.verticalHeader().hide()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    fill_rows(table, rows)
    enable_sorting(table)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def fit_dialog_to_table(dialog: QDialog, table: QTableWidget, height: int) -> None:
    """Size `dialog` so its table shows every column whole, without scrolling sideways: a preview whose weight
    column is cut off hides the change. Up to nine tenths of the screen's width; on a narrower screen the widest
    column (a title) gives up the difference, its long cells elided (their tooltip has the whole text)."""
    header = table.horizontalHeader()
    table.resizeColumnsToContents()
    widths = [min(table.columnWidth(column), WIDEST_COLUMN) for column in range(table.columnCount())]
    chrome = 2 * table.frameWidth() + table.verticalScrollBar().sizeHint().width() + DIALOG_MARGIN
    room = int(dialog.screen().availableGeometry().width() * 0.9)
    overflow = sum(widths) + chrome - room
    if overflow > 0 and widths:
        widest = widths.index(max(widths))
        widths[widest] = max(MIN_ELIDED_COLUMN, widths[widest] - overflow)
    for column, width in enumerate(widths):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        table.setColumnWidth(column, width)
    header.setStretchLastSection(True)
    dialog.resize(min(max(sum(widths) + chrome, 480), room), height)


def enable_sorting(table: QTableView) -> None:
    """Sort by a header click (ascending, descending, then the source's own order again). Starts unsorted:
    the model's `sort(-1)` keeps the order it was given."""
    header = table.horizontalHeader()
    header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    header.setSortIndicatorClearable(True)
    table.setSortingEnabled(True)
