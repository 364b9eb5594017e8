"""Event cards: a filterable lazy list, the card of the selected event, and its two time axes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QCompleter,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from stratagate.model import CRITICALITIES, EVENT_STATUSES, Event
from stratagate.storage.event_order import EVENT_ORDERS
from stratagate.storage.sql import SqlBackend
from stratagate.weights import memory_weight_at
from stratagate_gui import shortcuts
from stratagate_gui.exports import TABLE_FILTERS, with_suffix_for, write_markdown, write_table
from stratagate_gui.models.lazy_table import LazyIdTableModel, Row, sorted_ids
from stratagate_gui.views.cards import event_card_markdown
from stratagate_gui.views.temporal import event_times, happened_text
from stratagate_gui.widgets.markdown_browser import MarkdownBrowser
from stratagate_gui.widgets.plots import CalendarAxis, show_empty, show_values
from stratagate_gui.widgets.row_menu import RowAction, show_row_menu
from stratagate_gui.widgets.tables import enable_sorting

if TYPE_CHECKING:
    from stratagate.memory import StrataGate
    from stratagate_gui.context import AppContext

EVENT_COLUMNS = (
    "Title", "Type", "Status", "Criticality", "Weight", "Mentioned at", "Happened", "Participants", "Pinned", "Id"
)
"""Each column sorts by the `EVENT_ORDERS` entry at its place."""
STATUS_COLUMN = EVENT_COLUMNS.index("Status")
ANY = "any"
PINNED, NOT_PINNED = "pinned", "not pinned"
MAX_PLOTTED_EVENTS = 50
FIRST_PAGE = LazyIdTableModel.PAGE_SIZE
"""Ids read before the first paint; the whole list follows in the background."""
STATUS_COLOURS = {"superseded": QColor("#b45309"), "forgotten": QColor("#9ca3af"), "archived": QColor("#9ca3af")}


def event_rows(memory: StrataGate, ids: list[str]) -> list[Row]:
    """Table rows for these event ids (runs on the database worker)."""
    events = {event.id: event for event in memory.get_events(ids)}
    now = memory.current_turn
    rows: list[Row] = []
    for identifier in ids:
        event = events.get(identifier)
        if event is None:
            rows.append(("(missing)", "", "", "", "", "", "", "", "", identifier))
            continue
        temporal = event.temporal
        rows.append((
            event.title,
            temporal.event_type or "",
            event.status,
            event.criticality,
            f"{memory_weight_at(event, now):.3f}",
            temporal.mentioned_at or "",
            happened_text(temporal),
            ", ".join(temporal.participants or []),
            "pinned" if event.weight.pinned else "",
            identifier,
        ))
    return rows


def list_events(
    memory: StrataGate, where: dict[str, str], sorting: tuple[int, bool] | None, limit: int | None = None
) -> Sequence[str]:
    """The ids a filtered, sorted event table shows, the first `limit` only if given (runs on the database
    worker). The storage filters and, on SQL stores, sorts by the column's value and holds the ids packed
    (`PackedKeys`: a million ids in about 20 MB); an in-memory store's ids are sorted here by building rows."""
    where = dict(where)
    if "pinned" in where:
        where["pinned"] = where["pinned"] == PINNED
    if sorting is not None and not isinstance(memory.backend, SqlBackend):
        ids = memory.event_ids(where or None)
        return sorted_ids(ids, lambda chunk: event_rows(memory, chunk), *sorting)[:limit]
    order, descending = (EVENT_ORDERS[sorting[0]], sorting[1]) if sorting is not None else (None, False)
    return memory.event_key_list(where or None, order, descending, limit)


