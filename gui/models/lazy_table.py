"""A table model over a list of ids whose rows are built on demand, like Anki's browser table.

The model holds the ids (for a million events, packed: `stratagate.storage.packed_keys`, about 20 MB) and
exposes them a page at a time through `fetchMore`, as Spyder's data-frame editor does. Ordering every id by a
column is the owner's query (in SQL), never done here. A row is built only when a view asks for it: the model
queues the chunk holding that row on the database worker and shows a placeholder until it arrives. Built
chunks live in a small LRU cache, so memory stays flat however far the user scrolls.

After a write (`update_ids`, `refresh_rows`), rows already built stay on screen until their fresh versions
arrive, and the selection follows its ids, like Anki's browser table. A chunk that fails to build is reported
once through the worker's `failed` signal (the window's error dialog), shows the error on its rows and is asked
for again after a pause that doubles with each failure.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QColor

from stratagate.storage.packed_keys import PackedKeys
from stratagate_gui.widgets.tables import sort_key
from stratagate_gui.workers import DatabaseWorker

Row = Sequence[Any]
RowLoader = Callable[[list[str]], list[Row]]
"""Builds the rows for these ids, in order; runs on the database worker thread."""

PLACEHOLDER = "…"
ERROR_COLOUR = QColor("#dc2626")
FIRST_RETRY_MS = 1000
LAST_RETRY_MS = 30_000
_ROOT = QModelIndex()
ID_ROLE = Qt.ItemDataRole.UserRole + 1


def sorted_ids(ids: list[str], loader: RowLoader, column: int, descending: bool, chunk: int = 500) -> list[str]:
    """`ids` ordered by one column of their rows (numbers as numbers, text without case); ties keep the
    source's order. Builds every row, a chunk at a time: runs on the database worker."""
    keys: dict[str, tuple[int, float, str]] = {}
    for start in range(0, len(ids), chunk):
        part = ids[start : start + chunk]
        for identifier, row in zip(part, loader(part), strict=True):
            keys[identifier] = sort_key(row[column])
    return sorted(ids, key=keys.__getitem__, reverse=descending)


def _held(ids: Sequence[str]) -> Sequence[str]:
    """The ids to keep: packed ones as they are (immutable), any other sequence copied into a list."""
    return ids if isinstance(ids, PackedKeys) else list(ids)


def _positions(ids: Sequence[str], wanted: set[str]) -> dict[str, int]:
    """The rows of the `wanted` ids in `ids`: searched one by one when few (a selection), else in one pass."""
    if len(wanted) <= 64:
        found = {}
        for identifier in wanted:
            with suppress(ValueError):  # the id left the list
                found[identifier] = ids.index(identifier)
        return found
    return {identifier: row for row, identifier in enumerate(ids) if identifier in wanted}


