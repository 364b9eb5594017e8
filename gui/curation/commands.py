"""Curation actions on the undo stack.

One `CurationCommand` per action on a selection: a macro over the single-event steps, undone in reverse
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
from stratagate_gui.curation.actions import Step
from stratagate_gui.curation.dialogs import action_title

if TYPE_CHECKING:
    from stratagate_gui.curation.controller import CurationController


class CurationCommand(QUndoCommand):
    def __init__(self, controller: CurationController, steps: list[Step]) -> None:
        super().__init__(action_title(steps))
        self.controller = controller
        self.steps = steps
        self.skip_next = True
        """The next redo()/undo() only moves the stack's index: the work already happened (first run, or
        an index put back after a failure)."""

    def redo(self) -> None:
        self._run(undo=False)

    def undo(self) -> None:
        self._run(undo=True)

    def _run(self, undo: bool) -> None:
        if self.skip_next:
            self.skip_next = False
            return
        try:
            self.controller.move_now(self.steps, undo)
        except StrataGateError as error:
            self.controller.stack_move_failed(self, undo, error)
