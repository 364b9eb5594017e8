"""Element histories: every fact version with its validity interval, and the element as of a chosen time."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QDateTime, Qt, QTimeZone, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDateTimeEdit,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSlider,
    QSplitter,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from stratagate.model import Element, ElementFact
from stratagate.timeutil import parse_js_date
from stratagate_gui.changes import Changes
from stratagate_gui.exports import TABLE_FILTERS, markdown_table, with_suffix_for, write_markdown, write_table
from stratagate_gui.views.cards import element_summary_markdown, link
from stratagate_gui.widgets.facets import FacetFilter
from stratagate_gui.widgets.markdown_browser import MarkdownBrowser
from stratagate_gui.widgets.plots import CalendarAxis, show_empty, show_values
from stratagate_gui.widgets.tables import enable_sorting, fill_rows

if TYPE_CHECKING:
    from stratagate.memory import StrataGate
    from stratagate_gui.context import AppContext

FACT_COLUMNS = ("Key", "Mode", "Value", "Status", "Valid from", "Valid to", "Sources")
FACT_COLOURS = {"active": "#16a34a", "superseded": "#9ca3af", "disputed": "#f59e0b"}
DAY_MS = 86_400_000
MIN_LABELLED_SHARE = 0.08
"""A fact bar shows its value only if it spans this share of the plotted time."""


def iso_utc(milliseconds: int) -> str:
    moment = datetime.fromtimestamp(milliseconds / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def fact_boundaries(element: Element) -> list[int]:
    """Every instant (epoch ms) where one of the element's facts starts or stops being valid."""
    instants = set()
    for fact in element.facts:
        for value in (fact.valid_from, fact.valid_to):
            parsed = parse_js_date(value) if value else None
            if parsed is not None:
                instants.add(parsed)
    return sorted(instants)


@dataclass
class AsOfState:
    """An element as of `at` (from `expand_element`) and the version before the change that made it."""

    at_ms: int
    view: Element
    previous: Element | None
    previous_at_ms: int | None


def load_as_of(memory: StrataGate, element_id: str, at_ms: int, boundaries: list[int]) -> AsOfState:
    """Runs on the database worker."""
    view = memory.expand_element(element_id, iso_utc(at_ms))
    changes = [instant for instant in boundaries if instant <= at_ms]
    if not changes:
        return AsOfState(at_ms, view, None, None)
    before = changes[-1] - 1
    return AsOfState(at_ms, view, memory.expand_element(element_id, iso_utc(before)), before)


def state_diff_markdown(state: AsOfState) -> str:
    lines = [f"### State as of {iso_utc(state.at_ms)}", ""]
    current = state.view.current_state.splitlines()
    lines += [f"    {line}" for line in current] or ["*(no fact valid at this time)*"]
    lines += ["", "### Change from the previous version", ""]
    if state.previous is None:
        lines.append("*(no earlier version: this is the first state)*")
        return "\n".join(lines)
    lines.append(f"Previous version: as of {iso_utc(state.previous_at_ms or 0)}")
    lines.append("")
    diff = [
        line for line in difflib.ndiff(state.previous.current_state.splitlines(), current)
        if line.startswith(("+ ", "- "))
    ]
    lines += [f"    {line}" for line in diff] or ["*(no change)*"]
    return "\n".join(lines)


NO_FACTS = "Pick an element in the list to see when each of its facts was valid"


