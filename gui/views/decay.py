"""Decay curves: weight against turn for the selected events, elements or blocks, past and projected.

Every value comes from the engine (`weights.memory_weight_at`, `blocks.block_weight`,
`blocks.decayed_block_level`); the view only chooses which turns to ask about. The what-if λ for events is the
engine's own base-λ override, so floors, caps, pins and forgetting still follow the engine's rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from stratagate.blocks import BLOCK_MAX_LEVEL, block_weight, decayed_block_level
from stratagate.weights import BASE_LAMBDA, memory_weight_at
from stratagate_gui.changes import Changes
from stratagate_gui.views.reload_when_shown import ReloadWhenShown
from stratagate_gui.widgets.plots import show_empty, show_values

if TYPE_CHECKING:
    from stratagate.memory import StrataGate
    from stratagate_gui.context import AppContext

CURVE_COLOURS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be185d", "#4d7c0f")
DEFAULT_HORIZON = 48
MAX_CURVES = len(CURVE_COLOURS)


@dataclass
class Curve:
    kind: str
    id: str
    label: str
    past: tuple[list[float], list[float]]
    projected: tuple[list[float], list[float]]
    floor: float | None = None
    cap: float | None = None
    markers: list[tuple[float, float, str]] = field(default_factory=list)
    """(turn, weight, text): pinned, forgotten, lifted."""
    levels: tuple[list[float], list[float]] | None = None
    """Blocks only: the level (0–5, scaled to 0–1) the block shows at each turn."""


def _memory_curve(kind: str, item: Any, label: str, now: int, horizon: int, base_lambda: float) -> Curve:
    start = min(item.weight.last_adopted_turn, now)

    def weight(turn: int) -> float:
        return memory_weight_at(item, turn, base_lambda)

    past_turns = list(range(start, now + 1))
    future_turns = list(range(now, now + horizon + 1))
    curve = Curve(
        kind, item.id, label,
        (past_turns, [weight(t) for t in past_turns]),
        (future_turns, [weight(t) for t in future_turns]),
        floor=item.weight.floor_weight or None,
        cap=item.weight.forced_cap,
    )
    status = getattr(item, "status", "active")
    if item.weight.pinned:
        curve.markers.append((now, weight(now), "pinned"))
    if status in ("forgotten", "archived"):
        curve.markers.append((now, 0.0, status))
    return curve


def _block_curve(block: Any, thread_blocks: list[Any], now: int, horizon: int, lam: float, turn_size: int) -> Curve:
    """A block's weight by turn: it ages one step each time its thread seals another block.

    Past turns count the blocks sealed by then; projected turns assume the thread keeps receiving turns."""
    seal_turns = [other.end_turn for other in thread_blocks]
    latest_now = len(thread_blocks)
    last_end = seal_turns[-1] if seal_turns else now

    def latest_at(turn: int) -> int:
        if turn <= now:
            return sum(1 for sealed in seal_turns if sealed <= turn)
        return latest_now + max(0, (turn - last_end) // turn_size)

    anchor = block.pointer_anchor_block_position
    past_turns = list(range(block.end_turn, now + 1))
    future_turns = list(range(now, now + horizon + 1))

    def weights(turns: list[int]) -> list[float]:
        return [block_weight(anchor, max(anchor, latest_at(t)), lam) for t in turns]

    all_turns = past_turns + future_turns[1:]
    levels = [
        decayed_block_level(block.pointer_anchor_level, anchor, max(anchor, latest_at(t)), lam) / BLOCK_MAX_LEVEL
        for t in all_turns
    ]
    curve = Curve("block", block.id, f"block {block.id} (turns {block.start_turn}–{block.end_turn})",
                  (past_turns, weights(past_turns)), (future_turns, weights(future_turns)),
                  levels=(all_turns, levels))
    if block.lift_source:
        curve.markers.append((now, weights([now])[0], f"lifted by {block.lift_source}"))
    return curve


def load_curves(memory: StrataGate, items: list[tuple[str, str]], horizon: int, event_base_lambda: float,
                block_lambda: float) -> tuple[int, list[Curve]]:
    """Runs on the database worker."""
    now = memory.current_turn
    curves: list[Curve] = []
    event_ids = [identifier for kind, identifier in items if kind == "event"]
    events = {event.id: event for event in memory.get_events(event_ids)} if event_ids else {}
    elements = {element.id: element for element in memory.list_elements()} if any(k == "element" for k, _ in items) else {}
    block_ids = [identifier for kind, identifier in items if kind == "block"]
    blocks = {block.id: block for block in memory.get_blocks(block_ids)} if block_ids else {}
    turn_size = getattr(memory, "block_turn_size", 12)
    for kind, identifier in items:
        if kind == "event" and identifier in events:
            event = events[identifier]
            curves.append(_memory_curve(kind, event, f"event {identifier}: {event.title}", now, horizon, event_base_lambda))
        elif kind == "element" and identifier in elements:
            element = elements[identifier]
            curves.append(_memory_curve(kind, element, f"element {element.name}", now, horizon, event_base_lambda))
        elif kind == "block" and identifier in blocks:
            block = blocks[identifier]
            # The thread's spans (a thread of None lists every block: keep the unthreaded ones).
            thread = [span for span in memory.block_spans(block.thread_id) if span.thread_id == block.thread_id]
            curves.append(_block_curve(block, thread, now, horizon, block_lambda, turn_size))
    return now, curves


def _short(label: str, limit: int = 48) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


NO_MEMORY = "Open a memory, then pick events or blocks to plot their weight turn by turn"
NO_CURVES = "Tick events or blocks in the list (or send them here from Events) to plot their weight turn by turn"


class DecayView(ReloadWhenShown, QWidget):
    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx.host)
        self.ctx = ctx
        self.memory: StrataGate | None = None
        self.items: list[tuple[str, str]] = []
        self.curves: list[Curve] = []
        self.current_turn = 0

        self.plot = pg.PlotWidget()
        self.plot.setLabel("bottom", "turn")
        self.plot.setLabel("left", "weight")
        self.plot.setYRange(-0.05, 1.1, padding=0)
        # A translucent legend at the top right, where projected curves have usually decayed away.
        self.legend = self.plot.addLegend(offset=(-10, 30), brush=(127, 127, 127, 60))
        self.item_list = QListWidget()
        self.item_list.itemChanged.connect(lambda _item: self._draw())
        self.event_lambda = QDoubleSpinBox(decimals=3, minimum=0.0, maximum=2.0, singleStep=0.01, value=BASE_LAMBDA)
        self.event_lambda.setToolTip("What-if base λ for events and elements (the engine uses 0.15/(1+1.5·ln n))")
        self.block_lambda = QDoubleSpinBox(decimals=3, minimum=0.0, maximum=2.0, singleStep=0.05, value=0.3)
        self.block_lambda.setToolTip("What-if block decay λ (the namespace's stored value is the default)")
        self.horizon = QSpinBox(minimum=1, maximum=100_000, value=DEFAULT_HORIZON)
        for control in (self.event_lambda, self.block_lambda, self.horizon):
            control.valueChanged.connect(lambda _value: self.reload())

        controls = QHBoxLayout()
        controls.addWidget(QLabel("What-if event λ"))
        controls.addWidget(self.event_lambda)
        controls.addWidget(QLabel("What-if block λ"))
        controls.addWidget(self.block_lambda)
        controls.addWidget(QLabel("Project turns ahead"))
        controls.addWidget(self.horizon)
        controls.addStretch(1)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(QLabel("Plotted (select in Events, Elements or Timeline):"))
        side_layout.addWidget(self.item_list)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.plot)
        splitter.addWidget(side)
        splitter.setSizes([900, 300])
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(splitter, 1)
        # Controls without a visible label get a name screen readers can say.
        for control, accessible_name in ((self.event_lambda, "What-if event lambda"), (self.block_lambda, "What-if block lambda"), (self.horizon, "Turns projected ahead"), (self.item_list, "Plotted items"),):
            control.setAccessibleName(accessible_name)
        ctx.host.memory_changed.connect(self.set_memory)
        ctx.writes.changes.connect(self._on_changes)
        self._draw()

    def set_memory(self, memory: StrataGate | None) -> None:
        self.memory = memory
        self.items = []
        if memory is not None:
            self.block_lambda.blockSignals(True)
            self.block_lambda.setValue(memory.block_decay_lambda)
            self.block_lambda.blockSignals(False)
        self.reload()

    def _on_changes(self, changes: Changes) -> None:
        """A pin, a forget or a lift moves the plotted curves: recompute them, now if shown, else when shown."""
        if changes.touches_events or changes.touches_blocks:
            self.reload_when_shown()

    def show_items(self, kind: str, ids: list[str]) -> None:
        """Plot these events, elements or blocks (replacing what was plotted)."""
        self.items = [(kind, identifier) for identifier in ids[:MAX_CURVES]]
        self.reload()

    def reload(self) -> None:
        memory = self.memory
        if memory is None or not self.items:
            self.curves = []
            self._fill_list()
            self._draw()
            return
        items, horizon = list(self.items), self.horizon.value()
        event_lambda, block_lambda = self.event_lambda.value(), self.block_lambda.value()
        self.ctx.worker.run(
            lambda: load_curves(memory, items, horizon, event_lambda, block_lambda),
            on_done=lambda result: self._show_curves(result) if memory is self.memory else None,
            description="compute decay curves",
        )

    def _show_curves(self, result: tuple[int, list[Curve]]) -> None:
        self.current_turn, self.curves = result
        self._fill_list()
        self._draw()

    def _fill_list(self) -> None:
        self.item_list.blockSignals(True)
        self.item_list.clear()
        for index, curve in enumerate(self.curves):
            item = QListWidgetItem(curve.label)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            item.setForeground(pg.mkColor(CURVE_COLOURS[index % len(CURVE_COLOURS)]))
            self.item_list.addItem(item)
        self.item_list.blockSignals(False)

    def _draw(self) -> None:
        self.plot.clear()
        self.legend.clear()
        shown = [
            (index, curve) for index, curve in enumerate(self.curves)
            if (item := self.item_list.item(index)) is None or item.checkState() == Qt.CheckState.Checked
        ]
        if self.memory is None or not shown:
            show_empty(self.plot, NO_MEMORY if self.memory is None else NO_CURVES)
            return
        show_values(self.plot)
        now_line = pg.InfiniteLine(self.current_turn, angle=90, pen=pg.mkPen("#6b7280", width=1),
                                   label=f"now: turn {self.current_turn}", labelOpts={"position": 0.95, "color": "#6b7280"})
        self.plot.addItem(now_line)
        for index, curve in shown:
            colour = CURVE_COLOURS[index % len(CURVE_COLOURS)]
            self.plot.plot(*curve.past, pen=pg.mkPen(colour, width=2), name=_short(curve.label))
            self.plot.plot(*curve.projected, pen=pg.mkPen(colour, width=2, style=Qt.PenStyle.DashLine))
            if curve.levels is not None:
                self.plot.plot(*curve.levels, pen=pg.mkPen(colour, width=1, style=Qt.PenStyle.DotLine),
                               stepMode=None, name=f"{curve.id} level ÷ 5")
            if curve.floor is not None:
                self.plot.addItem(pg.InfiniteLine(curve.floor, angle=0, pen=pg.mkPen(colour, style=Qt.PenStyle.DotLine),
                                                  label=f"floor {curve.floor:g}", labelOpts={"position": 0.05, "color": colour}))
            if curve.cap is not None:
                self.plot.addItem(pg.InfiniteLine(curve.cap, angle=0, pen=pg.mkPen(colour, style=Qt.PenStyle.DashDotLine),
                                                  label=f"cap {curve.cap:g}", labelOpts={"position": 0.15, "color": colour}))
            for turn, weight, text in curve.markers:
                symbol = "x" if text in ("forgotten", "archived") else "star"
                self.plot.addItem(pg.ScatterPlotItem([turn], [weight], symbol=symbol, size=14, brush=colour, pen=colour))
                label = pg.TextItem(text, color=colour, anchor=(0, 1))
                label.setPos(turn, weight)
                self.plot.addItem(label)
        self.plot.setYRange(-0.05, 1.1, padding=0)
