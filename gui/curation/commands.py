"""Curation actions on the undo stack.

One `CurationCommand` per action on a selection (and one `BlockLiftCommand` per user lift of a block): a macro over the single-event steps, undone in reverse
order. Each step moves its event from the state stored now to the step's goal, so a step already at its goal
costs nothing, and an undo or redo interrupted by a conflict finishes when run again. The first run happens before the command is pushed (on the database worker, so a conflict
never leaves a command on the stack for an action that did not happen); after that, the stack's undo and redo
move the events back and forth. The stack calls undo()/redo() synchronously, from the Edit menu or the
shortcuts, so those run on the worker and wait for it: a curation write touches a handful of rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QUndoCommand

from stratagate.errors import StrataGateError
from stratagate.memory import BlockPointer
from stratagate_gui.curation.actions import Step
from stratagate_gui.curation.dialogs import action_title

if TYPE_CHECKING:
    from stratagate_gui.curation.controller import CurationController


class WrittenCommand(QUndoCommand):
    """A command whose first run already wrote: the stack's first redo() only records it. Later undo()/redo()
    call `move`; a failure puts the stack's index back through the controller."""

    def __init__(self, controller: CurationController, text: str, steps: list[Step]) -> None:
        super().__init__(text)
        self.controller = controller
        self.steps = steps
        self.skip_next = True
        """The next redo()/undo() only moves the stack's index: the work already happened (first run, or
        an index put back after a failure)."""

    def redo(self) -> None:
        self._run(undo=False)

    def undo(self) -> None:
        self._run(undo=True)

    def move(self, undo: bool) -> None:
        raise NotImplementedError

    def _run(self, undo: bool) -> None:
        if self.skip_next:
            self.skip_next = False
            return
        try:
            self.move(undo)
        except StrataGateError as error:
            self.controller.stack_move_failed(self, undo, error)


class CurationCommand(WrittenCommand):
    def __init__(self, controller: CurationController, steps: list[Step]) -> None:
        super().__init__(controller, action_title(steps), steps)

    def move(self, undo: bool) -> None:
        self.controller.move_now(self.steps, undo)


class BlockLiftCommand(WrittenCommand):
    """A user's lift of one block: undo puts the exact pointer back, redo the exact lifted one."""

    def __init__(self, controller: CurationController, block_id: str, before: BlockPointer, after: BlockPointer):
        super().__init__(controller, f"Lift {block_id} to L{after.anchor_level}", [])
        self.block_id = block_id
        self.before = before
        self.after = after

    def move(self, undo: bool) -> None:
        self.controller.move_block_now(self, undo)