class ValidityPlot(pg.PlotWidget):
    """One lane per fact key; each fact is a bar from valid-from to valid-to (open ends run to the edge)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, axisItems={"bottom": CalendarAxis()})
        self.setMinimumHeight(160)
        self.setMouseEnabled(y=False)
        self.hideButtons()
        self.intervals: list[tuple[str, str, int, float, float]] = []
        """(fact id, key, lane, start s, end s) as drawn."""
        self.cursor = pg.InfiniteLine(angle=90, pen=pg.mkPen("#ef4444", width=2))
        show_empty(self, NO_FACTS)

    def show_facts(self, facts: list[ElementFact], edges_ms: tuple[int, int]) -> None:
        self.clear()
        self.intervals = []
        if not facts:
            show_empty(self, NO_FACTS)
            return
        show_values(self)
        lanes: list[tuple[str, float]] = []
        """(key, end of its last bar): a fact overlapping the last bar of its key's lanes opens a new lane."""
        low, high = edges_ms[0] / 1000, edges_ms[1] / 1000
        for fact in facts:
            start = parse_js_date(fact.valid_from) if fact.valid_from else None
            end = parse_js_date(fact.valid_to) if fact.valid_to else None
            x0 = low if start is None else start / 1000
            x1 = high if end is None else end / 1000
            lane = next((n for n, (key, last_end) in enumerate(lanes) if key == fact.key and last_end <= x0), None)
            if lane is None:
                lane = len(lanes)
                lanes.append((fact.key, x1))
            else:
                lanes[lane] = (fact.key, x1)
            self.intervals.append((fact.id, fact.key, lane, x0, x1))
            colour = QColor(FACT_COLOURS.get(fact.status, "#3b82f6"))
            self.addItem(pg.BarGraphItem(x0=[x0], x1=[max(x1, x0 + 60)], y=[lane], height=0.5, brush=colour,
                                         pen=pg.mkPen("#00000060")))
            if x1 - x0 >= (high - low) * MIN_LABELLED_SHARE:  # short bars keep their value in the table only
                label = pg.TextItem(fact.value_text[:40], color="#111827", anchor=(0, 0.5))
                label.setPos(x0, lane)
                self.addItem(label)
        self.getAxis("left").setTicks([[(lane, key) for lane, (key, _end) in enumerate(lanes)]])
        self.getAxis("left").setWidth(110)
        self.addItem(self.cursor)
        self.setXRange(low, high, padding=0.02)
        self.setYRange(-0.6, max(1, len(lanes)) - 0.4, padding=0)

    def move_cursor(self, at_ms: int) -> None:
        self.cursor.setValue(at_ms / 1000)


LABEL_CHUNK = 500
"""Elements read at a time to label the list: only ids and labels are kept."""


def fact_rows(element: Element) -> list[tuple[str, ...]]:
    """The element's fact versions as the facts table shows them (`FACT_COLUMNS`)."""
    return [
        (fact.key, fact.mode, fact.value_text, fact.status, fact.valid_from or "−∞", fact.valid_to or "+∞",
         ", ".join(fact.source_event_ids))
        for fact in element.facts
    ]


def element_card_markdown(element: Element) -> str:
    """The element's card: what the summary pane shows, then every fact version."""
    return element_summary_markdown(element) + "\n\n### Facts\n\n" + markdown_table(FACT_COLUMNS, fact_rows(element))


def element_labels(memory: StrataGate) -> list[tuple[str, str]]:
    """(id, list label) of every element in section order (runs on the database worker)."""
    ids = memory.element_ids()
    labels = []
    for start in range(0, len(ids), LABEL_CHUNK):
        for element in memory.get_elements(ids[start : start + LABEL_CHUNK]):
            labels.append((element.id, f"{element.name}  ·  {element.type}\n{element.id} · {len(element.facts)} facts"))
    return labels


