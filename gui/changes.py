"""What changed in the open memory: one value every view reads to decide what it must re-read.

A `Changes` is published on `Writes.changes` after every write this window commits (an action, an undo, a
redo), after a conflict made the window re-read the memory, and when another process's write is detected.
Views never refresh each other: each one subscribes and refreshes what it shows itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum


class Origin(StrEnum):
    """Who caused a change."""

    ACTION = "action"
    """A write this window made for the user (a curation action, a lift, a Strata move)."""
    UNDO = "undo"
    """Edit ▸ Undo or Redo in this window."""
    EXTERNAL = "external"
    """Another process wrote (found by a conflict or by an external-change detector); the memory was re-read."""


@dataclass(frozen=True)
class Changes:
    origin: Origin
    label: str = ""
    """What happened, for a status line ("Pin evt_51", "Undo Forget 3 events")."""
    events: frozenset[str] = field(default_factory=frozenset)
    blocks: frozenset[str] = field(default_factory=frozenset)
    elements: frozenset[str] = field(default_factory=frozenset)
    journal: bool = False
    """The curation journal gained entries."""
    reloaded: bool = False
    """The memory was re-read from storage: anything may have changed, views re-read everything they show."""
    files: bool = False
    """Files of a Strata store moved between tiers."""

    @classmethod
    def of(
        cls,
        origin: Origin,
        label: str = "",
        *,
        events: Iterable[str] = (),
        blocks: Iterable[str] = (),
        elements: Iterable[str] = (),
        journal: bool = False,
        reloaded: bool = False,
        files: bool = False,
    ) -> Changes:
        return cls(
            origin, label, frozenset(events), frozenset(blocks), frozenset(elements), journal, reloaded, files
        )

    @property
    def touches_events(self) -> bool:
        return self.reloaded or bool(self.events)

    @property
    def touches_blocks(self) -> bool:
        return self.reloaded or bool(self.blocks)

    @property
    def touches_elements(self) -> bool:
        return self.reloaded or bool(self.elements)

    @property
    def touches_journal(self) -> bool:
        return self.reloaded or self.journal

    @property
    def touches_memory(self) -> bool:
        """Anything stored in the memory database changed (its revision moved)."""
        return self.reloaded or bool(self.events or self.blocks or self.elements or self.journal)
