"""Model calls: the memory's model-response history (the last few successful calls of its summarizer,
extractor and projector), with the model, token counts and latency a model adapter recorded. Read-only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit, QSplitter, QVBoxLayout, QWidget

from stratagate.model import ModelResponse
from stratagate_gui.forensics.workbench import fill_table, make_table
from stratagate_gui.widgets.tables import source_row, visual_row

if TYPE_CHECKING:
    from stratagate.memory import StrataGate
    from stratagate_gui.context import AppContext

COLUMNS = ["At", "Kind", "Model", "Input tokens", "Output tokens", "Latency ms"]


def call_row(response: ModelResponse) -> list[Any]:
    usage = response.usage
    if usage is None:  # recorded by a host without usage (the reference, a rule-based run)
        return [response.created_at, response.kind, "", "", "", ""]
    return [response.created_at, response.kind, usage.model, usage.input_tokens, usage.output_tokens,
            usage.latency_ms]


class ModelCallsView(QWidget):
    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx.host)
        self.ctx = ctx
        self.responses: list[ModelResponse] = []
        self.table = make_table(self)
        self.answer = QPlainTextEdit(self)
        self.answer.setReadOnly(True)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.answer)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self.table.itemSelectionChanged.connect(self._show_answer)
        # Controls without a visible label get a name screen readers can say.
        for control, accessible_name in ((self.table, "Model calls"), (self.answer, "Model answer"),):
            control.setAccessibleName(accessible_name)
        ctx.host.memory_changed.connect(self.set_memory)
        # A model call is recorded with the writes it served: re-read after any write, ours or another's.
        ctx.writes.changes.connect(lambda changes: changes.touches_memory and self.set_memory(ctx.memory))

    def set_memory(self, memory: StrataGate | None) -> None:
        if memory is None:
            self._show([])
            return
        self.ctx.worker.run(
            lambda: sorted(memory.list_successful_model_responses(), key=lambda response: response.created_at),
            on_done=self._show,
            description="list model calls",
        )

    def _show(self, responses: list[ModelResponse]) -> None:
        # A refresh keeps the call the user is reading selected, if it is still listed; else the newest call
        # is selected, its answer shown below.
        rows = self.table.selectionModel().selectedRows()
        selected = self.responses[source_row(self.table, rows[0].row())] if rows else None
        self.responses = responses
        fill_table(self.table, COLUMNS, [call_row(response) for response in responses])
        self.answer.clear()
        if responses:
            source = responses.index(selected) if selected in responses else len(responses) - 1
            self.table.selectRow(visual_row(self.table, source))
            self._show_answer()

    def _show_answer(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        row = source_row(self.table, rows[0].row() if rows else self.table.currentRow())
        if 0 <= row < len(self.responses):
            self.answer.setPlainText(self.responses[row].response)
