"""The curation journal view: every entry of the open namespace, and a Verify button for the hash chain."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from stratagate import journal
from stratagate.journal import JournalRecord, VerifyResult
from stratagate_gui.shortcuts import select_row
from stratagate_gui.widgets.facets import FacetFilter
from stratagate_gui.widgets.human import changes
from stratagate_gui.widgets.tables import enable_sorting, sort_key
from stratagate_gui.workers import DatabaseWorker

JournalReader = Callable[[], list[JournalRecord]]
JournalChecker = Callable[[], VerifyResult]

_ROOT = QModelIndex()
BAD_ENTRY_COLOR = "#f4c7c3"
COLUMNS = ("Seq", "Time", "Actor", "Action", "Ids", "Change", "Hash")


def cells(record: JournalRecord) -> tuple[object, ...]:
    """The row of one entry; the change in human values (the raw JSON is in the tooltip and the export)."""
    return (
        record.seq,
        record.time,
        record.actor,
        record.action,
        ", ".join(record.ids) if isinstance(record.ids, list) else str(record.ids),
        changes(record.before, record.after),
        record.hash[:12] + "…",
    )


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class JournalModel(QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.records: list[JournalRecord] = []
        self.bad_seq: int | None = None
        self.sorting: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)
        """The header's sort, kept so a refresh lists the new records in the same order."""

    def set_records(self, records: list[JournalRecord]) -> None:
        self.beginResetModel()
        self.records = records
        self.bad_seq = None
        self._sort_records()
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        record = self.records[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return cells(record)[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                f"before {_compact(record.before)}\nafter {_compact(record.after)}\n"
                f"hash {record.hash}\nprevious {record.prev_hash}"
            )
        if role == Qt.ItemDataRole.BackgroundRole and record.seq == self.bad_seq:
            return QColor(BAD_ENTRY_COLOR)
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """A header click: the journal is in memory, so sort it here; column -1 is journal order (seq)."""
        self.layoutAboutToBeChanged.emit()
        self.sorting = (column, order)
        self._sort_records()
        self.layoutChanged.emit()

    def _sort_records(self) -> None:
        column, order = self.sorting
        if column < 0:
            self.records.sort(key=lambda record: record.seq)
        else:
            self.records.sort(
                key=lambda record: sort_key(cells(record)[column]), reverse=order == Qt.SortOrder.DescendingOrder
            )

    def row_of(self, seq: int) -> int | None:
        for row, record in enumerate(self.records):
            if record.seq == seq:
                return row
        return None


class JournalView(QWidget):
    """Lists the journal and verifies its chain; both read on the database worker."""

    verified = Signal(object)
    """The `VerifyResult` of the last Verify."""

    def __init__(self, worker: DatabaseWorker, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._worker = worker
        self._reader: JournalReader | None = None
        self._checker: JournalChecker | None = None
        self.model = JournalModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        enable_sorting(self.table)
        self.action_filter = FacetFilter(self.table, COLUMNS.index("Action"), "action", self)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.clicked.connect(self.refresh)
        self.verify_button = QPushButton("Verify chain", self)
        self.verify_button.clicked.connect(self.verify)
        self.export_button = QPushButton("Export JSON lines…", self)
        self.export_button.clicked.connect(self._ask_export_path)
        self.status = QLabel("No memory open", self)
        self.status.setObjectName("journalStatus")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        buttons.addWidget(self.refresh_button)
        buttons.addWidget(self.verify_button)
        buttons.addWidget(self.export_button)
        buttons.addWidget(QLabel("Action:", self))
        buttons.addWidget(self.action_filter)
        buttons.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.table)
        # Controls without a visible label get a name screen readers can say.
        for control, accessible_name in ((self.table, "Curation journal entries"),):
            control.setAccessibleName(accessible_name)
        self._set_enabled(False)

    def set_source(self, reader: JournalReader | None, checker: JournalChecker | None) -> None:
        """Show the journal these callables read (they run on the worker); None when no memory is open."""
        self._reader, self._checker = reader, checker
        self._set_enabled(reader is not None)
        self.model.set_records([])
        self.status.setText("" if reader else "No memory open")
        if reader is not None:
            self.refresh()

    def refresh(self) -> None:
        if self._reader is None:
            return
        reader = self._reader
        self._worker.run(reader, on_done=self._show_records, description="read the curation journal")

    def verify(self) -> None:
        if self._checker is None:
            return
        checker = self._checker
        self.status.setText("Verifying…")
        self._worker.run(checker, on_done=self._show_verdict, description="verify the curation journal")

    def export_to(self, path: Path) -> None:
        """The journal of the open namespace as JSON lines (what `stratagate journal export` writes)."""
        if self._reader is None:
            return
        reader = self._reader
        self._worker.run(
            lambda: journal.export_jsonl(reader(), path),
            on_done=lambda count: self.status.setText(f"Exported {count} entries to {path}"),
            on_error=lambda error: self.status.setText(f"✘ {error}"),
            description=f"export the curation journal to {path}",
        )

    def _ask_export_path(self) -> None:
        path, _filter = QFileDialog.getSaveFileName(self, "Export the curation journal", "", "JSON lines (*.jsonl)")
        if path:
            self.export_to(Path(path))

    def _show_records(self, records: list[JournalRecord]) -> None:
        self.model.set_records(records)
        self.status.setText(f"{len(records)} entries")
        self.table.resizeColumnsToContents()

    def _show_verdict(self, result: VerifyResult) -> None:
        self.model.beginResetModel()
        self.model.bad_seq = None if result.ok else result.bad_seq
        self.model.endResetModel()
        if result.ok:
            heads = ", ".join(f"{name} head {head[:12]}…" for name, head in sorted(result.heads.items()))
            self.status.setText(f"✔ {result.describe()}" + (f" ({heads})" if heads else ""))
        else:
            self.status.setText(f"✘ {result.describe()}")
            row = self.model.row_of(result.bad_seq) if result.bad_seq is not None else None
            if row is not None:
                select_row(self.table, row)
        self.verified.emit(result)

    def _set_enabled(self, enabled: bool) -> None:
        self.refresh_button.setEnabled(enabled)
        self.verify_button.setEnabled(enabled)
        self.export_button.setEnabled(enabled)
