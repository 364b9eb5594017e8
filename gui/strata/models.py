"""Table models of the tier browser: one per tier plus search results, paged through `fetchMore`.

A model holds lightweight row records (path, size, times, counts) and formats cells only when a view asks;
rows are exposed a page at a time, so a 20k-file tier opens as fast as a 500-file one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from stratagate.strata import Tier
from stratagate_gui.widgets.tables import sort_key

DAY = 86400
_ROOT = QModelIndex()


@dataclass(frozen=True)
class BrowserRow:
    """One file shown in the browser. `key` identifies it for actions: a path, or a shadow id in the archive."""

    tier: Tier
    key: str
    path: str
    size: int | None
    timestamp: float | None
    access_count: int | None
    score: float | None = None


def age_text(timestamp: float | None, now: float) -> str:
    if timestamp is None:
        return "—"
    days = int((now - timestamp) // DAY)
    return "today" if days <= 0 else f"{days} d"


def iso_to_epoch(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


Column = tuple[str, Callable[[BrowserRow, float], str]]

TIER_COLUMNS: Sequence[Column] = (
    ("Path", lambda row, _now: row.path),
    ("Age", lambda row, now: age_text(row.timestamp, now)),
    ("Accesses", lambda row, _now: "—" if row.access_count is None else str(row.access_count)),
    ("Size", lambda row, _now: "—" if row.size is None else f"{row.size:,} B"),
)
SORT_VALUES: dict[str, Callable[[BrowserRow], object]] = {
    "Age": lambda row: None if row.timestamp is None else -row.timestamp,
    "Accesses": lambda row: row.access_count,
    "Size": lambda row: row.size,
    "Score": lambda row: row.score,
}
"""Columns whose shown text does not sort (\"3 d\", \"1,024 B\"): the raw value they show instead."""

SEARCH_COLUMNS: Sequence[Column] = (
    ("Tier", lambda row, _now: row.tier.value),
    ("Path", lambda row, _now: row.path),
    ("Score", lambda row, _now: f"{row.score:.2f}"),
)


class BrowserRowsModel(QAbstractTableModel):
    PAGE_SIZE = 500

    def __init__(self, columns: Sequence[Column], parent=None) -> None:
        super().__init__(parent)
        self._columns = list(columns)
        self._rows: list[BrowserRow] = []
        self._listed: list[BrowserRow] = []
        """The rows in the order they were listed, for the header's third click (no sort)."""
        self.sorting: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)
        self._exposed = 0
        self._now = time.time()

    def set_rows(self, rows: list[BrowserRow]) -> None:
        self.beginResetModel()
        self._listed = rows
        self._now = time.time()
        self._rows = self._sorted()
        self._exposed = min(len(rows), self.PAGE_SIZE)
        self.endResetModel()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """A header click: rows are in memory, so sort them here (numbers by value, unknown values last);
        column -1 is the order they were listed in. Kept for the next `set_rows`."""
        self.layoutAboutToBeChanged.emit()
        self.sorting = (column, order)
        self._rows = self._sorted()
        self.layoutChanged.emit()

    def _sorted(self) -> list[BrowserRow]:
        column, order = self.sorting
        if column < 0:
            return list(self._listed)
        title, text = self._columns[column]
        raw = SORT_VALUES.get(title)
        return sorted(
            self._listed,
            key=lambda row: sort_key(raw(row) if raw is not None else text(row, self._now)),
            reverse=order == Qt.SortOrder.DescendingOrder,
        )

    @property
    def total(self) -> int:
        return len(self._rows)

    def row_at(self, row: int) -> BrowserRow:
        return self._rows[row]

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else self._exposed

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._columns)

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> bool:
        return not parent.isValid() and self._exposed < len(self._rows)

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> None:
        more = min(self.PAGE_SIZE, len(self._rows) - self._exposed)
        if more <= 0:
            return
        self.beginInsertRows(_ROOT, self._exposed, self._exposed + more - 1)
        self._exposed += more
        self.endInsertRows()

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        row = self._rows[index.row()]
        return self._columns[index.column()][1](row, self._now)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self._columns[section][0]
        return None