class ElementsView(QWidget):
    jump_requested = Signal(str, str)
    element_selected = Signal(str)

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx.host)
        self.ctx = ctx
        self.memory: StrataGate | None = None
        self.element_ids: list[str] = []
        self.element: Element | None = None
        self.boundaries: list[int] = []
        self.edges_ms = (0, DAY_MS)
        self.as_of: AsOfState | None = None

        self.element_list = QListWidget()
        self.element_list.currentItemChanged.connect(self._on_element_picked)
        self.summary = MarkdownBrowser()
        self.summary.setMaximumHeight(110)
        self.summary.internal_link_activated.connect(self.jump_requested)
        self.facts = QTableWidget(0, len(FACT_COLUMNS))
        self.facts.setHorizontalHeaderLabels(FACT_COLUMNS)
        self.facts.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.facts.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.facts.verticalHeader().setVisible(False)
        self.facts.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.facts.horizontalHeader().setStretchLastSection(True)
        enable_sorting(self.facts)
        self.status_filter = FacetFilter(self.facts, FACT_COLUMNS.index("Status"), "status")
        self.validity = ValidityPlot()
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, 1000)
        self.slider.valueChanged.connect(self._on_slider)
        self.date_field = QDateTimeEdit()
        self.date_field.setTimeZone(QTimeZone.utc())
        self.date_field.setDisplayFormat("yyyy-MM-dd HH:mm 'UTC'")
        self.date_field.setCalendarPopup(True)
        self.date_field.editingFinished.connect(lambda: self.show_as_of(self.date_field.dateTime().toMSecsSinceEpoch()))
        self.latest_button = QPushButton("Latest")
        self.latest_button.clicked.connect(lambda: self.show_as_of(self.edges_ms[1]))
        self.state_view = MarkdownBrowser()
        self.state_view.internal_link_activated.connect(self.jump_requested)
        self.save_card_button = QPushButton("Save card as Markdown…")
        self.save_card_button.clicked.connect(self._ask_card_path)
        self.export_facts_button = QPushButton("Export facts…")
        self.export_facts_button.clicked.connect(self._ask_facts_path)
        self._enable_exports()

        as_of_bar = QHBoxLayout()
        as_of_bar.addWidget(QLabel("As of"))
        as_of_bar.addWidget(self.slider, 1)
        as_of_bar.addWidget(self.date_field)
        as_of_bar.addWidget(self.latest_button)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.summary)
        status_row = QHBoxLayout()
        status_row.addWidget(QLabel("Fact status:"))
        status_row.addWidget(self.status_filter)
        status_row.addStretch(1)
        status_row.addWidget(self.save_card_button)
        status_row.addWidget(self.export_facts_button)
        right_layout.addLayout(status_row)
        right_layout.addWidget(self.facts, 2)
        right_layout.addWidget(self.validity, 2)
        right_layout.addLayout(as_of_bar)
        right_layout.addWidget(self.state_view, 2)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.element_list)
        splitter.addWidget(right)
        splitter.setSizes([240, 960])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        # Controls without a visible label get a name screen readers can say.
        for control, accessible_name in ((self.element_list, "Elements"), (self.summary, "Element summary"), (self.facts, "Fact versions"), (self.slider, "As of time"), (self.date_field, "As of date"), (self.state_view, "Element as of the chosen time"),):
            control.setAccessibleName(accessible_name)
        ctx.host.memory_changed.connect(self.set_memory)
        ctx.writes.changes.connect(self._on_changes)

    def set_memory(self, memory: StrataGate | None) -> None:
        self.memory = memory
        self.element = None
        self._enable_exports()
        self.element_ids = []
        # Removing items moves the current row; the old memory's elements must not be picked on the way.
        self.element_list.blockSignals(True)
        self.element_list.clear()
        self.element_list.blockSignals(False)
        self.facts.setRowCount(0)
        self.summary.clear()
        self.state_view.clear()
        show_empty(self.validity, NO_FACTS)
        if memory is not None:
            self.ctx.worker.run(lambda: element_labels(memory),
                                    on_done=lambda labels: self._show_elements(memory, labels),
                                    description="list elements")

    def _on_changes(self, changes: Changes) -> None:
        """Re-read the list after a write to elements or a re-read, keeping the element shown."""
        if changes.touches_elements and self.memory is not None:
            shown = self.element.id if self.element is not None else None
            memory = self.memory
            self.ctx.worker.run(
                lambda: element_labels(memory),
                on_done=lambda labels: self._show_elements(memory, labels, shown),
                description="list elements",
            )

    def _show_elements(self, memory: StrataGate, labels: list[tuple[str, str]], shown: str | None = None) -> None:
        if memory is not self.memory:
            return  # a memory opened since this list was asked for
        self.element_ids = [element_id for element_id, _label in labels]
        self.element_list.blockSignals(True)
        self.element_list.clear()
        self.element_list.blockSignals(False)
        for element_id, label in labels:
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, element_id)
            self.element_list.addItem(item)
        if shown in self.element_ids:
            self.select_element(shown)
        elif labels:
            self.element_list.setCurrentRow(0)

    def select_element(self, element_id: str) -> None:
        for row in range(self.element_list.count()):
            if self.element_list.item(row).data(Qt.ItemDataRole.UserRole) == element_id:
                self.element_list.setCurrentRow(row)

    def _on_element_picked(self, item: QListWidgetItem | None) -> None:
        if item is None or self.memory is None:
            return
        memory, element_id = self.memory, item.data(Qt.ItemDataRole.UserRole)
        self.ctx.worker.run(
            lambda: memory.get_elements([element_id]),
            on_done=lambda found: self._show_element(memory, found),
            description=f"read element {element_id}",
        )

    def _show_element(self, memory: StrataGate, found: list[Element]) -> None:
        current = self.element_list.currentItem()
        if memory is not self.memory or not found or current is None:
            return
        element = found[0]
        if current.data(Qt.ItemDataRole.UserRole) != element.id:
            return  # another element was picked meanwhile
        self.element = element
        self._enable_exports()
        self.boundaries = fact_boundaries(element)
        if self.boundaries:
            self.edges_ms = (self.boundaries[0] - DAY_MS, self.boundaries[-1] + DAY_MS)
        else:
            self.edges_ms = (0, DAY_MS)
        self.summary.set_markdown_text(element_summary_markdown(element))
        self._fill_facts(element)
        self.validity.show_facts(element.facts, self.edges_ms)
        self.element_selected.emit(element.id)
        self.show_as_of(self.edges_ms[1])

    def _fill_facts(self, element: Element) -> None:
        self.facts.setRowCount(len(element.facts))
        fill_rows(self.facts, fact_rows(element))
        for row in range(self.facts.rowCount()):
            status = self.facts.item(row, 3)
            status.setForeground(QColor(FACT_COLOURS.get(status.text(), "#3b82f6")))
        self.status_filter.refresh()

    # Exports -----------------------------------------------------------------------------------------------

    def save_card(self, path: Path) -> None:
        """The shown element's card (summary and every fact version) as a Markdown file."""
        if self.element is not None:
            self._write(path, lambda element: write_markdown(path, element_card_markdown(element)), "card")

    def export_facts(self, path: Path) -> None:
        """The shown element's fact versions as CSV or JSON (by the file's suffix)."""
        if self.element is not None:
            self._write(path, lambda element: write_table(path, FACT_COLUMNS, fact_rows(element)), "facts")

    def _write(self, path: Path, write: Callable[[Element], object], what: str) -> None:
        element = self.element
        self.ctx.worker.run(
            lambda: write(element),
            on_done=lambda _result: self.ctx.writes.message.emit(f"Saved the {what} of {element.name} to {path}"),
            on_error=lambda error: self.ctx.writes.report(f"save the {what} of {element.name}", error),
            description=f"save the {what} of {element.id}",
        )

    def _ask_card_path(self) -> None:
        path, _chosen = QFileDialog.getSaveFileName(self, "Save the element's card", "", "Markdown (*.md)")
        if path:
            self.save_card(Path(path) if Path(path).suffix else Path(path).with_suffix(".md"))

    def _ask_facts_path(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(self, "Export the element's facts", "", TABLE_FILTERS)
        if path:
            self.export_facts(with_suffix_for(path, chosen))

    def _enable_exports(self) -> None:
        for button in (self.save_card_button, self.export_facts_button):
            button.setEnabled(self.element is not None)

    def show_as_of(self, at_ms: int) -> None:
        """Ask the engine for the element as of `at_ms` (epoch ms) and show it with its last change."""
        element, memory = self.element, self.memory
        if element is None or memory is None:
            return
        low, high = self.edges_ms
        at_ms = max(low, min(high, at_ms))
        self._sync_controls(at_ms)
        self.validity.move_cursor(at_ms)
        boundaries = self.boundaries
        self.ctx.worker.run(
            lambda: load_as_of(memory, element.id, at_ms, boundaries),
            on_done=lambda state: self._show_state(memory, state),
            description=f"expand element {element.id}",
        )

    def _show_state(self, memory: StrataGate, state: AsOfState) -> None:
        if memory is not self.memory or self.element is None or state.view.id != self.element.id:
            return
        self.as_of = state
        sources = ", ".join(link("event", event) for fact in state.view.facts for event in fact.source_event_ids)
        text = state_diff_markdown(state) + f"\n\n**Facts valid then come from:** {sources or 'none'}"
        self.state_view.set_markdown_text(text)

    def _sync_controls(self, at_ms: int) -> None:
        low, high = self.edges_ms
        self.slider.blockSignals(True)
        self.slider.setValue(round((at_ms - low) / max(1, high - low) * self.slider.maximum()))
        self.slider.blockSignals(False)
        self.date_field.blockSignals(True)
        self.date_field.setDateTime(QDateTime.fromMSecsSinceEpoch(at_ms, QTimeZone.utc()))
        self.date_field.blockSignals(False)

    def _on_slider(self, value: int) -> None:
        low, high = self.edges_ms
        self.show_as_of(low + round((high - low) * value / self.slider.maximum()))

