"""Curation actions and the user's block lifts as writes: plan on the worker, preview, then run through the
window's one write path (`Writes`), which commits the mutation with its journal entries, publishes what
changed, pushes the data-only command on the undo history, and handles a conflict with another writer.

The controller is the only writer of curation: views call `request()`. It never writes on a read-only memory,
journal included. It also tells the undo history how to move its commands (`move_op`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QUndoCommand
from PySide6.QtWidgets import QDialog, QWidget

from stratagate.errors import ReadOnlyError, UnknownIdError
from stratagate.memory import BlockLift
from stratagate_gui.changes import Changes, Origin
from stratagate_gui.curation import engine_calls
from stratagate_gui.curation.actions import LABELS, Action, Step, action_title, plan, plan_correction, resolve
from stratagate_gui.curation.commands import BlockLiftCommand, CurationCommand
from stratagate_gui.curation.dialogs import PreviewDialog
from stratagate_gui.undo import UndoHistory
from stratagate_gui.workers import DatabaseWorker
from stratagate_gui.writes import WriteOp, Writes

if TYPE_CHECKING:
    from stratagate.memory import StrataGate

Confirm = Callable[[str, list[Step], int], bool]
"""Shows the preview of (title, steps, turn); True to apply."""
DEFAULT_ACTOR = "reviewer"


class CurationController(QObject):
    def __init__(
        self,
        writes: Writes,
        history: UndoHistory,
        parent: QWidget | None = None,
        actor: str = DEFAULT_ACTOR,
    ) -> None:
        super().__init__(parent)
        self.writes = writes
        self.history = history
        history.move_op = self.move_op
        history.still_undoable = still_undoable
        self.actor = actor
        """The name written in the journal as who curated (Preferences ▸ Curator name)."""
        self.preview = True
        self.confirm: Confirm = self._confirm_with_dialog
        self._parent = parent

    # State -----------------------------------------------------------------------------------------------

    @property
    def worker(self) -> DatabaseWorker:
        return self.writes.worker

    @property
    def memory(self) -> StrataGate | None:
        return self.writes.memory

    @property
    def writable(self) -> bool:
        return self.writes.writable

    # Actions ---------------------------------------------------------------------------------------------

    def request(self, action: Action, event_ids: Sequence[str], replacement_id: str | None = None) -> None:
        """Plan `action` on the events, preview it, then apply it and push it on the undo history.

        A replacement that does not exist is refused here, before any preview."""
        memory = self._writable_memory("curation")
        if memory is None or not event_ids:
            return
        ids = list(event_ids)

        def planned() -> tuple[Action, list[Step], int]:
            if replacement_id:
                memory.get_event(replacement_id)  # an unknown id raises UnknownIdError naming it
            events = engine_calls.load_events(memory, ids)
            chosen = resolve(action, events)
            return chosen, plan(chosen, events, replacement_id), memory.current_turn

        self.worker.run(
            planned,
            on_done=lambda result: self._confirmed(memory, *result),
            on_error=lambda error: self.writes.report(f"plan {action.value}", error),
            description=f"plan {action.value}",
        )

    def request_correction(self, event_ids: Sequence[str], card: dict[str, Any]) -> None:
        """Write `card` (title, summary, narrative, criticality and its new id) superseding the events."""
        memory = self._writable_memory("curation")
        if memory is None:
            return
        ids, actor = list(event_ids), self.actor

        def planned() -> tuple[Action, list[Step], int]:
            turn = memory.current_turn
            return Action.CORRECT, plan_correction(engine_calls.load_events(memory, ids), card, turn), turn

        def write(steps: list[Step]) -> Callable[[], object]:
            return lambda: engine_calls.write_correction(memory, card, steps, actor)

        self.worker.run(
            planned,
            on_done=lambda result: self._confirmed(memory, *result, write=write),
            on_error=lambda error: self.writes.report("plan a corrected card", error),
            description="plan a corrected card",
        )

    def _confirmed(
        self,
        memory: StrataGate,
        action: Action,
        steps: list[Step],
        turn: int,
        write: Callable[[list[Step]], Callable[[], object]] | None = None,
    ) -> None:
        if not steps:
            self.writes.message.emit(f"{LABELS[action]}: nothing to change")
            return
        title = action_title(steps)
        if self.preview and not self.confirm(title, steps, turn):
            return
        actor = self.actor
        self.writes.run(
            self._steps_op(
                title,
                steps,
                write(steps) if write else lambda: engine_calls.move_all(memory, steps, actor, False),
                Origin.ACTION,
                undo_entry=lambda _result: CurationCommand(steps),
            )
        )

    def request_lift(self, block_id: str, level: int) -> None:
        """Lift a block to `level` for the user (source 'user') and push the lift on the undo history."""
        memory = self._writable_memory("lifting")
        if memory is None:
            return
        actor = self.actor
        self.writes.run(
            WriteOp(
                label=f"Lift {block_id} to L{level}",
                write=lambda: engine_calls.lift_block(memory, block_id, level, actor),
                changes=lambda _lift: Changes.of(
                    Origin.ACTION, f"Lift {block_id} to L{level}", blocks=[block_id], journal=True
                ),
                undo_entry=lambda lift: _lift_command(block_id, lift),
            )
        )

    # The undo history's writes ---------------------------------------------------------------------------

    def move_op(self, command: QUndoCommand, undo: bool) -> WriteOp[Any]:
        """The write that undoes (or redoes) one of this controller's commands, on the memory open now."""
        memory, actor = self.memory, self.actor
        label = ("Undo " if undo else "Redo ") + command.text()
        if isinstance(command, BlockLiftCommand):
            goal = command.before if undo else command.after
            block_id = command.block_id
            return WriteOp(
                label=label,
                write=lambda: engine_calls.move_block_pointer(memory, block_id, goal, actor, undo),
                changes=lambda _wrote: Changes.of(Origin.UNDO, label, blocks=[block_id], journal=True),
            )
        assert isinstance(command, CurationCommand)
        steps = command.steps
        return self._steps_op(
            label, steps, lambda: engine_calls.move_all(memory, steps, actor, undo), Origin.UNDO
        )

    def _steps_op(
        self,
        label: str,
        steps: list[Step],
        write: Callable[[], object],
        origin: Origin,
        undo_entry: Callable[[object], QUndoCommand] | None = None,
    ) -> WriteOp[Any]:
        ids = [step.event_id for step in steps]
        return WriteOp(
            label=label,
            write=write,
            changes=lambda _result: Changes.of(origin, label, events=ids, journal=True),
            undo_entry=undo_entry,
            expected=[(step.event_id, step.before) for step in steps],
            read_current=lambda memory: engine_calls.current_states(memory, ids),
        )

    # Helpers ---------------------------------------------------------------------------------------------

    def _writable_memory(self, what: str) -> StrataGate | None:
        memory = self.memory
        if memory is None:
            return None
        if memory.read_only:
            self.writes.refuse(ReadOnlyError(f"This memory is open read-only: {what} is disabled."))
            return None
        return memory

    def _confirm_with_dialog(self, title: str, steps: list[Step], turn: int) -> bool:
        return PreviewDialog(title, steps, turn, self._parent).exec() == QDialog.DialogCode.Accepted


def still_undoable(memory: StrataGate, command: QUndoCommand) -> bool:
    """Whether every record a command moves still exists (runs on the database worker)."""
    if isinstance(command, BlockLiftCommand):
        try:
            memory.get_block(command.block_id)
        except UnknownIdError:
            return False
        return True
    assert isinstance(command, CurationCommand)
    ids = set(command.event_ids)
    return {event.id for event in memory.get_events(list(ids))} == ids


def _lift_command(block_id: str, lift: BlockLift) -> BlockLiftCommand:
    return BlockLiftCommand(block_id, lift.before, lift.after)