class EventFilterBar(QWidget):
    changed = Signal(dict)
    """The `where` filter for `StrataGate.event_ids`: only the keys the user set."""
    suggestions_wanted = Signal()
    """The type or participant box got the focus and its suggestions are not listed (or out of date)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status = QComboBox()
        self.status.addItems((ANY, *EVENT_STATUSES))
        self.criticality = QComboBox()
        self.criticality.addItems((ANY, *CRITICALITIES))
        self.pinned = QComboBox()
        self.pinned.addItems((ANY, PINNED, NOT_PINNED))
        self.event_type = QLineEdit(placeholderText="type")
        self.participant = QLineEdit(placeholderText="participant")
        self.text = QLineEdit(placeholderText="search text")
        self.text.setClearButtonEnabled(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label, widget in (("Status", self.status), ("Criticality", self.criticality), ("Pinned", self.pinned)):
            layout.addWidget(QLabel(label))
            layout.addWidget(widget)
        for widget in (self.event_type, self.participant, self.text):
            layout.addWidget(widget, 1 if widget is not self.text else 2)
        # Typing restarts a short timer, so a 100k-event memory is queried once per pause, not per key.
        self._debounce = QTimer(self, singleShot=True, interval=250)
        self._debounce.timeout.connect(lambda: self.changed.emit(self.where()))
        for combo in (self.status, self.criticality, self.pinned):
            combo.currentIndexChanged.connect(self._debounce.start)
        for line in (self.event_type, self.participant, self.text):
            line.textChanged.connect(self._debounce.start)
        for control, accessible_name in (
            (self.status, "Status filter"), (self.criticality, "Criticality filter"), (self.pinned, "Pinned filter"),
            (self.event_type, "Event type filter"), (self.participant, "Participant filter"), (self.text, "Text filter"),
        ):
            control.setAccessibleName(accessible_name)
        # Both boxes match exactly, so they suggest the memory's values. Listing them reads every event's
        # JSON, so it waits until the user first goes to one of the boxes.
        self.suggestions: dict[str, QStringListModel] = {}
        for line, name in ((self.event_type, "eventType"), (self.participant, "participant")):
            self.suggestions[name] = QStringListModel(self)
            completer = QCompleter(self.suggestions[name], line)
            completer.setFilterMode(Qt.MatchFlag.MatchContains)
            completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
            completer.setMaxVisibleItems(12)
            line.setCompleter(completer)
            line.installEventFilter(self)
        self.suggestions_current = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.FocusIn and not self.suggestions_current:
            self._ask_for_suggestions()
        return super().eventFilter(watched, event)

    def _ask_for_suggestions(self) -> None:
        self.suggestions_current = True  # asked once; `forget_suggestions` asks again
        self.suggestions_wanted.emit()

    def set_suggestions(self, values: dict[str, list[str]]) -> None:
        """The values each box suggests, by filter name (`eventType`, `participant`)."""
        for name, model in self.suggestions.items():
            model.setStringList(values.get(name, []))

    def forget_suggestions(self) -> None:
        """Another memory, or its events changed: list the values again when a box next gets the focus."""
        self.suggestions_current = False
        if self.event_type.hasFocus() or self.participant.hasFocus():
            self._ask_for_suggestions()

    def where(self) -> dict[str, str]:
        where = {
            "status": self.status.currentText(),
            "criticality": self.criticality.currentText(),
            "pinned": self.pinned.currentText(),
            "eventType": self.event_type.text().strip(),
            "participant": self.participant.text().strip(),
            "text": self.text.text().strip(),
        }
        return {key: value for key, value in where.items() if value and value != ANY}


NO_TIMES = "Select events that have a mentioned or happened date to place them in time"


class TemporalPlot(pg.PlotWidget):
    """Two lanes on one date axis: when each selected event was mentioned, and when it happened."""

    MENTIONED_LANE, HAPPENED_LANE = 1.0, 0.0

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, axisItems={"bottom": CalendarAxis()})
        self.setMinimumHeight(150)
        self.setMouseEnabled(y=False)
        self.hideButtons()
        left = self.getAxis("left")
        left.setTicks([[(self.MENTIONED_LANE, "mentioned at"), (self.HAPPENED_LANE, "happened")]])
        left.setWidth(90)
        self.setYRange(-0.6, 1.6, padding=0)
        self.mentioned_points: list[tuple[str, float]] = []
        self.happened_spans: list[tuple[str, float, float]] = []
        self.unreadable: list[str] = []
        show_empty(self, NO_TIMES)

    def show_events(self, events: list[Event], highlighted: str | None) -> None:
        self.clear()
        self.mentioned_points, self.happened_spans, self.unreadable = [], [], []
        for event in events:
            times = event_times(event.temporal)
            colour = "#ef4444" if event.id == highlighted else "#3b82f6"
            self.unreadable += [f"{event.id}: {note}" for note in times.unreadable]
            if times.mentioned:
                x = times.mentioned.start
                self.mentioned_points.append((event.id, x))
                self.addItem(pg.ScatterPlotItem([x], [self.MENTIONED_LANE], size=10, brush=colour, pen=None))
            if times.happened:
                start, end = times.happened.start, times.happened.end
                self.happened_spans.append((event.id, start, end))
                if end > start:
                    bar = pg.BarGraphItem(x0=[start], x1=[end], y=[self.HAPPENED_LANE], height=0.35, brush=colour, pen=None)
                    self.addItem(bar)
                else:
                    self.addItem(pg.ScatterPlotItem([start], [self.HAPPENED_LANE], size=10, symbol="d", brush=colour, pen=None))
                if times.mentioned:
                    link = pg.PlotDataItem([times.mentioned.start, start], [self.MENTIONED_LANE, self.HAPPENED_LANE])
                    link.setPen(pg.mkPen(colour, width=1, style=Qt.PenStyle.DotLine))
                    self.addItem(link)
            elif any(note.startswith("happened") for note in times.unreadable) and times.mentioned:
                # An unreadable happened-at is drawn as a flag under its mention, so it is seen, not dropped.
                flag = pg.TextItem("?", color="#ef4444", anchor=(0.5, 0.5))
                flag.setPos(times.mentioned.start, self.HAPPENED_LANE)
                self.addItem(flag)
        xs = [x for _id, x in self.mentioned_points] + [x for _id, s, e in self.happened_spans for x in (s, e)]
        if not xs:
            show_empty(self, NO_TIMES)
            return
        show_values(self)
        margin = max(86_400.0, (max(xs) - min(xs)) * 0.05)
        self.setXRange(min(xs) - margin, max(xs) + margin, padding=0)
        self.setYRange(-0.6, 1.6, padding=0)


class EventsView(QWidget):
    jump_requested = Signal(str, str)
    """(kind, id) from a card link: "block", "message", "event"."""
    selection_changed = Signal(list)
    """Ids of the selected events (the decay view plots them)."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx.host)
        self.ctx = ctx
        self.memory: StrataGate | None = None
        self.filters = EventFilterBar()
        self.model = LazyIdTableModel(ctx.worker, EVENT_COLUMNS, self)
        self.model.cell_foreground = lambda row, column: STATUS_COLOURS.get(row[STATUS_COLUMN])
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate((260, 90, 85, 85, 60, 200, 180, 140, 60)):
            self.table.setColumnWidth(column, width)
        self.model.sort_changed = self.refresh
        enable_sorting(self.table)
        shortcuts.bind_row_movement(self.table)
        self.row_actions: list[RowAction] = [
            RowAction("Save card as Markdown…", lambda ids: self._ask_path_then(
                "Save event card", "Markdown (*.md)", lambda path: self.save_card(ids[0], path))),
            RowAction("Export every listed event (CSV/JSON)…", lambda _ids: self._ask_path_then(
                "Export events", TABLE_FILTERS, self.export_rows)),
        ]
        """Right-click entries; peers add theirs (curation's pin and forget, "Show in Curation")."""
        show_row_menu(self.table, self.model, EVENT_COLUMNS, lambda: self.row_actions)
        self.count_label = QLabel()
        self.card = MarkdownBrowser()
        self.card.internal_link_activated.connect(self.jump_requested)
        self.temporal_plot = TemporalPlot()
        self.unreadable_label = QLabel()
        self.unreadable_label.setWordWrap(True)
        self.unreadable_label.setStyleSheet("color: #dc2626;")

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.filters)
        left_layout.addWidget(self.table, 1)
        left_layout.addWidget(self.count_label)
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.card)
        plot_box = QWidget()
        plot_layout = QVBoxLayout(plot_box)
        plot_layout.setContentsMargins(0, 0, 0, 0)
        plot_layout.addWidget(self.temporal_plot, 1)
        plot_layout.addWidget(self.unreadable_label)
        right.addWidget(plot_box)
        right.setSizes([420, 220])
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([700, 500])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

        self.filters.changed.connect(self._query)
        self.filters.suggestions_wanted.connect(self._list_suggestions)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        # Controls without a visible label get a name screen readers can say.
        for control, accessible_name in ((self.table, "Events"), (self.card, "Event card"),):
            control.setAccessibleName(accessible_name)
        ctx.host.memory_changed.connect(self.set_memory)
        ctx.host.thread_changed.connect(lambda _thread: self.refresh())
        ctx.writes.changes.connect(lambda changes: self._events_changed() if changes.touches_events else None)
        self._pending_select: str | None = None
        """An event a jump asked for while the filters hid it (shown once the cleared filters apply)."""
        self._reselect: str | None = None
        self._listing = self._listed = 0
        """Counts the lists asked for (a list's answer is shown only if no newer one was asked for since) and
        the last one shown whole."""

    def set_memory(self, memory: StrataGate | None) -> None:
        self.memory = memory
        self.filters.set_suggestions({})
        self.filters.forget_suggestions()
        self.card.clear()
        self.temporal_plot.show_events([], None)
        self.unreadable_label.clear()
        # Drop the old memory's ids and loader now: it is closed right after this, and a repaint before the new
        # ids arrive must not ask it for rows.
        self.model.clear()
        self.count_label.clear()
        if memory is not None:
            self._query(self.filters.where())

    def _events_changed(self) -> None:
        self.filters.forget_suggestions()
        self.refresh()

    def _list_suggestions(self) -> None:
        memory = self.memory
        if memory is None:
            return
        self.ctx.worker.run(
            lambda: {name: memory.event_filter_values(name) for name in ("eventType", "participant")},
            on_done=lambda values: self.filters.set_suggestions(values) if memory is self.memory else None,
            description="list the event types and participants",
        )

    def refresh(self) -> None:
        """Re-read after a write: the same filter, rebuilt rows, and the current event reselected if the filter
        still shows it (its card and curves then show the written state)."""
        if self.memory is not None:
            current = self.table.currentIndex()
            self._reselect = self.model.id_at(current.row()) if current.isValid() else None
            self._query(self.filters.where(), keep_rows=True)

    def _query(self, where: dict[str, str], keep_rows: bool = False) -> None:
        """List the events. A new list (another memory or filter) paints first: its first page is read at
        once and the whole list (a million ids) in the worker's background lane, after the first rows."""
        memory = self.memory
        if memory is None:
            return
        if self.ctx.thread_id is not None:
            where = {**where, "threadId": self.ctx.thread_id}
        sorting = self.model.sorting
        self._listing += 1
        listing = self._listing
        if not keep_rows:
            self.ctx.worker.run(
                lambda: list_events(memory, where, sorting, limit=FIRST_PAGE),
                on_done=lambda ids: self._show_first_page(memory, listing, ids),
                description="list the first events",
            )
        self.ctx.worker.run(
            lambda: list_events(memory, where, sorting),
            on_done=lambda ids: self._show_ids(memory, listing, ids, keep_rows),
            description="list events",
            background=not keep_rows,
        )

    def _show_first_page(self, memory: StrataGate, listing: int, ids: Sequence[str]) -> None:
        if memory is not self.memory or listing != self._listing:
            return
        self.model.set_ids(ids, lambda chunk: event_rows(memory, chunk))
        self.model.prefetch(0)  # queued now, the first rows are built while the timeline draws
        self.count_label.setText(f"{len(ids):,} events" + (" (counting…)" if len(ids) == FIRST_PAGE else ""))

    def _show_ids(self, memory: StrataGate, listing: int, ids: Sequence[str], keep_rows: bool) -> None:
        if memory is not self.memory or listing != self._listing:
            return
        if keep_rows:  # after a write: rows stay on screen until rebuilt, the selection follows its ids
            self.model.update_ids(ids, lambda chunk: event_rows(memory, chunk))
        elif not self.model.extend_ids(ids):  # the first page shown is not how this list starts (a write came)
            self.model.set_ids(ids, lambda chunk: event_rows(memory, chunk))
        self._listed = listing
        self.count_label.setText(f"{len(ids):,} events")
        if self._pending_select:
            self.select_event(self._pending_select)
        elif self._reselect and self.model.row_of(self._reselect) >= 0:
            self.select_event(self._reselect)
            self._on_selection()  # the selection may not have moved; its card must show the written state
        self._reselect = None

    # Exports -----------------------------------------------------------------------------------------------

    def export_rows(self, path: Path) -> None:
        """Every event the filters list, in the table's order, as CSV or JSON (by the file's suffix)."""
        memory, ids = self.memory, [self.model.id_at(row) for row in range(self.model.total)]
        if memory is None:
            return
        self.ctx.worker.run(
            lambda: write_table(path, EVENT_COLUMNS, event_rows(memory, ids)),
            on_done=lambda count: self.ctx.writes.message.emit(f"Exported {count} events to {path}"),
            on_error=lambda error: self.ctx.writes.report(f"export events to {path}", error),
            description=f"export events to {path}",
        )

    def save_card(self, event_id: str, path: Path) -> None:
        """The event's card, as the view shows it, as a Markdown file."""
        memory = self.memory
        if memory is None:
            return

        def write() -> None:
            event = memory.get_event(event_id)
            write_markdown(path, event_card_markdown(event, memory_weight_at(event, memory.current_turn)))

        self.ctx.worker.run(
            write,
            on_done=lambda _none: self.ctx.writes.message.emit(f"Saved the card of {event_id} to {path}"),
            on_error=lambda error: self.ctx.writes.report(f"save the card of {event_id}", error),
            description=f"save the card of {event_id}",
        )

    def _ask_path_then(self, title: str, filters: str, save: Callable[[Path], None]) -> None:
        path, chosen = QFileDialog.getSaveFileName(self, title, "", filters)
        if path:
            save(with_suffix_for(path, chosen))

    def selected_ids(self) -> list[str]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.model.id_at(row) for row in rows]

    def select_event(self, event_id: str) -> bool:
        """Select and show an event (a jump target); clears the filters if they hide it."""
        row = self.model.row_of(event_id)
        if row < 0:
            if self._listed < self._listing:  # only the first page is here yet: select it once listed
                self._pending_select = event_id
            elif self.filters.where():
                self._pending_select = event_id
                self._clear_filters()
            return False
        self._pending_select = None
        index = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def _clear_filters(self) -> None:
        self.filters.status.setCurrentIndex(0)
        self.filters.criticality.setCurrentIndex(0)
        self.filters.pinned.setCurrentIndex(0)
        for line in (self.filters.event_type, self.filters.participant, self.filters.text):
            line.clear()

    def _on_selection(self) -> None:
        ids = self.selected_ids()
        self.selection_changed.emit(ids)
        memory = self.memory
        if not ids or memory is None:
            return
        current = ids[-1] if self.table.currentIndex().row() < 0 else self.model.id_at(self.table.currentIndex().row())
        plotted = ids[:MAX_PLOTTED_EVENTS]
        self.ctx.worker.run(
            lambda: (memory.get_events(plotted), memory.get_events([current])),
            on_done=lambda result: self._show_card(memory, current, *result),
            description=f"read event {current}",
        )

    def _show_card(self, memory: StrataGate, current: str, plotted: list[Event], events: list[Event]) -> None:
        if memory is not self.memory or not events:
            return
        weight = memory_weight_at(events[0], memory.current_turn)
        self.card.set_markdown_text(event_card_markdown(events[0], weight))
        self.temporal_plot.show_events(plotted, current)
        unreadable = self.temporal_plot.unreadable
        self.unreadable_label.setText("⚠ Not plotted: " + "; ".join(unreadable) if unreadable else "")
