"""Mount curation and retrieval forensics into the main window: four tabs (Curation, Journal, Query workbench,
Receipts), the Help ▸ Keyboard shortcuts action (F1, ?), and the wiring to the window's memory, worker and
undo stack. `build_main_window` calls `mount` once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QKeySequence

from stratagate import journal
from stratagate_gui.changes import Changes
from stratagate_gui.curation.controller import CurationController
from stratagate_gui.curation.journal_view import JournalView
from stratagate_gui.curation.view import CurationView
from stratagate_gui.forensics.receipts import ReceiptsBrowser
from stratagate_gui.forensics.workbench import QueryWorkbench
from stratagate_gui.shortcuts import REDO, UNDO, help_action


@dataclass
class CurationViews:
    controller: CurationController
    curation: CurationView
    journal: JournalView
    workbench: QueryWorkbench
    receipts: ReceiptsBrowser


def mount(window: Any) -> CurationViews:
    """Add the views to `window` (a `MainWindow`) and keep them on its open memory."""
    controller = CurationController(window.writes, window.history, window)
    views = CurationViews(
        controller,
        CurationView(controller),
        JournalView(window.worker),
        QueryWorkbench(window.worker),
        ReceiptsBrowser(window.worker),
    )
    window.add_view("Curation", views.curation)
    window.add_view("Journal", views.journal)
    window.add_view("Query workbench", views.workbench)
    window.add_view("Receipts", views.receipts)
    window.menuBar().addMenu("&Help").addAction(help_action(window))
    # Edit ▸ Undo/Redo get exactly the keys the shortcuts dialog lists (a StandardKey set with setShortcut
    # keeps only its first binding, which for Redo is Ctrl+Y).
    window.undo_action.setShortcuts([QKeySequence(keys) for keys in UNDO.keys])
    window.redo_action.setShortcuts([QKeySequence(keys) for keys in REDO.keys])

    def follow(memory: Any) -> None:
        views.curation.set_memory(memory)
        views.workbench.set_memory(memory)
        if memory is None:
            views.journal.set_source(None, None)
            views.receipts.set_memory(None)
            return
        backend, namespace = memory.backend, memory.namespace
        read = lambda: journal.backend_entries(backend, namespace)  # noqa: E731 - handed to the worker
        views.journal.set_source(read, lambda: journal.verify_backend(backend, namespace))
        views.receipts.set_memory(memory, read)

    def changed(changes: Changes) -> None:
        if changes.touches_journal:
            views.journal.refresh()
        if changes.reloaded:
            views.receipts.refresh()

    timeline = getattr(window, "timeline", None)
    if timeline is not None:
        timeline.lift_requested.connect(controller.request_lift)
    window.memory_changed.connect(follow)
    window.writes.changes.connect(changed)
    follow(window.memory)
    return views
