"""The block timeline: blocks along the turn axis coloured by level, L0–L5 rendering, and user lifts."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QStringListModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from stratagate.blocks import BLOCK_MAX_LEVEL, BlockSpan, block_level_label, render_block
from stratagate.model import Block, Message
from stratagate_gui.changes import Changes
from stratagate_gui.theme import LEVEL_COLOURS
from stratagate_gui.views.cards import escape
from stratagate_gui.views.reload_when_shown import ReloadWhenShown
from stratagate_gui.widgets.markdown_browser import MarkdownBrowser, render_markdown

if TYPE_CHECKING:
    from stratagate.memory import StrataGate
    from stratagate_gui.context import AppContext

CURRENT_LEVEL = BLOCK_MAX_LEVEL + 1
"""The rendering choice "each block at its own current level" (a button id, so not -1: Qt reserves it)."""
RENDERED_AROUND_SELECTION = 40
"""Blocks rendered on each side of the selected one: a long memory is read a window at a time."""
MAX_LABELLED_BLOCKS = 400


@dataclass
class TimelineData:
    spans: list[BlockSpan]
    """Every block of the thread (or all) as the plot and the list draw it: place, level now, no text."""
    blocks: dict[str, Block]
    """The blocks read in full: those rendered around the selection."""


def window_ids(spans: list[BlockSpan], around: str | None) -> list[str]:
    """The ids rendered with `around` (default: the last block): `RENDERED_AROUND_SELECTION` on each side."""
    ids = [span.id for span in spans]
    index = ids.index(around) if around in ids else len(ids) - 1
    return ids[max(0, index - RENDERED_AROUND_SELECTION) : index + RENDERED_AROUND_SELECTION + 1]


def load_timeline(memory: StrataGate, thread_id: str | None, around: str | None) -> TimelineData:
    """Spans of a thread (or all) from one query, and the full blocks of the window around `around` only
    (runs on the database worker): a long memory is drawn without reading every block's text."""
    spans = memory.block_spans(thread_id)
    return TimelineData(spans, {block.id: block for block in memory.get_blocks(window_ids(spans, around))})


def find_message_block(memory: StrataGate, message_id: str) -> Block | None:
    """The block holding a raw message, found by the storage's index and read alone (on the database worker)."""
    found = memory.get_blocks(memory.block_ids({"messageId": message_id})[:1])
    return found[0] if found else None


def raw_messages_markdown(messages: list[Message]) -> str:
    """L5 for reading: every raw message with its id, time and the tool calls it made (arguments and results)."""
    parts = []
    for message in messages:
        parts.append(f"**{escape(message.role)}** · `{message.id}` · {escape(message.created_at)}\n\n{message.content}")
        for call in message.tool_calls or []:
            trace = {"arguments": call.arguments, "result": call.result}
            parts.append(f"Tool call `{call.name}`\n\n```json\n{json.dumps(trace, indent=2, ensure_ascii=False)}\n```")
    return "\n\n".join(parts)


def block_html(block: Block, current: int, level: int) -> str:
    """One block's header (with its `current` level) and its content at `level`; L5 carries an anchor per
    message for jumps."""
    lifted = {None: "", "legacy": " · lifted (before v7 recorded by whom)"}.get(
        block.lift_source, f" · lifted by {block.lift_source}"
    )
    thread = f" · thread {escape(block.thread_id)}" if block.thread_id else ""
    header = (
        f"### {escape(block.id)} · turns {block.start_turn}–{block.end_turn}{thread}\n\n"
        f"*{escape(block_level_label(level))}* · current level L{current}{lifted}"
    )
    parts = [f'<a name="{html.escape(block.id)}"></a>', render_markdown(header)]
    if level == BLOCK_MAX_LEVEL:
        for message in block.l5_raw:
            parts.append(f'<a name="{html.escape(message.id)}"></a>')
            parts.append(render_markdown(raw_messages_markdown([message])))
    else:
        content = render_block(block, level)
        parts.append(render_markdown(content))
    return "\n".join(parts) + "<hr/>"


