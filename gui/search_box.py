"""Ctrl+K: one search box across the namespace's events, elements, facts and raw messages.

Results come grouped by kind, read on the database worker with `record=False` (searching never writes);
Enter (or a double click) jumps to the item in its view through the app's jumps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QLabel, QLineEdit, QTreeWidget, QTreeWidgetItem, QVBoxLayout

from stratagate_gui.context import AppContext
from stratagate_gui.shortcuts import SEARCH_EVERYTHING

if TYPE_CHECKING:
    from stratagate.memory import StrataGate

PER_GROUP = 8
GROUPS = ("Events", "Elements", "Facts", "Raw messages")
KIND_OF_GROUP = {"Events": "event", "Elements": "element", "Facts": "element", "Raw messages": "message"}


@dataclass(frozen=True)
class Found:
    group: str
    identifier: str
    """The id the jump goes to (a fact jumps to its element)."""
    text: str


def search_everything(memory: StrataGate, query: str) -> list[Found]:
    """Up to `PER_GROUP` hits per kind, best first (runs on the database worker; never writes)."""
    found = [
        Found("Events", hit.id, f"{hit.event.title}  ·  {hit.event.status}  ·  {hit.id}")
        for hit in memory.search_events(query, limit=PER_GROUP, record=False)
    ]
    element_hits = memory.search_elements(query, limit=PER_GROUP * 2, record=False)
    elements = {hit.element.id: hit.element for hit in element_hits}
    found += [
        Found("Elements", element.id, f"{element.name}  ·  {element.type}  ·  {element.id}")
        for element in list(elements.values())[:PER_GROUP]
    ]
    found += [
        Found("Facts", hit.element.id, f"{hit.element.name}: {hit.fact.key} = {hit.fact.value_text}  ·  {hit.fact.status}")
        for hit in element_hits[:PER_GROUP]
    ]
    found += [
        Found("Raw messages", hit.message.id, f"{hit.message.role}: {hit.message.content[:100]}  ·  {hit.block_id}")
        for hit in memory.search_raw_memory(query, PER_GROUP)
    ]
    return found


class SearchBox(QDialog):
    """The Ctrl+K palette: type, see results grouped by kind, Enter to jump."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx.host)
        self.ctx = ctx
        self.setWindowTitle("Search this namespace")
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Search events, elements, facts and raw messages…")
        self.query.setClearButtonEnabled(True)
        self.query.setAccessibleName("Search everything")
        self.results = QTreeWidget(self)
        self.results.setHeaderHidden(True)
        self.results.setAccessibleName("Search results")
        self.results.itemActivated.connect(lambda item, _column: self._jump(item))
        self.status = QLabel(self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.status)
        layout.addWidget(self.results, 1)
        self.resize(720, 480)
        self._debounce = QTimer(self, singleShot=True, interval=200)
        self._debounce.timeout.connect(self.search)
        self.query.textChanged.connect(lambda _text: self._debounce.start())
        self.query.returnPressed.connect(self._jump_to_first)
        self.found: list[Found] = []

    def open_box(self) -> None:
        self.show()
        self.raise_()
        self.activateWindow()
        self.query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query.selectAll()

    def search(self) -> None:
        memory, query = self.ctx.memory, self.query.text().strip()
        if memory is None:
            self.status.setText("No memory open")
            return
        if not query:
            self._show(query, [])
            return
        self.status.setText("Searching…")
        self.ctx.worker.run(
            lambda: search_everything(memory, query),
            on_done=lambda found: self._show(query, found),
            on_error=lambda error: self.status.setText(f"✘ {error}"),
            description=f"search {query!r}",
        )

    def _show(self, query: str, found: list[Found]) -> None:
        if query != self.query.text().strip():
            return  # the user typed on meanwhile
        self.found = found
        self.results.clear()
        for group in GROUPS:
            hits = [item for item in found if item.group == group]
            if not hits:
                continue
            parent = QTreeWidgetItem(self.results, [f"{group} ({len(hits)})"])
            parent.setFlags(Qt.ItemFlag.ItemIsEnabled)
            for hit in hits:
                child = QTreeWidgetItem(parent, [hit.text])
                child.setData(0, Qt.ItemDataRole.UserRole, (KIND_OF_GROUP[group], hit.identifier))
            parent.setExpanded(True)
        self.status.setText(f"{len(found)} results" if query else "")
        first = self._first_hit()
        if first is not None:
            self.results.setCurrentItem(first)

    def _first_hit(self) -> QTreeWidgetItem | None:
        group = self.results.topLevelItem(0)
        return group.child(0) if group is not None and group.childCount() else None

    def _jump_to_first(self) -> None:
        item = self.results.currentItem() or self._first_hit()
        if item is not None:
            self._jump(item)

    def _jump(self, item: QTreeWidgetItem) -> None:
        target = item.data(0, Qt.ItemDataRole.UserRole)
        if target is None:
            return
        kind, identifier = target
        self.hide()
        self.ctx.jumps.go(kind, identifier)


def mount(ctx: AppContext) -> SearchBox:
    """Ctrl+K anywhere in the window opens the search box."""
    box = SearchBox(ctx)
    shortcut = QShortcut(QKeySequence(SEARCH_EVERYTHING.keys[0]), ctx.host)
    shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
    shortcut.activated.connect(box.open_box)
    return box
