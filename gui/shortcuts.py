"""Keyboard-first triage: the app's shortcuts in one list, the dialog that shows them, and j/k row movement.

Every shortcut the app binds is listed in `SHORTCUTS`, so the dialog (F1 or ?) cannot drift from the keys.
Single-letter keys are bound to the triage table only (`WidgetWithChildrenShortcut`), so typing in a search
box never pins or forgets anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from stratagate_gui.widgets.tables import readonly_table


@dataclass(frozen=True)
class Shortcut:
    keys: tuple[str, ...]
    """Portable key sequences (`QKeySequence` text), the first one shown first."""
    action: str
    where: str


EVENT_LISTS = "Curation and Events lists"
"""Where the triage keys work: the tables of the Curation and Events tabs."""
MOVE_DOWN = Shortcut(("J",), "Next row (like Down)", EVENT_LISTS)
MOVE_UP = Shortcut(("K",), "Previous row (like Up)", EVENT_LISTS)
PIN = Shortcut(("P",), "Pin or unpin the selected events", EVENT_LISTS)
FORGET = Shortcut(("F",), "Forget the selected events (restore when all are forgotten)", EVENT_LISTS)
ARCHIVE = Shortcut(("A",), "Archive the selected events", EVENT_LISTS)
SUPERSEDE = Shortcut(("S",), "Supersede the selected events…", "Curation list")
SEARCH = Shortcut(("/",), "Search (focus the search box)", "Curation tab, Query workbench tab")
UNDO = Shortcut(("Ctrl+Z",), "Undo the last curation action", "Everywhere")
REDO = Shortcut(("Ctrl+Shift+Z", "Ctrl+Y"), "Redo", "Everywhere")
RUN_QUERY = Shortcut(("Return",), "Run the query", "Query workbench tab")
SEARCH_EVERYTHING = Shortcut(
    ("Ctrl+K",), "Search events, elements, facts and raw messages; Enter jumps to the result", "Everywhere"
)
HELP = Shortcut(("F1", "?"), "Show this list of shortcuts", "Everywhere")

SHORTCUTS: tuple[Shortcut, ...] = (
    MOVE_DOWN,
    MOVE_UP,
    PIN,
    FORGET,
    ARCHIVE,
    SUPERSEDE,
    SEARCH,
    UNDO,
    REDO,
    RUN_QUERY,
    SEARCH_EVERYTHING,
    HELP,
)


def bind(shortcut: Shortcut, widget: QWidget, slot: Callable[[], object]) -> list[QShortcut]:
    """Bind every key of `shortcut` to `slot` while focus is in `widget` or its children."""
    bound = []
    for keys in shortcut.keys:
        key = QShortcut(QKeySequence(keys), widget)
        key.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        key.activated.connect(slot)
        bound.append(key)
    return bound


def bind_row_movement(view: QAbstractItemView) -> None:
    """j/k move the current row of `view` down/up, selecting it (arrow keys already do this)."""
    bind(MOVE_DOWN, view, lambda: move_current_row(view, 1))
    bind(MOVE_UP, view, lambda: move_current_row(view, -1))


def move_current_row(view: QAbstractItemView, step: int) -> None:
    model = view.model()
    if model is None or model.rowCount() == 0:
        return
    current = view.currentIndex()
    row = 0 if not current.isValid() else min(max(current.row() + step, 0), model.rowCount() - 1)
    select_row(view, row, max(current.column(), 0))


def select_row(view: QAbstractItemView, row: int, column: int = 0) -> None:
    """Make `row` the current and only selected row. (`selectRow` would toggle or extend it instead when a
    modifier key happens to be held.)"""
    index = view.model().index(row, column)
    view.setCurrentIndex(index)
    view.selectionModel().select(
        index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
    )
    view.scrollTo(index)


class ShortcutsDialog(QDialog):
    """Every shortcut of the app, from `SHORTCUTS`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = [(_native_keys(shortcut), shortcut.action, shortcut.where) for shortcut in SHORTCUTS]
        self.table = readonly_table(self, ("Keys", "Action", "Where"), rows)  # sorts by a header click
        self.table.setAccessibleName("Keyboard shortcuts")
        self.table.setWordWrap(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        # Wide and tall enough for every row and column: the sheet is read at a glance, never scrolled.
        self.table.resizeColumnsToContents()
        self.table.resizeRowsToContents()
        frame = 2 * self.table.frameWidth()
        width = self.table.horizontalHeader().length() + frame + 40
        height = self.table.verticalHeader().length() + self.table.horizontalHeader().height() + frame + 80
        self.resize(max(620, width), max(380, height))


def _native_keys(shortcut: Shortcut) -> str:
    native = QKeySequence.SequenceFormat.NativeText
    return " or ".join(QKeySequence(keys).toString(native) for keys in shortcut.keys)


def help_action(window: QWidget) -> QAction:
    """The "Keyboard shortcuts" action: F1 and ? anywhere in `window` open the shortcuts dialog. Add it to a
    menu to show it there too. (A line edit keeps a typed "?": it claims printable keys before shortcuts.)"""
    action = QAction("&Keyboard shortcuts", window)
    action.setShortcuts([QKeySequence(keys) for keys in HELP.keys])
    action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    action.triggered.connect(lambda _checked=False: show_shortcuts(window))
    window.addAction(action)
    return action


def show_shortcuts(window: QWidget) -> ShortcutsDialog:
    dialog = ShortcutsDialog(window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
