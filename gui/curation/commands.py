"""Curation entries of the undo history: data only.

A command records what one committed write did: the steps of an action on a selection, or the exact block
pointers of a user lift. It never writes: its `undo()`/`redo()` are Qt's no-ops, so the stack's index can only
move after a write committed. Edit ▸ Undo and Redo ask the controller for the write that moves the command's
records (`CurationController.move_op`) and run it in the background (`stratagate_gui.undo.UndoHistory`).
"""

from __future__ import annotations

from PySide6.QtGui import QUndoCommand

from stratagate.memory import BlockPointer
from stratagate_gui.curation.actions import Step, action_title


class CurationCommand(QUndoCommand):
    """One action on a selection: a macro over its single-event steps, undone in reverse order."""

    def __init__(self, steps: list[Step]) -> None:
        super().__init__(action_title(steps))
        self.steps = steps

    @property
    def event_ids(self) -> list[str]:
        return [step.event_id for step in self.steps]

    def copy(self) -> CurationCommand:
        return CurationCommand(self.steps)


class BlockLiftCommand(QUndoCommand):
    """A user's lift of one block: undo puts the exact pointer back, redo the exact lifted one."""

    def __init__(self, block_id: str, before: BlockPointer, after: BlockPointer) -> None:
        super().__init__(f"Lift {block_id} to L{after.anchor_level}")
        self.block_id = block_id
        self.before = before
        self.after = after

    def copy(self) -> BlockLiftCommand:
        return BlockLiftCommand(self.block_id, self.before, self.after)