class LazyIdTableModel(QAbstractTableModel):
    PAGE_SIZE = 500
    CHUNK_SIZE = 200
    MAX_CACHED_CHUNKS = 40

    def __init__(self, worker: DatabaseWorker, headers: Sequence[str], parent=None) -> None:
        super().__init__(parent)
        self._worker = worker
        self._headers = list(headers)
        self._ids: Sequence[str] = []
        self._exposed = 0
        self._loader: RowLoader | None = None
        self._chunks: OrderedDict[int, list[Row]] = OrderedDict()
        self._requested: set[int] = set()
        self._stale: dict[str, Row] = {}
        """Rows built before the last write, by id: shown until their chunk is rebuilt."""
        self._errors: dict[int, tuple[str, int]] = {}
        """Chunks whose build failed: (the error, how many times in a row)."""
        self._generation = 0
        self.cell_foreground: Callable[[Row, int], Any] | None = None
        """Optional colour (a QColor or None) for a cell of a built row."""
        self.sorting: tuple[int, bool] | None = None
        """(column, descending) the owner should list the ids in; None for the source's own order."""
        self.sort_changed: Callable[[], Any] | None = None
        """Called when a header click changes `sorting`: the owner lists its ids again, sorted on the worker."""

    # Content ---------------------------------------------------------------------------------------------

    def set_ids(self, ids: Sequence[str], loader: RowLoader | None) -> None:
        """Show a new list (another memory, another filter): nothing of the previous one is kept."""
        self.beginResetModel()
        self._forget_rows()
        self._stale.clear()
        self._ids = _held(ids)
        self._loader = loader
        self._exposed = min(len(self._ids), self.PAGE_SIZE)
        self.endResetModel()

    def clear(self) -> None:
        self.set_ids([], None)

    def extend_ids(self, ids: Sequence[str]) -> bool:
        """The whole list whose first page the model shows (read first, to paint early): rows built stay,
        views may fetch the rest. False, and nothing changed, when `ids` does not start with the ids held."""
        held = len(self._ids)
        if len(ids) < held or list(ids[:held]) != list(self._ids):
            return False
        self._ids = _held(ids)
        return True

    def update_ids(self, ids: Sequence[str], loader: RowLoader | None) -> None:
        """The same list re-read after a write: ids may come, go or move. Built rows stay visible until
        rebuilt, and selected rows (persistent indexes) follow their ids; an id that left loses its row."""
        self._stash_built_rows()
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        old_ids = [self._ids[index.row()] if index.row() < len(self._ids) else None for index in old]
        positions = _positions(ids, {identifier for identifier in old_ids if identifier is not None})
        new_rows = [-1 if identifier is None else positions.get(identifier, -1) for identifier in old_ids]
        self._forget_rows()
        self._ids = _held(ids)
        self._loader = loader
        wanted = max([self._exposed, self.PAGE_SIZE, *(row + 1 for row in new_rows)])
        self._exposed = min(len(self._ids), wanted)
        self.changePersistentIndexList(
            old,
            [self.index(row, index.column()) if row >= 0 else QModelIndex() for row, index in zip(new_rows, old, strict=True)],
        )
        self.layoutChanged.emit()

    def refresh_rows(self) -> None:
        """Rebuild rows from the database when next shown (after a write); until then they show as they were."""
        self._stash_built_rows()
        self._forget_rows()
        if self._exposed:
            self.dataChanged.emit(self.index(0, 0), self.index(self._exposed - 1, len(self._headers) - 1))

    def _stash_built_rows(self) -> None:
        for chunk_number, rows in self._chunks.items():
            start = chunk_number * self.CHUNK_SIZE
            self._stale.update(zip(self._ids[start : start + len(rows)], rows, strict=False))

    def _forget_rows(self) -> None:
        self._generation += 1
        self._chunks.clear()
        self._requested.clear()
        self._errors.clear()

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

    def prefetch(self, row: int) -> None:
        """Build the chunk holding `row` now, before a view asks for it (a new list's first rows, read while
        the rest of the window is drawn)."""
        if 0 <= row < len(self._ids) and row // self.CHUNK_SIZE not in self._chunks:
            self._request_chunk(row // self.CHUNK_SIZE)

    def built_row(self, row: int) -> Row | None:
        chunk = self._chunks.get(row // self.CHUNK_SIZE)
        return None if chunk is None else chunk[row % self.CHUNK_SIZE]

    def shown_row(self, row: int) -> Row | None:
        """What the row shows now: its built values, or those from before the last write, or None."""
        built = self.built_row(row)
        return built if built is not None else self._stale.get(self._ids[row])

    # Qt model interface ----------------------------------------------------------------------------------

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """A header click: remember the order and let the owner list the ids again (sorting every id needs the
        database, so it happens on the worker, see `sorted_ids`). Column -1 is the source's own order."""
        sorting = None if column < 0 else (column, order == Qt.SortOrder.DescendingOrder)
        if sorting != self.sorting:
            self.sorting = sorting
            if self.sort_changed is not None:
                self.sort_changed()

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
            failure = self._errors.get(row_number // self.CHUNK_SIZE)
            if failure is not None:
                return self._error_cell(failure[0], index.column(), role)
            row = self._stale.get(self._ids[row_number])
        if row is None:
            return PLACEHOLDER if role == Qt.ItemDataRole.DisplayRole else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return self.cell_foreground(row, index.column()) if self.cell_foreground else None
        value = row[index.column()]
        return "" if value is None else str(value)

    @staticmethod
    def _error_cell(error: str, column: int, role: int) -> object:
        if role == Qt.ItemDataRole.ForegroundRole:
            return ERROR_COLOUR
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"This row could not be read; retrying.\n{error}"
        return f"⚠ {error}" if column == 0 else ""

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
        self._errors.pop(chunk_number, None)
        self._chunks[chunk_number] = rows
        start = chunk_number * self.CHUNK_SIZE
        for identifier in self._ids[start : start + len(rows)]:
            self._stale.pop(identifier, None)
        while len(self._chunks) > self.MAX_CACHED_CHUNKS:
            self._chunks.popitem(last=False)
        first = chunk_number * self.CHUNK_SIZE
        last = min(first + len(rows), self._exposed) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self._headers) - 1))

    def _chunk_failed(self, generation: int, chunk_number: int, error: BaseException) -> None:
        """Show the error on the chunk's rows; ask again after a pause (1 s, doubling up to 30 s). The chunk
        stays marked as requested meanwhile, so repaints do not hammer a failing database."""
        if generation != self._generation:
            return
        failures = self._errors.get(chunk_number, ("", 0))[1] + 1
        self._errors[chunk_number] = (f"{type(error).__name__}: {error}", failures)
        if failures == 1:  # a damaged row gets one dialog naming it; the retries only update its cells
            self._worker.failed.emit("load rows", error)
        self._emit_chunk_changed(chunk_number)
        delay = min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** (failures - 1))
        QTimer.singleShot(delay, self, lambda: self._retry(generation, chunk_number))

    def _retry(self, generation: int, chunk_number: int) -> None:
        if generation == self._generation and chunk_number in self._errors:
            self._requested.discard(chunk_number)
            self._emit_chunk_changed(chunk_number)  # the view asks for the rows again if they are visible

    def _emit_chunk_changed(self, chunk_number: int) -> None:
        first = chunk_number * self.CHUNK_SIZE
        last = min(first + self.CHUNK_SIZE, self._exposed) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self._headers) - 1))
