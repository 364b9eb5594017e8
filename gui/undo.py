"""The undo history: Edit ▸ Undo and Redo as background writes that move the stack only once committed.

Commands on the stack hold data only (see `curation/commands.py`). Undoing one asks the feature that owns it
for the write that moves its records back (`move_op`), runs that write through the window's `Writes`, and
moves the stack's index after the commit; a write that fails or is declined leaves the index where it was,
so there is nothing to put back. While one undo or redo is in flight the others wait (`busy`), and the UI
thread never waits on the database.

Each open memory (location and namespace) keeps its own stack, so switching namespace and back, or reloading,
keeps the history. When the memory comes back at another revision than this window last read (another
process wrote meanwhile), every command whose records still exist is kept (each undo is a revision-checked
write that converges on the stored state, so another writer's changes are kept) and only the others are
dropped, with a status-bar line saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from stratagate_gui.writes import WriteOp, Writes

if TYPE_CHECKING:
    from stratagate.memory import StrataGate

MoveOp = Callable[[QUndoCommand, bool], WriteOp[Any]]
"""(command, undo) → the write that moves the command's records back (undo) or forward again (redo)."""
StillUndoable = Callable[["StrataGate", QUndoCommand], bool]
"""Whether a command's records still exist in the memory (runs on the database worker)."""


class UndoHistory(QObject):
    changed = Signal()
    """The active stack's index, texts or the busy flag changed (Edit ▸ Undo/Redo follow it)."""

    def __init__(self, writes: Writes, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.writes = writes
        self.move_op: MoveOp | None = None
        self.still_undoable: StillUndoable | None = None
        self.busy = False
        self._stacks: dict[Hashable, QUndoStack] = {}
        self._revisions: dict[Hashable, int] = {}
        """The revision this window last read of each memory it left."""
        self._key: Hashable = None
        self._memory: StrataGate | None = None
        self.stack = self._stack_for(None)
        writes.committed.connect(self.push)

    # The active stack --------------------------------------------------------------------------------------

    def follow(self, key: Hashable, memory: StrataGate | None = None) -> None:
        """Make `key`'s stack (an open memory's location and namespace, just opened as `memory`) the active
        one. If another process wrote to it since this window last read it, keep what can still be undone."""
        if self._key is not None and self._memory is not None:
            self._revisions[self._key] = self._memory.revision
        self._key, self._memory = key, memory
        self.stack = self._stack_for(key)
        known = self._revisions.get(key)
        if memory is not None and known is not None and known != memory.revision and self.stack.count():
            self._keep_what_still_exists(memory)
        self.changed.emit()

    def _keep_what_still_exists(self, memory: StrataGate) -> None:
        check, stack = self.still_undoable, self.stack
        if check is None:
            return
        commands = [stack.command(number) for number in range(stack.count())]

        def checked(verdicts: list[bool]) -> None:
            if stack is not self.stack:
                return  # another memory was opened meanwhile
            kept = dict(zip((id(command) for command in commands), verdicts, strict=True))
            dropped = self.keep(lambda command: kept.get(id(command), True))
            note = f"; {dropped} step(s) dropped: their records no longer exist" if dropped else ""
            self.writes.message.emit(
                f"Another process wrote to this memory: undo history kept ({stack.count()} step(s)){note}"
            )

        self.writes.worker.run(
            lambda: [check(memory, command) for command in commands],
            on_done=checked,
            description="check the undo history after another process wrote",
        )

    def _stack_for(self, key: Hashable) -> QUndoStack:
        stack = self._stacks.get(key)
        if stack is None:
            stack = QUndoStack(self)
            # Only the active stack moves (pushes, undo and redo all go to it).
            stack.indexChanged.connect(self.changed)
            self._stacks[key] = stack
        return stack

    def push(self, command: QUndoCommand) -> None:
        """Record a write that already committed (its data-only command does nothing when pushed)."""
        self.stack.push(command)

    def keep(self, can_still_undo: Callable[[QUndoCommand], bool]) -> int:
        """Keep the active stack's commands that can still be undone, in order (after another writer changed
        the memory); returns how many were dropped. The index stays on the same command when it is kept."""
        stack = self.stack
        commands = [stack.command(number) for number in range(stack.count())]
        kept = [(number, command) for number, command in enumerate(commands) if can_still_undo(command)]
        if len(kept) == len(commands):
            return 0
        done = sum(1 for number, _command in kept if number < stack.index())
        copies = [command.copy() for _number, command in kept]
        stack.clear()
        for copy in copies:
            stack.push(copy)
        stack.setIndex(done)
        self.changed.emit()
        return len(commands) - len(kept)

    # Reading the active stack ------------------------------------------------------------------------------

    def count(self) -> int:
        return self.stack.count()

    def index(self) -> int:
        return self.stack.index()

    def command(self, number: int) -> QUndoCommand:
        return self.stack.command(number)

    def undo_text(self) -> str:
        return self.stack.undoText()

    def redo_text(self) -> str:
        return self.stack.redoText()

    def can_undo(self) -> bool:
        return not self.busy and self.stack.canUndo()

    def can_redo(self) -> bool:
        return not self.busy and self.stack.canRedo()

    def clear(self) -> None:
        self.stack.clear()

    # Undo and redo -----------------------------------------------------------------------------------------

    def undo(self) -> None:
        if self.can_undo():
            self._move(self.stack.command(self.stack.index() - 1), undo=True)

    def redo(self) -> None:
        if self.can_redo():
            self._move(self.stack.command(self.stack.index()), undo=False)

    def _move(self, command: QUndoCommand, undo: bool) -> None:
        if self.move_op is None:
            return
        op = self.move_op(command, undo)
        stack, index = self.stack, self.stack.index()

        def committed(_result: object) -> None:
            if stack.index() == index:  # the index moves only now that the write is stored
                if undo:
                    stack.undo()
                else:
                    stack.redo()

        op.on_committed = committed
        op.on_finished = lambda _committed: self._set_busy(False)
        self._set_busy(True)
        self.writes.run(op)

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.changed.emit()
