"""Runs curation actions and the user's block lifts: plan on the worker, preview, apply with journal entries, push on the undo stack, and
handle a write conflict with another writer (reload or retry, nothing lost).

The controller is the only writer of curation: views call `request()`. It never writes on a read-only memory,
journal included.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QDialog, QMessageBox, QWidget

from stratagate.errors import ReadOnlyError, StorageConflictError, StrataGateError
from stratagate.memory import BlockLift
from stratagate_gui.curation import engine_calls
from stratagate_gui.curation.actions import LABELS, Action, EventState, Step, plan, plan_correction, resolve
from stratagate_gui.curation.commands import BlockLiftCommand, CurationCommand, WrittenCommand
from stratagate_gui.curation.dialogs import ConflictChoice, ConflictDialog, PreviewDialog, action_title
from stratagate_gui.workers import DatabaseWorker

Confirm = Callable[[str, list[Step], int], bool]
"""Shows the preview of (title, steps, turn); True to apply."""
ResolveConflict = Callable[[str, StorageConflictError, list[tuple[str, EventState]], dict], ConflictChoice]


class CurationController(QObject):
    changed = Signal(list)
    """Event ids whose curation state was written (after an action, an undo or a redo)."""
    reloaded = Signal()
    """The memory was re-read after another writer's commit: views should refresh everything."""
    message = Signal(str)
    """A one-line outcome for the status bar."""
    blocks_changed = Signal(list)
    """Block ids whose pointer was written (a lift, its undo or its redo)."""

    def __init__(
        self,
        worker: DatabaseWorker,
        undo_stack: QUndoStack,
        parent: QWidget | None = None,
        actor: str = "reviewer",
    ) -> None:
        super().__init__(parent)
        self.worker = worker
        self.undo_stack = undo_stack
        self.actor = actor
        self.memory: Any = None
        self.preview = True
        self.confirm: Confirm = self._confirm_with_dialog
        self.resolve_conflict: ResolveConflict = self._resolve_with_dialog
        self.show_error: Callable[[str], Any] = self._error_dialog
        self._parent = parent

    # State -----------------------------------------------------------------------------------------------

    def set_memory(self, memory: Any) -> None:
        self.memory = memory

    @property
    def writable(self) -> bool:
        return self.memory is not None and not self.memory.read_only

    # Actions ---------------------------------------------------------------------------------------------

    def request(self, action: Action, event_ids: Sequence[str], replacement_id: str | None = None) -> None:
        """Plan `action` on the events, preview it, then apply it and push it on the undo stack."""
        if not event_ids:
            return
        if not self.writable:
            self._report(ReadOnlyError("This memory is open read-only: curation is disabled."))
            return
        memory, ids = self.memory, list(event_ids)

        def planned() -> tuple[Action, list[Step], int]:
            events = engine_calls.load_events(memory, ids)
            chosen = resolve(action, events)
            return chosen, plan(chosen, events, replacement_id), memory.current_turn

        self.worker.run(
            planned,
            on_done=lambda result: self._confirmed(*result),
            on_error=self._report,
            description=f"plan {action.value}",
        )

    def request_correction(self, event_ids: Sequence[str], card: dict[str, Any]) -> None:
        """Write `card` (title, summary, narrative, criticality and its new id) superseding the events."""
        if not self.writable:
            self._report(ReadOnlyError("This memory is open read-only: curation is disabled."))
            return
        memory, ids = self.memory, list(event_ids)

        def planned() -> tuple[Action, list[Step], int]:
            turn = memory.current_turn
            return Action.CORRECT, plan_correction(engine_calls.load_events(memory, ids), card, turn), turn

        def first_run(steps: list[Step]) -> None:
            engine_calls.write_correction(memory, card, steps, self.actor)

        self.worker.run(
            planned,
            on_done=lambda result: self._confirmed(*result, first_run=first_run),
            on_error=self._report,
            description="plan a corrected card",
        )

    def _confirmed(
        self,
        action: Action,
        steps: list[Step],
        turn: int,
        first_run: Callable[[list[Step]], Any] | None = None,
    ) -> None:
        if not steps:
            self.message.emit(f"{LABELS[action]}: nothing to change")
            return
        title = action_title(steps)
        if self.preview and not self.confirm(title, steps, turn):
            return
        memory, actor = self.memory, self.actor
        self._apply_first_time(
            steps, first_run or (lambda steps: engine_calls.move_all(memory, steps, actor, False))
        )

    def _apply_first_time(self, steps: list[Step], first_run: Callable[[list[Step]], Any]) -> None:
        def done(_written: int) -> None:
            command = CurationCommand(self, steps)
            self.undo_stack.push(command)  # its first redo() only records the work just done
            self._written(command.text(), steps)

        self.worker.run(
            lambda: first_run(steps),
            on_done=done,
            on_error=lambda error: self._failed(
                action_title(steps), steps, error, lambda: self._apply_first_time(steps, first_run)
            ),
            description=action_title(steps),
        )

    def request_lift(self, block_id: str, level: int) -> None:
        """Lift a block to `level` for the user (source 'user') and push the lift on the undo stack."""
        if not self.writable:
            self._report(ReadOnlyError("This memory is open read-only: lifting is disabled."))
            return
        memory, actor = self.memory, self.actor

        def done(lift: BlockLift) -> None:
            command = BlockLiftCommand(self, block_id, lift.before, lift.after)
            self.undo_stack.push(command)  # its first redo() only records the lift just written
            self._block_written(command.text(), block_id)

        self.worker.run(
            lambda: engine_calls.lift_block(memory, block_id, level, actor),
            on_done=done,
            on_error=lambda error: self._failed(
                f"Lift {block_id} to L{level}", [], error, lambda: self.request_lift(block_id, level)
            ),
            description=f"lift block {block_id}",
        )

    # Called by the commands on the stack's undo()/redo() ---------------------------------------------------

    def move_now(self, steps: list[Step], undo: bool) -> None:
        if not self.writable:
            raise ReadOnlyError("This memory is open read-only: curation is disabled.")
        memory, actor = self.memory, self.actor
        self.worker.call(lambda: engine_calls.move_all(memory, steps, actor, undo))
        self._written(("Undo " if undo else "Redo ") + action_title(steps), steps)

    def move_block_now(self, command: BlockLiftCommand, undo: bool) -> None:
        if not self.writable:
            raise ReadOnlyError("This memory is open read-only: lifting is disabled.")
        memory, actor = self.memory, self.actor
        goal = command.before if undo else command.after
        self.worker.call(lambda: engine_calls.move_block_pointer(memory, command.block_id, goal, actor, undo))
        self._block_written(("Undo " if undo else "Redo ") + command.text(), command.block_id)

    def stack_move_failed(self, command: WrittenCommand, undo: bool, error: StrataGateError) -> None:
        """The stack moved its index although the undo/redo did not happen: move it back, then report."""

        def put_index_back() -> None:
            command.skip_next = True
            if undo:
                self.undo_stack.redo()
            else:
                self.undo_stack.undo()

        def retry() -> None:
            if undo:
                self.undo_stack.undo()
            else:
                self.undo_stack.redo()

        QTimer.singleShot(0, put_index_back)
        what = ("Undo " if undo else "Redo ") + command.text()
        QTimer.singleShot(0, lambda: self._failed(what, command.steps, error, retry))

    # Outcomes --------------------------------------------------------------------------------------------

    def _written(self, what: str, steps: list[Step]) -> None:
        self.message.emit(what)
        self.changed.emit([step.event_id for step in steps])

    def _block_written(self, what: str, block_id: str) -> None:
        self.message.emit(what)
        self.blocks_changed.emit([block_id])

    def _failed(self, what: str, steps: list[Step], error: BaseException, retry: Callable[[], None]) -> None:
        if not isinstance(error, StorageConflictError):
            self._report(error)
            return
        memory = self.memory
        ids = [step.event_id for step in steps]
        expected = [(step.event_id, step.before) for step in steps]

        def reread() -> dict[str, EventState | None]:
            memory.refresh()
            return engine_calls.current_states(memory, ids)

        def decide(current: dict[str, EventState | None]) -> None:
            self.reloaded.emit()
            choice = self.resolve_conflict(what, error, expected, current)
            if choice is ConflictChoice.RETRY:
                retry()
            else:
                self.message.emit(f"{what}: not applied (another writer committed first)")

        self.worker.run(reread, on_done=decide, on_error=self._report, description="reload after a conflict")

    def _report(self, error: BaseException) -> None:
        self.message.emit(str(error))
        # A refused write on a read-only memory is expected (the controls are disabled; a key was pressed):
        # the status bar says so without a dialog.
        if not isinstance(error, ReadOnlyError):
            self.show_error(str(error))

    # Default dialogs (tests replace `confirm`, `resolve_conflict` and `show_error`) ---------------------------------------

    def _error_dialog(self, text: str) -> None:
        QMessageBox.warning(self._parent, "Curation", text)

    def _confirm_with_dialog(self, title: str, steps: list[Step], turn: int) -> bool:
        return PreviewDialog(title, steps, turn, self._parent).exec() == QDialog.DialogCode.Accepted

    def _resolve_with_dialog(
        self, what: str, error: StorageConflictError, expected: list[tuple[str, EventState]], current: dict
    ) -> ConflictChoice:
        dialog = ConflictDialog(what, error, expected, current, self._parent)
        dialog.exec()
        return dialog.choice
