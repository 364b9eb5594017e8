"""The app's one write path: a `WriteOp` describes a write, `Writes` runs it and publishes what changed.

Like Anki's `CollectionOp`: every write the app makes (a curation action, a block lift, an undo or redo, a
Strata tier move) is one `WriteOp` run by the window's one `Writes`:

- the write runs on a background lane (the serialized database worker, or the file worker for Strata moves);
  the UI thread never waits for it;
- once it committed, `Writes.changes` carries a `Changes` naming what changed and who caused it, the op's undo
  entry (if any) is handed to the undo history through `committed`, and its label goes to the status bar;
- a failure goes through one policy: a read-only memory is a status-bar line; a revision conflict re-reads the
  memory (publishing `Changes(reloaded=True)`), shows what this window expected next to what is stored now,
  and retries or drops the write as the user chooses; anything else is an error dialog naming the write;
- a long write shows a progress dialog with Cancel after half a second; Cancel stops it between steps.

Another process's write reaches the views through the same signal: an external-change detector calls
`Writes.external_change()` (see docs/architecture.md, "Writes and changes").
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QUndoCommand
from PySide6.QtWidgets import QMessageBox, QProgressDialog, QWidget

from stratagate.errors import ReadOnlyError, StorageConflictError, StrataGateError
from stratagate_gui.changes import Changes, Origin
from stratagate_gui.opening import describe_open_error
from stratagate_gui.widgets.conflict_dialog import ConflictChoice, ConflictDialog
from stratagate_gui.widgets.progress import APP_TITLE, cancellable_progress, close_progress
from stratagate_gui.workers import DatabaseWorker

if TYPE_CHECKING:
    from stratagate.memory import StrataGate

T = TypeVar("T")

ResolveConflict = Callable[[str, StorageConflictError, list[tuple[str, Any]], dict[str, Any]], ConflictChoice]
"""(what, the error, [(id, state this window expected)], {id: state stored now or None}) → the user's choice."""


class Lane(Enum):
    DATABASE = "database"
    """The window's serialized database worker: every read and write of the open memory."""
    FILES = "files"
    """A second worker for work that needs no database (Strata file moves), so it never queues behind reads."""


class Cancelled(StrataGateError):
    """The user cancelled a write from its progress dialog; what it did before stopping stays done."""


class Progress(QObject):
    """Progress of a long write: `advance()` from the write's thread, `cancel()` from the dialog."""

    advanced = Signal(int)

    def __init__(self, maximum: int) -> None:
        super().__init__()
        self.maximum = maximum
        self._cancelled = threading.Event()

    def advance(self, steps: int = 1) -> None:
        """Called by the write between steps; raises `Cancelled` once the user has cancelled."""
        if self._cancelled.is_set():
            raise Cancelled("cancelled")
        self.advanced.emit(steps)

    def cancel(self) -> None:
        self._cancelled.set()


@dataclass
class WriteOp(Generic[T]):
    """One write: what it does, what it changes, and how it is undone."""

    label: str
    """What the write is, for the status bar, error dialogs and its undo entry ("Pin evt_51")."""
    write: Callable[[], T]
    """The write itself; runs on the op's lane, never on the UI thread."""
    changes: Callable[[T], Changes]
    """What changed, from the write's result (published on `Writes.changes` after the commit)."""
    undo_entry: Callable[[T], QUndoCommand] | None = None
    """The undo history's entry for this write (a data-only command); None for writes that are not undone."""
    on_committed: Callable[[T], Any] | None = None
    """Runs on the UI thread after the commit and after `changes` was published."""
    on_finished: Callable[[bool], Any] | None = None
    """Runs once, on the UI thread, when the op is over: True committed, False not (failed, declined, cancelled)."""
    expected: Sequence[tuple[str, Any]] = ()
    """(id, state this window expected) of the records the write moves: the conflict dialog shows them."""
    read_current: Callable[[StrataGate], dict[str, Any]] | None = None
    """Reads those records as stored now (on the database worker, after the re-read of a conflict)."""
    progress: Progress | None = None
    lane: Lane = Lane.DATABASE
    needs_writable_memory: bool = True
    """A database write needs an open, writable memory; a Strata move does not."""


