"""The usage receipts browser: what the agent used (refs), its own audit of it (verdict, fit, missing), and a
replay of a query as of the receipt's time next to now, with the drift marked. Read-only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from stratagate.journal import JournalRecord
from stratagate.model import UsageReceipt
from stratagate_gui.exports import RESULT_FILTERS, with_result_suffix, write_result
from stratagate_gui.forensics.explain import QuerySpec, build_spec
from stratagate_gui.forensics.replay import ReplayResult, ReplayRow, recorded_spec, replay
from stratagate_gui.forensics.workbench import fill_table, make_table
from stratagate_gui.widgets.facets import FacetFilter
from stratagate_gui.widgets.human import human
from stratagate_gui.widgets.tables import source_row
from stratagate_gui.workers import DatabaseWorker

if TYPE_CHECKING:
    from stratagate.memory import StrataGate

RECEIPT_COLUMNS = [
    "Receipt",
    "Recorded at",
    "Events",
    "Elements",
    "Verdict",
    "Fit",
    "Missing",
    "Next",
    "Session",
    "Turn",
]
REPLAY_COLUMNS = [
    "Event",
    "Title",
    "Drift",  # next to the title, so it is in view without scrolling right
    "In receipt",
    "Rank then",
    "Rank now",
    "Status then",
    "Status now",
    "Weight then",
    "Weight now",
]
DRIFT_COLOR = QColor("#b91c1c")

JournalReader = Callable[[], list[JournalRecord]]


def receipt_row(receipt: UsageReceipt) -> list[str]:
    """The receipt in human values: a missing audit field is a dash, a score three places, a flag yes/no."""
    audit = receipt.audit or {}
    return [
        human(value)
        for value in (
            receipt.id,
            receipt.created_at,
            receipt.event_ids,
            receipt.element_ids,
            audit.get("verdict"),
            audit.get("fit"),
            audit.get("missing"),
            audit.get("nextStrategy"),
            audit.get("sessionId"),
            audit.get("turn"),
        )
    ]


THEN_NOW_PAIRS = tuple(
    (REPLAY_COLUMNS.index(f"{name} then"), REPLAY_COLUMNS.index(f"{name} now")) for name in ("Rank", "Status", "Weight")
)


def drifted_columns(row: ReplayRow, cells: list[Any]) -> list[int]:
    """The cells of a replay row to colour: its id, each then/now pair that differs, and the drift note; none
    when the row did not drift, so the colour points at what changed."""
    if not row.drift:
        return []
    columns = [0, REPLAY_COLUMNS.index("Drift")]
    for then, now in THEN_NOW_PAIRS:
        if cells[then] != cells[now]:
            columns += [then, now]
    return sorted(columns)


def _optional(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


class ReceiptsBrowser(QWidget):
    replayed = Signal(object)
    """The `ReplayResult` of the last replay."""

    def __init__(self, worker: DatabaseWorker, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.worker = worker
        self.memory: StrataGate | None = None
        self.journal_reader: JournalReader = list
        self.receipts: list[UsageReceipt] = []
        self.result: ReplayResult | None = None
        self.recorded: QuerySpec | None = None
        self.table = make_table(self)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.verdict_filter = FacetFilter(self.table, RECEIPT_COLUMNS.index("Verdict"), "verdict", self)
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Query to replay (receipts do not keep it); empty = ranking by weight")
        self.query.returnPressed.connect(self.replay_selected)
        self.replay_button = QPushButton("Replay then vs now", self)
        self.export_button = QPushButton("Export replay…", self)
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._ask_export_path)
        self.shown_rows: list[list[Any]] = []
        self.replay_button.clicked.connect(self.replay_selected)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.replay_table = make_table(self)
        bar = QHBoxLayout()
        bar.addWidget(self.query, 1)
        bar.addWidget(self.replay_button)
        bar.addWidget(self.export_button)
        lower = QWidget(self)
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addLayout(bar)
        lower_layout.addWidget(self.summary)
        lower_layout.addWidget(self.replay_table, 1)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        upper = QWidget(self)
        upper_layout = QVBoxLayout(upper)
        upper_layout.setContentsMargins(0, 0, 0, 0)
        facets = QHBoxLayout()
        facets.addWidget(QLabel("Verdict:", upper))
        facets.addWidget(self.verdict_filter)
        facets.addStretch(1)
        upper_layout.addLayout(facets)
        upper_layout.addWidget(self.table, 1)
        splitter.addWidget(upper)
        splitter.addWidget(lower)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        # Controls without a visible label get a name screen readers can say.
        for control, accessible_name in ((self.query, "Query to replay"), (self.table, "Usage receipts"), (self.replay_table, "Replay, then versus now"),):
            control.setAccessibleName(accessible_name)
        self.set_memory(None)

    def set_memory(self, memory: StrataGate | None, journal_reader: JournalReader = list) -> None:
        self.memory = memory
        self.journal_reader = journal_reader
        self.receipts = []
        self.replay_button.setEnabled(False)
        fill_table(self.table, RECEIPT_COLUMNS, [])
        fill_table(self.replay_table, REPLAY_COLUMNS, [])
        self.summary.setText("No memory open" if memory is None else "")
        if memory is not None:
            self.refresh()

    def refresh(self) -> None:
        memory = self.memory
        if memory is None:
            return
        self.worker.run(
            memory.list_usage_receipts, on_done=self._show_receipts, description="list usage receipts"
        )

    def _show_receipts(self, receipts: list[UsageReceipt]) -> None:
        self.receipts = list(receipts)
        fill_table(self.table, RECEIPT_COLUMNS, [receipt_row(receipt) for receipt in self.receipts])
        self.verdict_filter.refresh()
        self.summary.setText(f"{len(self.receipts)} usage receipts")

    def selected_receipt(self) -> UsageReceipt | None:
        rows = self.table.selectionModel().selectedRows()
        return self.receipts[source_row(self.table, rows[0].row())] if rows else None

    def _selection_changed(self) -> None:
        receipt = self.selected_receipt()
        self.replay_button.setEnabled(receipt is not None)
        # A receipt written by the memory tools keeps the agent's query: replay exactly that.
        self.recorded = recorded_spec(receipt) if receipt is not None else None
        if self.recorded is not None:
            self.query.setText(self.recorded.query)

    def replay_selected(self) -> None:
        receipt, memory, read_journal = self.selected_receipt(), self.memory, self.journal_reader
        if receipt is None or memory is None:
            return
        recorded = self.recorded
        spec = recorded if recorded is not None and recorded.query == self.query.text() else build_spec(
            "events", self.query.text())
        self.summary.setText(f"Replaying {receipt.id}…")
        self.worker.run(
            lambda: replay(memory, receipt, spec, read_journal()),
            on_done=self._show_replay,
            on_error=lambda error: self.summary.setText(f"✘ {error}"),
            description=f"replay receipt {receipt.id}",
        )

    def export_to(self, path: Path) -> None:
        """The last replay, then vs now with its drift: every field (JSON) or the table (Markdown)."""
        if self.result is not None:
            write_result(path, f"Replay of {self.result.receipt_id}", self.result, REPLAY_COLUMNS, self.shown_rows)

    def _ask_export_path(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(self, "Export the replay", "", RESULT_FILTERS)
        if path:
            self.export_to(with_result_suffix(path, chosen))

    def _show_replay(self, result: ReplayResult) -> None:
        self.result = result
        turn = f"turn {result.turn_then}" + (
            "" if result.turn_is_known else " (the receipt has no turn: now)"
        )
        self.summary.setText(
            f"{result.receipt_id}: as of {turn}, {result.rolled_back} event(s) with curation rolled back from the "
            f"journal · {len(result.drifted)} of {len(result.rows)} rows drifted"
        )
        rows = [
            [
                row.id,
                row.title,
                "; ".join(row.drift),
                "yes" if row.in_receipt else "no",
                row.rank_then or "—",
                row.rank_now or "—",
                row.status_then or "(did not exist)",
                row.status_now or "(missing)",
                _optional(row.weight_then),
                _optional(row.weight_now),
            ]
            for row in result.rows
        ]
        fill_table(self.replay_table, REPLAY_COLUMNS, rows)
        self.shown_rows = rows
        self.export_button.setEnabled(True)
        for shown in range(self.replay_table.rowCount()):
            source = source_row(self.replay_table, shown)
            for column in drifted_columns(result.rows[source], rows[source]):
                self.replay_table.item(shown, column).setForeground(DRIFT_COLOR)
        self.replayed.emit(result)
