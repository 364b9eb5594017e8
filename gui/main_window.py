"""The main window: opening memories, namespace and thread pickers, the open-mode badge, and the views.

Other parts of the app plug in here: `add_view(title, widget)` adds a tab, `memory_changed` fires whenever a
memory is opened, reloaded or closed, `memory` is the open `StrataGate` (or None), `worker` is the one
serialized database thread every database call must go through, `writes` is the one write path (and its
`changes` signal the one change feed), and `history` backs Edit ▸ Undo/Redo.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings, Signal
from PySide6.QtGui import QAction, QActionGroup, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QProgressDialog,
    QTabWidget,
    QToolBar,
    QWidget,
)

from stratagate_gui.about import AboutDialog
from stratagate_gui.changes import Changes
from stratagate_gui.context import AppContext, Jumps
from stratagate_gui.opening import (
    OpenCancelled,
    OpenedMemory,
    describe_open_error,
    has_password,
    is_server_url,
    list_threads,
    needs_password,
    open_memory,
    recent_entry,
    shown_location,
    with_password,
)
from stratagate_gui.password_prompt import ask_password
from stratagate_gui.theme import THEMES, apply_theme, recolour_plots
from stratagate_gui.undo import UndoHistory
from stratagate_gui.upgrade import add_upgrade_action
from stratagate_gui.user_guide import UserGuideDialog
from stratagate_gui.widgets.badges import OpenModeBadge
from stratagate_gui.widgets.progress import cancellable_progress, close_progress
from stratagate_gui.workers import DatabaseWorker
from stratagate_gui.writes import Writes

if TYPE_CHECKING:
    from stratagate.memory import StrataGate

MAX_RECENT = 10
ALL_THREADS = "All threads"


class MainWindow(QMainWindow):
    memory_changed = Signal(object)
    """The open StrataGate after an open, reload or namespace switch; None after closing."""
    thread_changed = Signal(object)
    """The thread picked in the toolbar: a thread id, or None for every thread."""
    theme_changed = Signal(str)
    open_failed = Signal(str, str)
    """(location, reason) of an open that failed; the window keeps what it had open before."""

    def __init__(self, settings: QSettings | None = None, theme: str = "light") -> None:
        super().__init__()
        self.setWindowTitle("StrataGate Inspector")
        self.setAcceptDrops(True)
        self.settings = settings or QSettings()
        self.worker = DatabaseWorker(self)
        self.file_worker = DatabaseWorker(self)
        """The lane for work that needs no database (Strata file moves)."""
        self.writes = Writes(self.worker, self.file_worker, self)
        self.history = UndoHistory(self.writes, self)
        self.context = AppContext(
            self, self.worker, self.writes, self.history, self.settings, Jumps(self.show_view)
        )
        """What features mount with (`stratagate_gui.context`)."""
        self.memory: StrataGate | None = None
        self.opened: OpenedMemory | None = None
        self.thread_id: str | None = None
        self.theme = theme
        self._progress: QProgressDialog | None = None
        self.password_prompt: QInputDialog | None = None
        """The last password prompt of a database URL (File ▸ Open recent), for tests and screenshots."""
        self._opens_running: set[threading.Event] = set()
        """The Cancel events of the opens not delivered yet, set when the window closes."""

        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.setCentralWidget(self.tabs)
        self._build_toolbar()
        self._build_status_bar()
        self._build_menus()
        self.worker.busy_changed.connect(self._busy_label.setVisible)
        self.writes.message.connect(lambda text: self.statusBar().showMessage(text, 8000))
        self.writes.changes.connect(self._on_changes)
        self.history.changed.connect(self._update_undo_actions)
        self._update_undo_actions()

    # Extension point -------------------------------------------------------------------------------------

    def add_view(self, title: str, widget: QWidget) -> int:
        """Add a view as a tab; it should follow `memory_changed` (and `thread_changed`) itself."""
        return self.tabs.addTab(widget, title)

    def add_menu(self, title: str) -> QMenu:
        """A feature's menu, placed before Help."""
        return self.menuBar().insertMenu(self.help_menu.menuAction(), QMenu(title, self)).menu()

    def show_view(self, widget: QWidget) -> None:
        self.tabs.setCurrentWidget(widget)

    # Opening ---------------------------------------------------------------------------------------------

    def open_location(self, location: str, namespace: str | None = None, read_only: bool = False) -> None:
        """Open a file path or database URL on the worker, with a progress dialog and Cancel for slow opens.
        A cancelled open leaves the window as it was: the open stops at its next step (a connection attempt
        runs to its timeout) and whatever it opened is closed."""
        shown = shown_location(location)
        cancelled = threading.Event()
        self._opens_running.add(cancelled)
        self._start_progress(f"Opening {shown}…", cancelled)
        self.worker.run(
            lambda: open_memory(location, namespace, read_only, cancelled),
            on_done=lambda opened: self._on_opened(opened, cancelled),
            on_error=lambda error: self._on_open_failed(location, error, cancelled, namespace, read_only),
            description=f"open {shown}",
        )

    def reload(self) -> None:
        if self.opened is not None:
            self.open_location(self.opened.source, self.opened.namespace, self.opened.read_only)

    def close_memory(self) -> None:
        previous, self.opened, self.memory = self.opened, None, None
        if previous is not None:
            self.worker.run(previous.close, description="close memory")
        self.writes.set_memory(None)
        self.history.follow(None)
        self._show_memory_state()
        self.memory_changed.emit(None)

    def _on_opened(self, opened: OpenedMemory, cancelled: threading.Event | None = None) -> None:
        self._opens_running.discard(cancelled)
        if cancelled is not None and cancelled.is_set():
            # Finished after its last check for Cancel: close it, keep what the window shows.
            self.worker.run(opened.close, description="close a cancelled open")
            return
        self._stop_progress()
        previous = self.opened
        self.opened, self.memory, self.thread_id = opened, opened.memory, None
        if previous is not None and previous.memory is not opened.memory:
            self.worker.run(previous.close, description="close previous memory")
        self.writes.set_memory(opened.memory)
        self.history.follow((opened.location, opened.namespace), opened.memory)
        self._remember_recent(recent_entry(opened.source) if is_server_url(opened.source) else opened.location)
        self._fill_pickers(opened)
        self._show_memory_state()
        self.memory_changed.emit(opened.memory)
        # Hashing reads the whole file but no database: in the file lane, started once the database lane's
        # foreground has been idle (a background task), so it never competes with the first paint's reads.
        self.worker.run(lambda: None, on_done=lambda _none: self._hash_file(opened),
                        description="wait for the first paint before hashing", background=True)

    def _hash_file(self, opened: OpenedMemory) -> None:
        if opened is not self.opened:
            return  # another memory since
        self.file_worker.run(opened.hash_file, on_done=lambda _digest: self._show_memory_state()
                             if opened is self.opened else None, description="hash the file")

    def _on_open_failed(
        self,
        location: str,
        error: BaseException,
        cancelled: threading.Event | None = None,
        namespace: str | None = None,
        read_only: bool = False,
    ) -> None:
        self._opens_running.discard(cancelled)
        if isinstance(error, OpenCancelled) or (cancelled is not None and cancelled.is_set()):
            return  # the user stopped it: nothing to report
        self._stop_progress()
        if needs_password(location, error):
            # As psql does: the server wants a password that neither the URL, PGPASSWORD nor ~/.pgpass gave.
            self.password_prompt = ask_password(
                self,
                shown_location(recent_entry(location)),
                refused=has_password(location),
                on_password=lambda password: self.open_location(
                    with_password(location, password), namespace, read_only
                ),
            )
            return
        shown = shown_location(location)
        reason = describe_open_error(error)
        self.open_failed.emit(shown, reason)
        self.writes.show_error("Cannot open memory", f"Cannot open {shown}\n\n{reason}")

    def _on_changes(self, changes: Changes) -> None:
        """Revision and current turn move with every write; a re-read may also bring new threads."""
        if changes.touches_memory:
            self._show_memory_state()
        if changes.reloaded:
            self.refresh_threads()

    # Toolbar, status bar, menus --------------------------------------------------------------------------

    def _build_toolbar(self) -> None:
        toolbar = QToolBar("Memory", self)
        toolbar.setObjectName("memoryToolbar")
        toolbar.setMovable(False)
        self.addToolBar(toolbar)
        toolbar.addWidget(QLabel(" Namespace "))
        self.namespace_picker = QComboBox(toolbar)
        self.namespace_picker.setMinimumContentsLength(18)
        self.namespace_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.namespace_picker.activated.connect(self._on_namespace_picked)
        toolbar.addWidget(self.namespace_picker)
        toolbar.addWidget(QLabel("  Thread "))
        self.thread_picker = QComboBox(toolbar)
        self.thread_picker.setMinimumContentsLength(14)
        self.thread_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.thread_picker.activated.connect(self._on_thread_picked)
        toolbar.addWidget(self.thread_picker)
        spacer = QWidget(toolbar)
        spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding, spacer.sizePolicy().verticalPolicy())
        toolbar.addWidget(spacer)
        self.namespace_picker.setAccessibleName("Namespace")
        self.thread_picker.setAccessibleName("Thread")
        self.badge = OpenModeBadge(toolbar)
        toolbar.addWidget(self.badge)

    def _build_status_bar(self) -> None:
        status = self.statusBar()
        self._location_label = QLabel()
        self._revision_label = QLabel()
        self._turn_label = QLabel()
        self._busy_label = QLabel("working…")
        self._busy_label.setVisible(False)
        status.addWidget(self._location_label, 1)
        for label in (self._busy_label, self._revision_label, self._turn_label):
            status.addPermanentWidget(label)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.file_menu = file_menu
        self._add_action(file_menu, "&Open…", self._choose_file, QKeySequence.StandardKey.Open)
        self._add_action(file_menu, "Open &read-only…", lambda: self._choose_file(read_only=True))
        self._add_action(file_menu, "Open database &URL…", self._choose_url)
        self.recent_menu = file_menu.addMenu("Open &recent")
        self._fill_recent_menu()
        self._add_action(file_menu, "Re&load", self.reload, QKeySequence.StandardKey.Refresh)
        self._add_action(file_menu, "&Close memory", self.close_memory)
        add_upgrade_action(self)
        file_menu.addSeparator()
        self._add_action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        edit_menu = self.menuBar().addMenu("&Edit")
        self.undo_action = self._add_action(edit_menu, "&Undo", self.history.undo, QKeySequence.StandardKey.Undo)
        self.redo_action = self._add_action(edit_menu, "&Redo", self.history.redo, QKeySequence.StandardKey.Redo)
        self.edit_menu = edit_menu

        view_menu = self.menuBar().addMenu("&View")
        themes = QActionGroup(self)
        for theme in THEMES:
            action = QAction(f"{theme.title()} theme", self, checkable=True, checked=theme == self.theme)
            action.triggered.connect(lambda _checked=False, name=theme: self.set_theme(name))
            themes.addAction(action)
            view_menu.addAction(action)
        self.view_menu = view_menu
        self.help_menu = self.menuBar().addMenu("&Help")
        """Kept last: features add their menus before it (`add_menu`)."""
        guide = self.help_menu.addAction("&User guide")
        guide.triggered.connect(lambda _checked=False: UserGuideDialog(self).open())
        about = self.help_menu.addAction("&About StrataGate Inspector")
        about.triggered.connect(lambda _checked=False: AboutDialog(self).open())

    def _add_action(
        self, menu: QMenu, text: str, slot: Callable[[], Any], shortcut: QKeySequence.StandardKey | None = None
    ) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        return action

    def _update_undo_actions(self) -> None:
        """Edit ▸ Undo/Redo name the step they would take, and are disabled while one is being written."""
        history = self.history
        self.undo_action.setEnabled(history.can_undo())
        self.redo_action.setEnabled(history.can_redo())
        self.undo_action.setText(f"&Undo {history.undo_text()}".rstrip())
        self.redo_action.setText(f"&Redo {history.redo_text()}".rstrip())

    def set_theme(self, theme: str) -> None:
        apply_theme(QApplication.instance(), theme)
        recolour_plots(self, theme)
        self.theme = theme
        self.settings.setValue("theme", theme)
        self.theme_changed.emit(theme)

    # Pickers and state -----------------------------------------------------------------------------------

    def _fill_pickers(self, opened: OpenedMemory) -> None:
        self.namespace_picker.clear()
        self.namespace_picker.addItems(opened.namespaces)
        self.namespace_picker.setCurrentText(opened.namespace)
        self.thread_picker.clear()
        self.thread_picker.addItem(ALL_THREADS, None)
        # Unthreaded blocks are only ever listed with every thread (the engine has no "no thread" filter).
        for thread in opened.threads:
            if thread is not None:
                self.thread_picker.addItem(thread, thread)

    def _on_namespace_picked(self, index: int) -> None:
        namespace = self.namespace_picker.itemText(index)
        if self.opened is not None and namespace != self.opened.namespace:
            self.open_location(self.opened.source, namespace, self.opened.read_only)

    def _on_thread_picked(self, index: int) -> None:
        self.thread_id = self.thread_picker.itemData(index)
        self.thread_changed.emit(self.thread_id)

    def refresh_threads(self) -> None:
        if self.memory is None:
            return
        memory = self.memory
        self.worker.run(lambda: list_threads(memory), on_done=self._set_threads, description="list threads")

    def _set_threads(self, threads: list[str | None]) -> None:
        if self.opened is not None:
            self.opened.threads = threads
            self._fill_pickers(self.opened)

    def _show_memory_state(self) -> None:
        opened = self.opened
        if opened is None:
            self.setWindowTitle("StrataGate Inspector")
            self.badge.show_closed()
            for label in (self._location_label, self._revision_label, self._turn_label):
                label.clear()
            self.namespace_picker.clear()
            self.thread_picker.clear()
            return
        memory = opened.memory
        self.setWindowTitle(f"{opened.namespace} — {opened.location} — StrataGate Inspector")
        self.badge.show_memory(memory.read_only, opened.file_sha256, opened.notice)
        self._location_label.setText(opened.location + (f"   ⚠ {opened.notice}" if opened.notice else ""))
        self._revision_label.setText(f"revision {memory.revision}")
        self._turn_label.setText(f"turn {memory.current_turn}")

    # File dialogs, recent files, drag and drop ------------------------------------------------------------

    def _choose_file(self, read_only: bool = False) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Open memory", "", "StrataGate memory (*.sqlite *.sqlite3 *.db);;All files (*)"
        )
        if path:
            self.open_location(path, read_only=read_only)

    def _choose_url(self) -> None:
        url, accepted = QInputDialog.getText(
            self,
            "Open database URL",
            "SQLAlchemy URL (e.g. postgresql+psycopg://user@host/db).\n"
            "Leave the password out: it is asked for in a masked field when the server wants one.",
        )
        if accepted and url.strip():
            self.open_location(url.strip())

    def recent_locations(self) -> list[str]:
        """File paths, and database URLs without their passwords (an older version's entries are cleaned, so
        no password ever stays in the settings)."""
        value = self.settings.value("recentLocations", [])
        stored = [value] if isinstance(value, str) else list(value or [])
        entries = list(dict.fromkeys(recent_entry(location) for location in stored))
        if entries != stored:
            self.settings.setValue("recentLocations", entries)
        return entries

    def _remember_recent(self, location: str) -> None:
        recent = [location] + [item for item in self.recent_locations() if item != location]
        self.settings.setValue("recentLocations", recent[:MAX_RECENT])
        self._fill_recent_menu()

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self.recent_locations()
        for location in recent:
            action = self.recent_menu.addAction(shown_location(location).replace("&", "&&"))  # & is no mnemonic
            action.triggered.connect(lambda _checked=False, where=location: self.open_location(where))
        self.recent_menu.setEnabled(bool(recent))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        files = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self.open_location(files[0])

    # Progress and errors ---------------------------------------------------------------------------------

    def _start_progress(self, text: str, cancelled: threading.Event) -> None:
        self._stop_progress()
        self._progress = cancellable_progress(self, text, lambda: self._cancel_open(cancelled))

    def _cancel_open(self, cancelled: threading.Event) -> None:
        cancelled.set()
        self._stop_progress()

    def _stop_progress(self) -> None:
        close_progress(self._progress)
        self._progress = None

    def closeEvent(self, event) -> None:
        opened, self.opened, self.memory = self.opened, None, None
        # An open still running stops at its next step and closes what it opened: nobody will receive it.
        for cancelled in self._opens_running:
            cancelled.set()
        # Reads still queued are dropped; the memory closes after the task running now, then the threads end.
        self.file_worker.shutdown()
        self.worker.shutdown(last=opened.close if opened is not None else None)
        super().closeEvent(event)

    def wait_idle(self, timeout_ms: int = 30_000) -> bool:
        """Process events until every queued database task has delivered (scripted runs and self-test)."""
        deadline = time.monotonic() + timeout_ms / 1000
        app = QApplication.instance()
        while time.monotonic() < deadline:
            # Checked after processing: a delivered result may queue more work (a view refreshing from
            # `changes`, a live-follow poll).
            app.processEvents()
            if not (self.worker.pending or self.file_worker.pending):
                return True
            time.sleep(0.005)
        return False
