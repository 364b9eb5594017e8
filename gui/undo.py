"""The undo history: Edit ▸ Undo and Redo as background writes that move the stack only once committed.

Commands on the stack hold data only (see `curation/commands.py`). Undoing one asks the feature that owns it
for the write that moves its records back (`move_op`), runs that write through the window's `Writes`, and
moves the stack's index after the commit; a write that fails or is declined leaves the index where it was,
so there is nothing to put back. While one undo or redo is in flight the others wait (`busy`), and the UI
thread never waits on the database.

Each open memory (location and namespace) keeps its own stack, so switching namespace and back, or reloading,
keeps what can still be undone.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from stratagate_gui.writes import WriteOp, Writes

MoveOp = Callable[[QUndoCommand, bool], WriteOp[Any]]
"""(command, undo) → the write that moves the command's records back (undo) or forward again (redo)."""


class UndoHistory(QObject):
    changed = Signal()
    """The active stack's index, texts or the busy flag changed (Edit ▸ Undo/Redo follow it)."""

    def __init__(self, writes: Writes, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.writes = writes
        self.move_op: MoveOp | None = None
        self.busy = False
        self._stacks: dict[Hashable, QUndoStack] = {}
        self.stack = self._stack_for(None)
        writes.committed.connect(self.push)

    # The active stack --------------------------------------------------------------------------------------

    def follow(self, key: Hashable) -> None:
        """Make `key`'s stack (an open memory's location and namespace) the active one."""
        self.stack = self._stack_for(key)
        self.changed.emit()

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