class Writes(QObject):
    """Runs every write of a window and broadcasts what changed."""

    changes = Signal(object)
    """A `Changes` after every commit, conflict re-read or detected external write."""
    committed = Signal(object)
    """The undo entry (a `QUndoCommand`) of a write that committed; the undo history pushes it."""
    message = Signal(str)
    """A one-line outcome for the status bar."""

    def __init__(
        self,
        worker: DatabaseWorker,
        file_worker: DatabaseWorker | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.worker = worker
        self.file_worker = file_worker or worker
        self.memory: StrataGate | None = None
        self.errors_to_stderr = False
        """Errors go to stderr instead of dialogs (the unattended self-test)."""
        self.resolve_conflict: ResolveConflict = self._resolve_with_dialog
        self.show_error: Callable[[str, str], Any] = self._error_dialog
        self.error_box: QMessageBox | None = None
        self._parent = parent
        worker.failed.connect(self.report)
        if file_worker is not None:
            file_worker.failed.connect(self.report)

    def set_memory(self, memory: StrataGate | None) -> None:
        """The memory database writes go to (the main window sets it on every open, reload and close)."""
        self.memory = memory

    @property
    def writable(self) -> bool:
        return self.memory is not None and not self.memory.read_only

    # Running ---------------------------------------------------------------------------------------------

    def run(self, op: WriteOp[Any]) -> None:
        """Start `op` on its lane; its outcome arrives later on the UI thread."""
        if op.needs_writable_memory and not self.writable:
            self._failed(op, ReadOnlyError("This memory is open read-only: it cannot be changed."))
            return
        dialog = self._progress_dialog(op) if op.progress is not None else None

        def committed(result: Any) -> None:
            close_progress(dialog)
            self._committed(op, result)

        def failed(error: BaseException) -> None:
            close_progress(dialog)
            self._failed(op, error)

        lane = self.file_worker if op.lane is Lane.FILES else self.worker
        lane.run(op.write, on_done=committed, on_error=failed, description=op.label)

    def refuse(self, error: BaseException) -> None:
        """Report a write refused before it was queued (e.g. on a read-only memory), by the same policy."""
        self._report_failure("", error)

    def publish(self, changes: Changes) -> None:
        self.changes.emit(changes)

    def external_change(self, label: str = "another process wrote to this memory") -> None:
        """Another process wrote to the open memory: re-read it on the worker, then tell every view.

        The one entry point for an external-change detector (a revision poll, a file watcher): call it on
        the UI thread; views refresh through `changes` with `origin=Origin.EXTERNAL, reloaded=True`."""
        memory = self.memory
        if memory is None:
            return
        self.worker.run(
            memory.refresh,
            on_done=lambda _result: self._reloaded(memory, label),
            description="re-read the memory after another process wrote",
        )

    def _reloaded(self, memory: StrataGate, label: str) -> None:
        if memory is self.memory:
            self.publish(Changes.of(Origin.EXTERNAL, label, reloaded=True))

    # Outcomes --------------------------------------------------------------------------------------------

    def _committed(self, op: WriteOp[Any], result: Any) -> None:
        self.message.emit(op.label)
        self.publish(op.changes(result))
        if op.undo_entry is not None:
            self.committed.emit(op.undo_entry(result))
        if op.on_committed is not None:
            op.on_committed(result)
        _finish(op, True)

    def _failed(self, op: WriteOp[Any], error: BaseException) -> None:
        """The one failure policy of every write."""
        memory = self.memory
        if isinstance(error, StorageConflictError) and memory is not None:
            self._resolve(op, error, memory)
            return
        if isinstance(error, Cancelled):
            self.message.emit(f"{op.label}: cancelled")
        else:
            self._report_failure(op.label, error)
        _finish(op, False)

    def _resolve(self, op: WriteOp[Any], error: StorageConflictError, memory: StrataGate) -> None:
        """Another writer committed first: re-read the memory, show what changed, retry or drop the write."""

        def reread() -> dict[str, Any]:
            memory.refresh()
            return op.read_current(memory) if op.read_current is not None else {}

        def decide(current: dict[str, Any]) -> None:
            self.publish(Changes.of(Origin.EXTERNAL, "another writer committed first", reloaded=True))
            choice = self.resolve_conflict(op.label, error, list(op.expected), current)
            if choice is ConflictChoice.RETRY:
                self.run(op)
                return
            self.message.emit(f"{op.label}: not applied (another writer committed first)")
            _finish(op, False)

        def reread_failed(failure: BaseException) -> None:
            self._report_failure(op.label, failure)
            _finish(op, False)

        self.worker.run(reread, on_done=decide, on_error=reread_failed, description="re-read after a conflict")

    def report(self, what: str, error: BaseException) -> None:
        """A failed task (a read, or a write outside `run`): a dialog naming what failed."""
        self._report_failure(what, error)

    def _report_failure(self, what: str, error: BaseException) -> None:
        reason = describe_open_error(error)
        self.message.emit(f"{what}: {reason}" if what else reason)
        # A refused write on a read-only memory is expected (the controls are disabled; a key was pressed):
        # the status bar says so without a dialog.
        if not isinstance(error, ReadOnlyError):
            self.show_error(APP_TITLE, f"Could not {_lower_first(what)}.\n\n{reason}" if what else reason)

    # Dialogs (tests replace `resolve_conflict` and `show_error`) ------------------------------------------

    def _error_dialog(self, title: str, text: str) -> None:
        """A window-modal warning that does not block the event loop; on stderr for the self-test."""
        if self.errors_to_stderr:
            print(f"{title}: {text}", file=sys.stderr)
            return
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self._parent)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_box = box
        box.open()

    def _resolve_with_dialog(
        self, what: str, error: StorageConflictError, expected: list[tuple[str, Any]], current: dict[str, Any]
    ) -> ConflictChoice:
        dialog = ConflictDialog(what, error, expected, current, self._parent)
        dialog.exec()
        return dialog.choice

    def _progress_dialog(self, op: WriteOp[Any]) -> QProgressDialog:
        progress = op.progress
        assert progress is not None
        dialog = cancellable_progress(self._parent, f"{op.label}…", progress.cancel, progress.maximum)
        progress.advanced.connect(lambda steps: dialog.setValue(dialog.value() + steps))
        return dialog


def _finish(op: WriteOp[Any], committed: bool) -> None:
    if op.on_finished is not None:
        op.on_finished(committed)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]
