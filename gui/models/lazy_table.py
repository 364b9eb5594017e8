"""A table model over a list of ids whose rows are built on demand, like Anki's browser table.

The model holds the ids (a 100k-event memory is ~100k short strings) and exposes them a page at a time
through `fetchMore`, as Spyder's data-frame editor does. A row is built only when a view asks for it: the model
queues the chunk holding that row on the database worker and shows a placeholder until it arrives. Built
chunks live in a small LRU cache, so memory stays flat however far the user scrolls.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from stratagate_gui.workers import DatabaseWorker

Row = Sequence[Any]
RowLoader = Callable[[list[str]], list[Row]]
"""Builds the rows for these ids, in order; runs on the database worker thread."""

PLACEHOLDER = "…"
_ROOT = QModelIndex()
ID_ROLE = Qt.ItemDataRole.UserRole + 1


class LazyIdTableModel(QAbstractTableModel):
    PAGE_SIZE = 500
    CHUNK_SIZE = 200
    MAX_CACHED_CHUNKS = 40

    def __init__(self, worker: DatabaseWorker, headers: Sequence[str], parent=None) -> None:
        super().__init__(parent)
        self._worker = worker
        self._headers = list(headers)
        self._ids: list[str] = []
        self._exposed = 0
        self._loader: RowLoader | None = None
        self._chunks: OrderedDict[int, list[Row]] = OrderedDict()
        self._requested: set[int] = set()
        self._generation = 0
        self.cell_foreground: Callable[[Row, int], Any] | None = None
        """Optional colour (a QColor or None) for a cell of a built row."""

    # Content ---------------------------------------------------------------------------------------------

    def set_ids(self, ids: list[str], loader: RowLoader | None) -> None:
        self.beginResetModel()
        self._generation += 1
        self._ids = list(ids)
        self._loader = loader
        self._exposed = min(len(self._ids), self.PAGE_SIZE)
        self._chunks.clear()
        self._requested.clear()
        self.endResetModel()

    def clear(self) -> None:
        self.set_ids([], None)

    def refresh_rows(self) -> None:
        """Drop built rows (after a write) so they are rebuilt from the database when next shown."""
        self._generation += 1
        self._chunks.clear()
        self._requested.clear()
        if self._exposed:
            self.dataChanged.emit(self.index(0, 0), self.index(self._exposed - 1, len(self._headers) - 1))

    @property
    def total(self) -> int:
        """Every id the model holds, exposed or not."""
        return len(self._ids)

    def id_at(self, row: int) -> str:
        return self._ids[row]

    def row_of(self, identifier: str) -> int:
        """The row of an id, exposing more pages if needed; -1 when the model does not hold it."""
        try:
            row = self._ids.index(identifier)
        except ValueError:
            return -1
        if row >= self._exposed:
            self.expose_through(row)
        return row

    def expose_through(self, row: int) -> None:
        """Make rows up to `row` visible to views (what repeated fetchMore calls would do)."""
        target = min(len(self._ids), row + 1)
        if target > self._exposed:
            self.beginInsertRows(QModelIndex(), self._exposed, target - 1)
            self._exposed = target
            self.endInsertRows()

    def built_row(self, row: int) -> Row | None:
        chunk = self._chunks.get(row // self.CHUNK_SIZE)
        return None if chunk is None else chunk[row % self.CHUNK_SIZE]

    # Qt model interface ----------------------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else self._exposed

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._headers)

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> bool:
        return not parent.isValid() and self._exposed < len(self._ids)

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> None:
        if self.canFetchMore(parent):
            self.expose_through(self._exposed + self.PAGE_SIZE - 1)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self._headers[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row_number = index.row()
        if role == ID_ROLE:
            return self._ids[row_number]
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.ForegroundRole):
            return None
        row = self._cached_row(row_number)
        if row is None:
            return PLACEHOLDER if role == Qt.ItemDataRole.DisplayRole else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return self.cell_foreground(row, index.column()) if self.cell_foreground else None
        value = row[index.column()]
        return "" if value is None else str(value)

    # Row building ----------------------------------------------------------------------------------------

    def _cached_row(self, row: int) -> Row | None:
        chunk_number = row // self.CHUNK_SIZE
        chunk = self._chunks.get(chunk_number)
        if chunk is None:
            self._request_chunk(chunk_number)
            return None
        self._chunks.move_to_end(chunk_number)
        return chunk[row % self.CHUNK_SIZE]

    def _request_chunk(self, chunk_number: int) -> None:
        if chunk_number in self._requested or self._loader is None:
            return
        self._requested.add(chunk_number)
        start = chunk_number * self.CHUNK_SIZE
        ids = self._ids[start : start + self.CHUNK_SIZE]
        loader, generation = self._loader, self._generation
        self._worker.run(
            lambda: loader(ids),
            on_done=lambda rows: self._store_chunk(generation, chunk_number, rows),
            on_error=lambda error: self._chunk_failed(generation, chunk_number, error),
            description="load rows",
        )

    def _store_chunk(self, generation: int, chunk_number: int, rows: list[Row]) -> None:
        if generation != self._generation:
            return  # the ids changed while this chunk was being built
        self._requested.discard(chunk_number)
        self._chunks[chunk_number] = rows
        while len(self._chunks) > self.MAX_CACHED_CHUNKS:
            self._chunks.popitem(last=False)
        first = chunk_number * self.CHUNK_SIZE
        last = min(first + len(rows), self._exposed) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self._headers) - 1))

    def _chunk_failed(self, generation: int, chunk_number: int, error: BaseException) -> None:
        # The chunk stays marked as requested, so a failing database is reported once, not on every repaint.
        if generation == self._generation:
            self._worker.failed.emit("load rows", error)
