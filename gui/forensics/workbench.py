"""The query workbench: run any search with every filter and see why each hit ranked where it did.

Nothing here writes: searches run with `record=False`, so the workbench is safe on a read-only/forensic open.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressDialog,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from stratagate_gui import shortcuts
from stratagate_gui.exports import RESULT_FILTERS, with_result_suffix, write_result
from stratagate_gui.forensics.explain import HitRow, QuerySpec, WorkbenchResult, build_spec, run_query
from stratagate_gui.shortcuts import select_row
from stratagate_gui.widgets.progress import cancellable_progress, close_progress
from stratagate_gui.widgets.tables import enable_sorting, fill_rows, source_row
from stratagate_gui.workers import DatabaseWorker

if TYPE_CHECKING:
    from stratagate.memory import StrataGate

KIND_LABELS = {"events": "Events", "elements": "Elements (facts)", "raw": "Raw memory"}
NO_INTENT = "(weight)"
MAX_COLUMN_WIDTH = 320


def fill_table(table: QTableWidget, headers: list[str], rows: list[list[Any]]) -> None:
    table.clear()
    table.setColumnCount(len(headers))
    table.setRowCount(len(rows))
    table.setHorizontalHeaderLabels(headers)
    fill_rows(table, rows)
    table.resizeColumnsToContents()
    # A long title or drift note would push the other columns out of view: cap it, the cell's tooltip has
    # the whole text.
    for column in range(table.columnCount() - 1):
        table.setColumnWidth(column, min(table.columnWidth(column), MAX_COLUMN_WIDTH))


def make_table(parent: QWidget) -> QTableWidget:
    table = QTableWidget(parent)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.verticalHeader().hide()
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setStretchLastSection(True)
    enable_sorting(table)
    return table


def _number(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}f}"


class QueryWorkbench(QWidget):
    finished = Signal(object)
    """The `WorkbenchResult` of the last query."""

    def __init__(self, worker: DatabaseWorker, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.worker = worker
        self.memory: StrataGate | None = None
        self.result: WorkbenchResult | None = None
        self.progress: QProgressDialog | None = None
        self._running: threading.Event | None = None
        """The Cancel flag of the query on the worker, None when none runs."""

        self.kind = QComboBox(self)
        for kind, label in KIND_LABELS.items():
            self.kind.addItem(label, kind)
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Query  ( / to focus, Return to run )")
        self.query.returnPressed.connect(self.run)
        self.run_button = QPushButton("Run", self)
        self.export_button = QPushButton("Export…", self)
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._ask_export_path)
        self.shown: tuple[list[str], list[list[Any]]] = ([], [])
        """The hits table as shown (headers, rows), for Markdown exports."""
        self.run_button.clicked.connect(self.run)
        self.limit = QSpinBox(self)
        self.limit.setRange(0, 20)
        self.limit.setSpecialValueText("default")
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        # Filters: one page per search kind.
        self.temporal_intent = QComboBox(self)
        self.temporal_intent.addItems([NO_INTENT, "first", "latest"])
        self.participants = QLineEdit(self)
        self.participants.setPlaceholderText("comma-separated names")
        self.event_type = QLineEdit(self)
        self.happened_from = QLineEdit(self)
        self.happened_from.setPlaceholderText("e.g. 2026-03-01")
        self.happened_to = QLineEdit(self)
        self.element_name = QLineEdit(self)
        self.element_type = QComboBox(self)
        self.element_type.addItems(["", "person", "project", "organization", "tool", "place"])
        event_page, element_page = QWidget(self), QWidget(self)
        event_form = QFormLayout(event_page)
        event_form.addRow("Temporal intent", self.temporal_intent)
        event_form.addRow("Participants", self.participants)
        event_form.addRow("Event type", self.event_type)
        event_form.addRow("Happened from", self.happened_from)
        event_form.addRow("Happened to", self.happened_to)
        element_form = QFormLayout(element_page)
        element_form.addRow("Name", self.element_name)
        element_form.addRow("Type", self.element_type)
        self.filters = QStackedWidget(self)
        self.filters.addWidget(event_page)
        self.filters.addWidget(element_page)
        self.filters.addWidget(QLabel("Raw memory search takes only a limit.", self))
        self.kind.currentIndexChanged.connect(self.filters.setCurrentIndex)

        self.hits = make_table(self)
        self.hits.itemSelectionChanged.connect(self._show_selected)
        self.contributions = make_table(self)
        self.detail = QLabel(self)
        self.detail.setWordWrap(True)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.excluded = make_table(self)

        top = QHBoxLayout()
        top.addWidget(self.kind)
        top.addWidget(self.query, 1)
        top.addWidget(QLabel("Limit", self))
        top.addWidget(self.limit)
        top.addWidget(self.run_button)
        top.addWidget(self.export_button)
        detail_pane = QWidget(self)
        detail_layout = QVBoxLayout(detail_pane)
        detail_layout.setContentsMargins(0, 0, 0, 0)
        detail_layout.addWidget(self.detail)
        detail_layout.addWidget(QLabel("BM25 term contributions by field", self))
        detail_layout.addWidget(self.contributions, 1)
        below = QTabWidget(self)
        below.addTab(detail_pane, "Why this hit")
        below.addTab(self.excluded, "Excluded candidates")
        self.below = below
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.hits)
        splitter.addWidget(below)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.filters)
        layout.addWidget(self.summary)
        layout.addWidget(splitter, 1)
        shortcuts.bind(shortcuts.SEARCH, self, self.focus_query)
        # Controls without a visible label get a name screen readers can say.
        for control, accessible_name in ((self.kind, "Search kind"), (self.query, "Query"), (self.limit, "Result limit"), (self.hits, "Hits"), (self.contributions, "BM25 term contributions"), (self.excluded, "Excluded candidates"),):
            control.setAccessibleName(accessible_name)
        self.set_memory(None)

    def set_memory(self, memory: StrataGate | None) -> None:
        self._stop_query()  # its answer would be about the memory no longer shown
        self.memory = memory
        self.run_button.setEnabled(memory is not None)
        self.summary.setText("No memory open" if memory is None else "")

    def focus_query(self) -> None:
        self.query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query.selectAll()

    def spec(self) -> QuerySpec:
        kind = self.kind.currentData()
        limit = self.limit.value() or None
        if kind == "events":
            participants = [name.strip() for name in self.participants.text().split(",") if name.strip()]
            intent = self.temporal_intent.currentText()
            return build_spec(
                kind,
                self.query.text(),
                limit=limit,
                temporal_intent=None if intent == NO_INTENT else intent,
                participants=participants,
                event_type=self.event_type.text().strip(),
                happened_from=self.happened_from.text().strip(),
                happened_to=self.happened_to.text().strip(),
            )
        if kind == "elements":
            return build_spec(
                kind,
                self.query.text(),
                limit=limit,
                name=self.element_name.text().strip(),
                type=self.element_type.currentText(),
            )
        return build_spec(kind, self.query.text(), limit=limit)

    def run(self) -> None:
        memory = self.memory
        if memory is None:
            return
        spec = self.spec()
        self._stop_query()
        cancelled = self._running = threading.Event()
        self.summary.setText(f"Running {spec.describe()}…")
        # A first query builds the search index over every event: on a large memory that takes a while.
        self.progress = cancellable_progress(self, f"Running {spec.describe()}…", self.cancel_query)
        self.worker.run(
            lambda: run_query(memory, spec, cancelled),
            on_done=lambda result: self._answered(cancelled, result),
            on_error=lambda error: self._answered(cancelled, error),
            description=f"search {spec.describe()}",
        )

    def cancel_query(self) -> None:
        """Stop the running query at its next step; the worker is free for the next task right after."""
        if self._running is not None:
            self._stop_query()
            self.summary.setText("Query cancelled: nothing was kept; run it again when you like.")

    def _stop_query(self) -> None:
        if self._running is not None:
            self._running.set()
            self._running = None
        close_progress(self.progress)
        self.progress = None

    def _answered(self, cancelled: threading.Event, outcome: WorkbenchResult | BaseException) -> None:
        if cancelled.is_set() or cancelled is not self._running:
            return  # cancelled, or replaced by a newer query: the summary already says so
        self._stop_query()
        if isinstance(outcome, BaseException):
            self.summary.setText(f"✘ {outcome}")
        else:
            self._show(outcome)

    def _show(self, result: WorkbenchResult) -> None:
        self.result = result
        tokens = " ".join(result.tokens) or "(none)"
        self.summary.setText(
            f"{len(result.hits)} hits · mode: {result.mode} · tokens: {tokens} · {len(result.excluded)} excluded"
        )
        headers = [
            "#",
            "Id",
            "Hit",
            "RRF score",
            "Weight",
            *(f"rank: {name}" for name in result.ranking_names),
        ]
        headers.append("Matched filters")
        rows = [
            [
                hit.rank,
                hit.id,
                hit.label,
                _number(hit.score, 6),
                _number(hit.weight, 3),
                *(_rank_text(hit.ranks.get(name)) for name in result.ranking_names),
                ", ".join(hit.matched_filters) or "—",
            ]
            for hit in result.hits
        ]
        fill_table(self.hits, headers, rows)
        self.shown = (headers, rows)
        self.export_button.setEnabled(True)
        fill_table(self.excluded, ["Candidate", "Why excluded"], [list(item) for item in result.excluded])
        fill_table(self.contributions, ["Term", "Field", "Frequency × weight", "Score"], [])
        self.detail.setText("")
        if result.hits:
            select_row(self.hits, 0)
        self.finished.emit(result)

    def export_to(self, path: Path) -> None:
        """The last query's explanation: every hit with its ranks, BM25 terms and exclusions (JSON), or the
        hits table (Markdown)."""
        if self.result is not None:
            write_result(path, f"Query workbench: {self.result.spec.describe()}", self.result, *self.shown)

    def _ask_export_path(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(self, "Export the explanation", "", RESULT_FILTERS)
        if path:
            self.export_to(with_result_suffix(path, chosen))

    def selected_hit(self) -> HitRow | None:
        if self.result is None:
            return None
        rows = self.hits.selectionModel().selectedRows()
        return self.result.hits[source_row(self.hits, rows[0].row())] if rows else None

    def _show_selected(self) -> None:
        hit = self.selected_hit()
        if hit is None:
            return
        lines = [hit.detail]
        if hit.bm25_score is not None:
            idf = ", ".join(f"{term} {value:.3f}" for term, value in hit.term_idf.items())
            lines.append(
                f"BM25 {hit.bm25_score:.4f} · length {hit.length} (average {hit.average_length:.1f}) · idf: {idf}"
            )
        elif hit.score is not None:
            lines.append("No BM25 match: ranked by the structured order only.")
        self.detail.setText("\n".join(line for line in lines if line))
        fill_table(
            self.contributions,
            ["Term", "Field", "Frequency × weight", "Score"],
            [[c.term, c.field, c.frequency, _number(c.score)] for c in hit.contributions],
        )


def _rank_text(rank: int | None) -> str:
    return "—" if rank is None else str(rank + 1)
