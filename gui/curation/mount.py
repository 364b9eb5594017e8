"""Mount curation and retrieval forensics into the main window: four tabs (Curation, Journal, Query workbench,
Receipts), the Help ▸ Keyboard shortcuts action (F1, ?), and the wiring to the window's memory, worker and
undo history. `build_main_window` calls `mount` once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QInputDialog

from stratagate import journal
from stratagate_gui import shortcuts
from stratagate_gui.changes import Changes
from stratagate_gui.context import AppContext
from stratagate_gui.curation.actions import Action
from stratagate_gui.curation.controller import DEFAULT_ACTOR, CurationController
from stratagate_gui.curation.journal_view import JournalView
from stratagate_gui.curation.view import CurationView
from stratagate_gui.forensics.receipts import ReceiptsBrowser
from stratagate_gui.forensics.workbench import QueryWorkbench
from stratagate_gui.shortcuts import REDO, UNDO, help_action
from stratagate_gui.widgets.row_menu import RowAction

if TYPE_CHECKING:
    from stratagate.memory import StrataGate
    from stratagate_gui.views.events import EventsView
    from stratagate_gui.views.timeline import TimelineView


CURATOR_SETTING = "curation/curatorName"
"""The name the journal records as who curated (Edit ▸ Curator name…); "reviewer" until set."""


@dataclass
class CurationViews:
    controller: CurationController
    curation: CurationView
    journal: JournalView
    workbench: QueryWorkbench
    receipts: ReceiptsBrowser
    settings: QSettings

    def set_curator_name(self, name: str) -> None:
        """Record `name` in the journal from the next curation on, and remember it for the next sessions."""
        self.controller.actor = name.strip() or DEFAULT_ACTOR
        self.settings.setValue(CURATOR_SETTING, self.controller.actor)

    def ask_curator_name(self) -> None:
        name, accepted = QInputDialog.getText(
            self.curation, "Curator name", "Name recorded in the curation journal:", text=self.controller.actor
        )
        if accepted:
            self.set_curator_name(name)


def mount(
    ctx: AppContext, timeline: TimelineView | None = None, events: EventsView | None = None
) -> CurationViews:
    """Add the views to the window and keep them on its open memory. Optional peers: the `timeline`, whose
    Lift button asks the controller for a user lift, and the `events` list, whose right-click menu gains
    pin, forget and "Show in Curation"."""
    host = ctx.host
    controller = CurationController(
        ctx.writes, ctx.history, host, actor=str(ctx.settings.value(CURATOR_SETTING, DEFAULT_ACTOR) or DEFAULT_ACTOR)
    )
    views = CurationViews(
        controller,
        CurationView(controller),
        JournalView(ctx.worker),
        QueryWorkbench(ctx.worker),
        ReceiptsBrowser(ctx.worker),
        ctx.settings,
    )
    host.add_view("Curation", views.curation)
    host.add_view("Journal", views.journal)
    host.add_view("Query workbench", views.workbench)
    host.add_view("Receipts", views.receipts)
    host.help_menu.addAction(help_action(host))
    curator = QAction("Curator &name…", host)
    curator.triggered.connect(lambda _checked=False: views.ask_curator_name())
    host.edit_menu.addSeparator()
    host.edit_menu.addAction(curator)
    # Edit ▸ Undo/Redo get exactly the keys the shortcuts dialog lists (a StandardKey set with setShortcut
    # keeps only its first binding, which for Redo is Ctrl+Y).
    host.undo_action.setShortcuts([QKeySequence(keys) for keys in UNDO.keys])
    host.redo_action.setShortcuts([QKeySequence(keys) for keys in REDO.keys])

    def follow(memory: StrataGate | None) -> None:
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

    if timeline is not None:
        timeline.lift_requested.connect(controller.request_lift)
    ctx.jumps.register("curate", views.curation, views.curation.select_event)
    views.curation.row_actions.append(RowAction("Open in Events", lambda ids: ctx.jumps.go("event", ids[0])))
    if events is not None:
        # The triage keys work in the Events list as in Curation (j/k are the Events view's own).
        shortcuts.bind(shortcuts.PIN, events.table, lambda: controller.request(Action.TOGGLE_PIN, events.selected_ids()))
        shortcuts.bind(
            shortcuts.FORGET, events.table, lambda: controller.request(Action.TOGGLE_FORGET, events.selected_ids())
        )
        shortcuts.bind(shortcuts.ARCHIVE, events.table, lambda: controller.request(Action.ARCHIVE, events.selected_ids()))
        events.row_actions += [
            RowAction("Show in Curation", lambda ids: ctx.jumps.go("curate", ids[0])),
            RowAction("Pin or unpin", lambda ids: controller.request(Action.TOGGLE_PIN, ids)),
            RowAction("Forget or restore", lambda ids: controller.request(Action.TOGGLE_FORGET, ids)),
        ]
    host.memory_changed.connect(follow)
    ctx.writes.changes.connect(changed)
    follow(ctx.memory)
    return views