class SpanListModel(QStringListModel):
    """The block list: one row per span, its text built when Qt asks for it (16k blocks list at once).

    The rows are the spans' ids in a Qt string list, so Qt counts and indexes them without calling Python:
    laying out the list asks for the row count twice per row, and a Python `rowCount` made that 0.1 s at
    16k blocks. Rows are read-only, as a plain list model's are."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[BlockSpan] = []
        self.rows: dict[str, int] = {}

    def set_spans(self, spans: list[BlockSpan]) -> None:
        self.spans = spans
        self.rows = {span.id: row for row, span in enumerate(spans)}
        self.setStringList([span.id for span in spans])  # resets the model

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        return QAbstractListModel.flags(self, index)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        span = self.spans[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"L{span.level}  {span.id}  turns {span.start_turn}–{span.end_turn}\n{span.title}"
        if role == Qt.ItemDataRole.UserRole:
            return span.id
        if role == Qt.ItemDataRole.ForegroundRole:
            return QColor(LEVEL_COLOURS[span.level])
        return None


class BlockTimelinePlot(pg.PlotWidget):
    """Blocks as bars from start turn to end turn, one lane per thread, coloured by current level."""

    block_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(140)
        self.setMouseEnabled(y=False)
        self.hideButtons()
        self.setLabel("bottom", "turn")
        self.bars: list[tuple[str, int, int, int, int]] = []
        """(block id, start turn, end turn, lane, level) as drawn."""
        self.scene().sigMouseClicked.connect(self._on_click)

    def show_spans(self, spans: list[BlockSpan], selected: str | None) -> None:
        self.clear()
        lanes: dict[str | None, int] = {}
        self.bars = [(span.id, span.start_turn, span.end_turn, lanes.setdefault(span.thread_id, len(lanes)), span.level)
                     for span in spans]
        # One array per column, masked per level: 16k blocks are drawn without a Python list per level.
        starts, ends, bar_lanes, levels = (np.array([bar[column] for bar in self.bars], dtype=float)
                                           for column in (1, 2, 3, 4))
        for level, colour in enumerate(LEVEL_COLOURS):
            at_level = levels == level
            if at_level.any():
                self.addItem(pg.BarGraphItem(
                    x0=starts[at_level] - 0.5, x1=ends[at_level] + 0.5, y=bar_lanes[at_level],
                    height=0.6, brush=QColor(colour), pen=pg.mkPen("#00000040"),
                ))
        for bar in self.bars:
            if bar[0] == selected:
                outline = pg.BarGraphItem(x0=[bar[1] - 0.5], x1=[bar[2] + 0.5], y=[bar[3]], height=0.75,
                                          brush=None, pen=pg.mkPen("#111827", width=2))
                self.addItem(outline)
        if len(self.bars) <= MAX_LABELLED_BLOCKS:
            for _block_id, start, end, lane, level in self.bars:
                text = pg.TextItem(f"L{level}", color="#ffffff", anchor=(0.5, 0.5))
                text.setPos((start + end) / 2, lane)
                self.addItem(text)
        self.getAxis("left").setTicks([[(lane, thread or "no thread") for thread, lane in lanes.items()]])
        if self.bars:
            self.setXRange(int(starts.min()) - 1, int(ends.max()) + 1, padding=0.02)
            self.setYRange(-0.6, len(lanes) - 0.4, padding=0)

    def _on_click(self, event) -> None:
        point = self.getPlotItem().vb.mapSceneToView(event.scenePos())
        for block_id, start, end, lane, _level in self.bars:
            if start - 0.5 <= point.x() <= end + 0.5 and abs(point.y() - lane) <= 0.3:
                self.block_clicked.emit(block_id)
                return


class TimelineView(ReloadWhenShown, QWidget):
    block_selected = Signal(str)
    lift_requested = Signal(str, int)
    """(block id, level): the Lift button, for the curation controller."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx.host)
        self.ctx = ctx
        self.memory: StrataGate | None = None
        self.data = TimelineData([], {})
        self.selected_block: str | None = None
        self.rendering_level = CURRENT_LEVEL

        self.plot = BlockTimelinePlot()
        self.plot.block_clicked.connect(self.select_block)
        self.level_buttons = QButtonGroup(self)
        level_bar = QHBoxLayout()
        level_bar.addWidget(QLabel("Render every block at"))
        for level, text in [(CURRENT_LEVEL, "its level")] + [(n, f"L{n}") for n in range(BLOCK_MAX_LEVEL + 1)]:
            # Tool buttons are as wide as their text; seven push buttons at the style's 80 px minimum made
            # this bar alone wider than a 1280 px screen.
            button = QToolButton(text=text, checkable=True, checked=level == CURRENT_LEVEL)
            if level != CURRENT_LEVEL:
                button.setToolTip(block_level_label(level))
                button.setStyleSheet(f"QToolButton:checked {{ background: {LEVEL_COLOURS[level]}; color: white; }}")
            self.level_buttons.addButton(button, level)
            level_bar.addWidget(button)
        self.level_buttons.idClicked.connect(self.set_rendering_level)
        level_bar.addStretch(1)
        level_bar.addWidget(QLabel("Lift selected block to"))
        self.lift_target = QComboBox()
        self.lift_target.addItems([block_level_label(level) for level in range(BLOCK_MAX_LEVEL + 1)])
        self.lift_target.setCurrentIndex(BLOCK_MAX_LEVEL)
        # The labels are long descriptions: the closed box shows their start, the open list all of them.
        self.lift_target.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.lift_target.setMinimumContentsLength(16)
        self.lift_button = QPushButton("Lift")
        self.lift_button.setToolTip("Anchor the block at this level now; recorded as lifted by the user")
        self.lift_button.clicked.connect(self.lift_selected)
        self.lift_button.setEnabled(False)  # nothing to lift until a writable memory is open
        level_bar.addWidget(self.lift_target)
        level_bar.addWidget(self.lift_button)

        self.list_model = SpanListModel()
        self.block_list = QListView()
        self.block_list.setUniformItemSizes(True)  # rows are not measured one by one
        self.block_list.setModel(self.list_model)
        self.block_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.block_list.selectionModel().currentChanged.connect(self._on_list_selection)
        self.content = MarkdownBrowser()
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.block_list)
        splitter.addWidget(self.content)
        splitter.setSizes([320, 880])
        self.legend = QLabel("  ".join(
            f'<span style="color:{colour}">■</span> L{level}' for level, colour in enumerate(LEVEL_COLOURS)
        ))
        layout = QVBoxLayout(self)
        plot_header = QHBoxLayout()
        plot_header.addWidget(QLabel("Blocks by turn, coloured by current level:"))
        plot_header.addStretch(1)
        plot_header.addWidget(self.legend)
        layout.addLayout(plot_header)
        layout.addWidget(self.plot, 1)
        layout.addLayout(level_bar)
        layout.addWidget(splitter, 3)

        # Controls without a visible label get a name screen readers can say.
        for control, accessible_name in ((self.block_list, "Blocks"), (self.content, "Block content"), (self.lift_target, "Lift target level"),):
            control.setAccessibleName(accessible_name)
        ctx.host.memory_changed.connect(self.set_memory)
        ctx.host.thread_changed.connect(lambda _thread: self.reload())
        ctx.writes.changes.connect(self._on_changes)
        self._pending_message: str | None = None

    # Loading ---------------------------------------------------------------------------------------------

    def set_memory(self, memory: StrataGate | None) -> None:
        self.memory = memory
        self.selected_block = None
        self.lift_button.setEnabled(memory is not None and not memory.read_only)
        self.reload()

    def reload(self) -> None:
        memory = self.memory
        if memory is None:
            self._show(TimelineData([], {}))
            return
        thread, around = self.ctx.thread_id, self.selected_block
        self.ctx.worker.run(
            lambda: load_timeline(memory, thread, around),
            on_done=lambda data: self._show(data) if memory is self.memory else None,
            description="load blocks",
        )

    def _show(self, data: TimelineData) -> None:
        self.data = data
        ids = [span.id for span in data.spans]
        if self.selected_block not in ids:
            self.selected_block = ids[-1] if ids else None
        self.list_model.set_spans(data.spans)
        self._select_in_list()
        self._redraw()

    # Selection, rendering, lifting -----------------------------------------------------------------------

    def select_block(self, block_id: str) -> None:
        self.selected_block = block_id
        self._select_in_list()
        self._redraw()
        self.block_selected.emit(block_id)

    def show_message(self, message_id: str) -> None:
        """Jump to a message: select its block, render it raw (L5) and scroll to the message."""
        block = next((b for b in self.data.blocks.values() if any(m.id == message_id for m in b.l5_raw)), None)
        if block is None:
            memory = self.memory
            if memory is not None:  # outside the blocks read so far: look for it on the worker
                self.ctx.worker.run(
                    lambda: find_message_block(memory, message_id),
                    on_done=lambda found: self._show_message_in(memory, found, message_id),
                    description=f"find message {message_id}",
                )
            return
        self._show_message_in(self.memory, block, message_id)

    def _show_message_in(self, memory: StrataGate | None, block: Block | None, message_id: str) -> None:
        if block is None or memory is not self.memory:
            return
        self.data.blocks[block.id] = block
        self.level_buttons.button(BLOCK_MAX_LEVEL).setChecked(True)
        self.rendering_level = BLOCK_MAX_LEVEL
        self.select_block(block.id)
        self.content.scrollToAnchor(message_id)

    def set_rendering_level(self, level: int) -> None:
        self.rendering_level = level
        self.level_buttons.button(level).setChecked(True)
        self._redraw()

    def lift_selected(self) -> None:
        """Ask for a user lift of the selected block (the curation controller writes it and pushes it on the
        undo history; the write's `changes` then reload this view)."""
        if self.memory is None or self.selected_block is None:
            return
        self.lift_requested.emit(self.selected_block, self.lift_target.currentIndex())

    def _on_changes(self, changes: Changes) -> None:
        """A lift, its undo or a re-read moves blocks' levels: re-read them, keeping the selected block."""
        if changes.touches_blocks:
            self.reload_when_shown()

    def _on_list_selection(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid():
            self.select_block(current.data(Qt.ItemDataRole.UserRole))

    def _select_in_list(self) -> None:
        """Make the selected block the list's current row without signalling a new selection."""
        row = self.list_model.rows.get(self.selected_block or "")
        selection = self.block_list.selectionModel()
        selection.blockSignals(True)
        if row is None:
            selection.clearCurrentIndex()
        else:
            self.block_list.setCurrentIndex(self.list_model.index(row))
            self.block_list.scrollTo(self.list_model.index(row))
        selection.blockSignals(False)

    def _redraw(self) -> None:
        """The plot from the spans; the text of the blocks around the selection, read first if needed."""
        self.plot.show_spans(self.data.spans, self.selected_block)
        wanted = window_ids(self.data.spans, self.selected_block)
        missing = [block_id for block_id in wanted if block_id not in self.data.blocks]
        memory, data = self.memory, self.data
        if missing and memory is not None:
            self.ctx.worker.run(
                lambda: memory.get_blocks(missing),
                on_done=lambda blocks: self._add_blocks(memory, data, blocks),
                description="read the blocks shown",
            )
            return
        self._render(wanted)

    def _add_blocks(self, memory: StrataGate, data: TimelineData, blocks: list[Block]) -> None:
        if memory is not self.memory or data is not self.data:
            return  # another memory, thread or reload since
        if len(data.blocks) > 4 * (2 * RENDERED_AROUND_SELECTION + 1):
            data.blocks.clear()  # only the neighbourhood of the selection is kept in full
        data.blocks.update((block.id, block) for block in blocks)
        self._render(window_ids(data.spans, self.selected_block))

    def _render(self, ids: list[str]) -> None:
        levels = {span.id: span.level for span in self.data.spans}
        pieces = []
        for block_id in ids:
            block = self.data.blocks.get(block_id)
            if block is None:
                continue
            level = levels[block_id] if self.rendering_level == CURRENT_LEVEL else self.rendering_level
            pieces.append(block_html(block, levels[block_id], level))
        self.content.setHtml("\n".join(pieces) if pieces else "<p>No sealed blocks.</p>")
        if self.selected_block:
            self.content.scrollToAnchor(self.selected_block)
