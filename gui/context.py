"""What a feature gets when it mounts: the window's services, typed, instead of the window's insides.

Each feature (the core views, curation and forensics, model calls, Strata) has a `mount(ctx, …)` that adds
its tabs and menus and subscribes to what it needs; a feature that works with another one names it as an
optional keyword peer (`curation.mount(ctx, timeline=…)`), so nothing is found with `getattr(window, …)`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QWidget

from stratagate_gui.undo import UndoHistory
from stratagate_gui.workers import DatabaseWorker
from stratagate_gui.writes import Writes

if TYPE_CHECKING:
    from stratagate.memory import StrataGate
    from stratagate_gui.main_window import MainWindow

JumpHandler = Callable[[str], None]
"""Shows one item (by id) in the view that owns its kind."""


@dataclass
class Jumps:
    """Links between views: "show event evt_51" goes to whichever view registered the kind "event"."""

    show_view: Callable[[QWidget], None]
    handlers: dict[str, tuple[QWidget, JumpHandler]] = field(default_factory=dict)

    def register(self, kind: str, view: QWidget, handler: JumpHandler) -> None:
        self.handlers[kind] = (view, handler)

    def go(self, kind: str, identifier: str) -> None:
        """Bring the view of `kind` forward and show the item; a kind nobody mounted is ignored."""
        target = self.handlers.get(kind)
        if target is not None:
            view, handler = target
            self.show_view(view)
            handler(identifier)


@dataclass
class AppContext:
    host: MainWindow
    """Tabs, menus, the open memory and its signals (`memory_changed`, `thread_changed`, `thread_id`)."""
    worker: DatabaseWorker
    """Every database read goes through it, off the UI thread."""
    writes: Writes
    """Every write goes through it; its `changes` signal says what changed."""
    history: UndoHistory
    settings: QSettings
    jumps: Jumps

    @property
    def memory(self) -> StrataGate | None:
        return self.host.memory

    @property
    def thread_id(self) -> str | None:
        return self.host.thread_id
