"""The triage list: events to curate with the keyboard (j/k, p, f, a, s, /) or the buttons, one or many at once."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QStringListModel, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from stratagate.model import CRITICALITIES, EVENT_STATUSES
from stratagate_gui import shortcuts
from stratagate_gui.curation.actions import Action
from stratagate_gui.curation.controller import CurationController
from stratagate_gui.models.lazy_table import LazyIdTableModel
from stratagate_gui.shortcuts import select_row
from stratagate_gui.views.events import EVENT_COLUMNS, NOT_PINNED, PINNED, event_rows, list_events
from stratagate_gui.views.reload_when_shown import ReloadWhenShown
from stratagate_gui.widgets.row_menu import RowAction, show_row_menu
from stratagate_gui.widgets.tables import enable_sorting

if TYPE_CHECKING:
    from stratagate.memory import StrataGate

ANY_STATUS = "any status"
MATCHES_SHOWN = 50
LOOKUP_PAUSE_MS = 150
IdLookup = Callable[[str, Callable[[list[str]], None]], None]
"""`lookup(fragment, answer)`: find the event ids matching `fragment` and later call `answer(ids)`."""
ANY_PINNED = "pinned or not"
ANY_CRITICALITY = "any criticality"


class CurationView(ReloadWhenShown, QWidget):
    """Lists events (filtered by text and status) and runs curation actions on the selected ones. Its list is
    read when the tab is shown, so opening a memory never lists its events twice before the first paint."""

    selection_changed = Signal(list)

    def __init__(self, controller: CurationController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.memory: StrataGate | None = None
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search title, summary, id…  ( / )")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.refresh)
        self.status_filter = QComboBox(self)
        self.status_filter.addItems([ANY_STATUS, *EVENT_STATUSES])
        self.status_filter.currentIndexChanged.connect(self.refresh)
        self.criticality_filter = QComboBox(self)
        self.criticality_filter.addItems([ANY_CRITICALITY, *CRITICALITIES])
        self.criticality_filter.currentIndexChanged.connect(self.refresh)
        self.pinned_filter = QComboBox(self)
        self.pinned_filter.addItems([ANY_PINNED, PINNED, NOT_PINNED])
        self.pinned_filter.currentIndexChanged.connect(self.refresh)
        self.preview_box = QCheckBox("Preview changes", self)
        self.preview_box.setChecked(controller.preview)
        self.preview_box.toggled.connect(lambda checked: setattr(controller, "preview", checked))
        self.count_label = QLabel(self)

        self.model = LazyIdTableModel(controller.worker, EVENT_COLUMNS, self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)  # the title takes the spare width
        self.model.sort_changed = self.refresh
        enable_sorting(self.table)
        self.row_actions: list[RowAction] = [
            RowAction("Pin or unpin", lambda _ids: self.toggle_pin()),
            RowAction("Forget or restore", lambda _ids: self.toggle_forget()),
            RowAction("Archive", lambda _ids: self.act(Action.ARCHIVE)),
        ]
        """Right-click entries after the copies; the mount adds "Open in Events"."""
        show_row_menu(self.table, self.model, EVENT_COLUMNS, lambda: self.row_actions)
        self._pending_select: str | None = None
        self.table.selectionModel().selectionChanged.connect(
            lambda *_: self.selection_changed.emit(self.selected_ids())
        )

        self.buttons: dict[str, QPushButton] = {}
        bar = QHBoxLayout()
        for name, slot in (
            ("Pin", lambda: self.act(Action.PIN)),
            ("Unpin", lambda: self.act(Action.UNPIN)),
            ("Forget", lambda: self.act(Action.FORGET)),
            ("Restore", lambda: self.act(Action.RESTORE)),
            ("Archive", lambda: self.act(Action.ARCHIVE)),
            ("Supersede…", self.supersede),
        ):
            button = QPushButton(name, self)
            button.clicked.connect(slot)
            bar.addWidget(button)
            self.buttons[name] = button
        bar.addStretch(1)
        bar.addWidget(self.preview_box)

        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.status_filter)
        top.addWidget(self.criticality_filter)
        top.addWidget(self.pinned_filter)
        top.addWidget(self.count_label)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(bar)
        layout.addWidget(self.table)

        shortcuts.bind_row_movement(self.table)
        shortcuts.bind(shortcuts.PIN, self.table, self.toggle_pin)
        shortcuts.bind(shortcuts.FORGET, self.table, self.toggle_forget)
        shortcuts.bind(shortcuts.ARCHIVE, self.table, lambda: self.act(Action.ARCHIVE))
        shortcuts.bind(shortcuts.SUPERSEDE, self.table, self.supersede)
        shortcuts.bind(shortcuts.SEARCH, self, self.focus_search)
        # Any write to events (a correction adds one) or a re-read: list the ids again, rows stay until rebuilt.
        controller.writes.changes.connect(lambda changes: self.refresh() if changes.touches_events else None)
        # Controls without a visible label get a name screen readers can say.
        for control, accessible_name in ((self.search, "Search events to curate"), (self.status_filter, "Status filter"), (self.criticality_filter, "Criticality filter"), (self.pinned_filter, "Pinned filter"), (self.table, "Events to curate"),):
            control.setAccessibleName(accessible_name)
        self.set_memory(None)

    # Memory ----------------------------------------------------------------------------------------------

    def set_memory(self, memory: StrataGate | None) -> None:
        self.memory = memory
        writable = memory is not None and not memory.read_only
        for button in self.buttons.values():
            button.setEnabled(writable)
        self.preview_box.setEnabled(writable)
        self.model.clear()
        self.count_label.setText("")
        if memory is not None:
            self.refresh()

    def refresh(self) -> None:
        """List the events again now if the tab is shown, else the next time it is."""
        self.reload_when_shown()

    def reload(self) -> None:
        memory = self.memory
        if memory is None:
            return
        where: dict[str, str] = {}
        if self.search.text().strip():
            where["text"] = self.search.text().strip()
        if self.status_filter.currentText() != ANY_STATUS:
            where["status"] = self.status_filter.currentText()
        if self.criticality_filter.currentText() != ANY_CRITICALITY:
            where["criticality"] = self.criticality_filter.currentText()
        if self.pinned_filter.currentText() != ANY_PINNED:
            where["pinned"] = self.pinned_filter.currentText()
        sorting = self.model.sorting
        self.controller.worker.run(
            lambda: list_events(memory, where, sorting),
            on_done=lambda ids: self._show_ids(memory, ids),
            description="list events to curate",
        )

    def _show_ids(self, memory: StrataGate, ids: Sequence[str]) -> None:
        if memory is not self.memory:
            return
        # The same memory listed again (after a write or a new filter): rows and selection follow their ids.
        self.model.update_ids(ids, lambda chunk: event_rows(memory, chunk))
        self.count_label.setText(f"{len(ids):,} events")
        if self._pending_select is not None:
            self.select_event(self._pending_select)

    def selected_ids(self) -> list[str]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.model.id_at(row) for row in rows]

    def select_event(self, event_id: str) -> None:
        """Select one event to curate (a jump from another view); clears the filters if they hide it."""
        row = self.model.row_of(event_id)
        if row >= 0:
            self._pending_select = None
            select_row(self.table, row)
            self.table.scrollTo(self.model.index(row, 0))
        elif self._pending_select != event_id:
            self._pending_select = event_id
            self.search.clear()
            for facet in (self.status_filter, self.criticality_filter, self.pinned_filter):
                facet.setCurrentIndex(0)
            self.refresh()

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    # Actions ---------------------------------------------------------------------------------------------

    def act(self, action: Action, replacement_id: str | None = None) -> None:
        self.controller.request(action, self.selected_ids(), replacement_id)

    def toggle_pin(self) -> None:
        """p: unpin when every selected event is pinned, pin otherwise."""
        self.act(Action.TOGGLE_PIN)

    def toggle_forget(self) -> None:
        """f: restore when every selected event is forgotten, forget otherwise."""
        self.act(Action.TOGGLE_FORGET)

    def supersede(self) -> None:
        """Ask for the replacement (searched among the memory's events as the user types) or a corrected card,
        then act."""
        ids, memory = self.selected_ids(), self.memory
        if not ids or memory is None or not self.controller.writable:
            return

        def lookup(fragment: str, answer: Callable[[list[str]], None]) -> None:
            self.controller.worker.run(
                lambda: matching_event_ids(memory, fragment),
                on_done=answer,
                description="search the memory's event ids",
            )

        dialog = SupersedeDialog(ids, self, lookup=lookup)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        if dialog.card() is None:
            self.act(Action.SUPERSEDE, dialog.replacement_id())
        else:
            self.controller.request_correction(ids, dialog.card())


def matching_event_ids(memory: StrataGate, fragment: str, limit: int = MATCHES_SHOWN) -> list[str]:
    """The event whose id is `fragment`, if any, then up to `limit` others whose id contains it (any case):
    the database answers, so a million events are never listed."""
    exact = [event.id for event in memory.get_events([fragment])]
    contained = memory.event_key_list({"idContains": fragment}, limit=limit)
    return exact + [event_id for event_id in contained if event_id not in exact]


class SupersedeDialog(QDialog):
    """Supersede the selected events: by an existing event, or by a corrected card written here."""

    def __init__(self, event_ids: list[str], parent: QWidget | None = None, lookup: IdLookup | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Supersede {len(event_ids)} event(s)")
        self.event_ids = set(event_ids)
        self.lookup = lookup
        """Asks the database for the ids matching a fragment; None: no suggestions, no check before OK."""
        self.matches: dict[str, list[str]] = {}
        """The lookup's answers by fragment (the superseded events left out)."""
        self.found: set[str] = set()
        """Every id the lookups answered: events that exist and may replace."""
        self._accept_when_answered = False
        self.by_existing = QRadioButton("Replace with an existing event", self)
        self.by_existing.setChecked(True)
        self.existing_id = QLineEdit(self)
        self.existing_id.setPlaceholderText("type to search the memory's event ids, e.g. evt_…")
        self.suggestions = QStringListModel(self)
        completer = QCompleter(self.suggestions, self)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setMaxVisibleItems(12)
        self.existing_id.setCompleter(completer)
        # Ask once the user pauses: a keystroke's lookup scans the ids on the database worker.
        self._typing = QTimer(self, singleShot=True, interval=LOOKUP_PAUSE_MS)
        self._typing.timeout.connect(self._look_up)
        self.existing_id.textEdited.connect(self._edited)
        self.by_card = QRadioButton("Write a corrected card", self)
        self.title = QLineEdit(self)
        self.summary = QLineEdit(self)
        self.narrative = QPlainTextEdit(self)
        self.criticality = QComboBox(self)
        self.criticality.addItems(list(CRITICALITIES))
        form = QFormLayout()
        form.addRow(self.by_existing)
        form.addRow("Replacing event", self.existing_id)
        form.addRow(self.by_card)
        form.addRow("Title", self.title)
        form.addRow("Summary", self.summary)
        form.addRow("Narrative", self.narrative)
        form.addRow("Criticality", self.criticality)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        buttons.accepted.connect(self._accept_if_complete)
        buttons.rejected.connect(self.reject)
        self.problem = QLabel(self)
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel("Superseding: " + ", ".join(event_ids[:5]) + ("…" if len(event_ids) > 5 else ""))
        )
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)

    def replacement_id(self) -> str:
        return self.existing_id.text().strip()

    def card(self) -> dict[str, Any] | None:
        if not self.by_card.isChecked():
            return None
        return {
            "id": f"evt_{uuid.uuid4()}",
            "title": self.title.text().strip(),
            "summary": self.summary.text().strip(),
            "narrative": self.narrative.toPlainText().strip(),
            "criticality": self.criticality.currentText(),
        }

    def _edited(self) -> None:
        self._accept_when_answered = False  # OK was for the text before this edit
        self.problem.clear()
        self._typing.start()

    def _look_up(self) -> None:
        fragment = self.replacement_id()
        if self.lookup is not None and fragment and fragment not in self.matches:
            self.lookup(fragment, lambda ids: self._answered(fragment, ids))

    def _answered(self, fragment: str, ids: list[str]) -> None:
        self.matches[fragment] = [event_id for event_id in ids if event_id not in self.event_ids]
        self.found.update(self.matches[fragment])
        if fragment != self.replacement_id():
            return  # the user typed on; a later answer shows
        if self._accept_when_answered:
            self._accept_when_answered = False
            self._accept_if_complete()
            return
        self.suggestions.setStringList(self.matches[fragment])
        if self.existing_id.hasFocus():
            self.existing_id.completer().complete()

    def _accept_if_complete(self) -> None:
        replacement = self.replacement_id()
        if self.by_existing.isChecked() and not replacement:
            self.problem.setText("Enter the id of the replacing event.")
        elif self.by_existing.isChecked() and replacement in self.event_ids:
            self.problem.setText(f"{replacement} is one of the events being superseded: pick another.")
        elif self.by_existing.isChecked() and self.lookup is not None and replacement not in self.found:
            if replacement in self.matches:  # its own lookup answered without it
                self.problem.setText(f"No other event {replacement} in this memory: pick one from the list.")
            else:
                self.problem.setText(f"Looking for {replacement}…")
                self._accept_when_answered = True
                self._typing.stop()
                self.lookup(replacement, lambda ids: self._answered(replacement, ids))
        elif self.by_card.isChecked() and not (self.title.text().strip() and self.summary.text().strip()):
            self.problem.setText("A corrected card needs a title and a summary.")
        else:
            self.accept()
