"""The engine's in-memory view of one namespace, and the copy-on-write `Mutation` every change goes through.

A mutation reads through to the loaded state, copies an object before changing it, and collects what it
changed. Only after the backend has committed the resulting ChangeSet are the changes swapped into the state:
a failure anywhere (bad input, a model error, a storage conflict) leaves the state exactly as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from stratagate.cancellation import checkpoint
from stratagate.model import SECTION_MODELS, Element
from stratagate.storage.backend import ELEMENT_FACTS, SECTION_KEYS, ChangeSet, Record, StorageBackend

SPACE_FIELDS = {"currentTurn": "current_turn", "blockTurnSize": "block_turn_size", "blockDecayLambda": "block_decay_lambda"}
_DELETED = object()


def record_key(section: str, item: Any) -> str:
    return item.block_id if section == "extractionJobs" else item.id


class MemoryState:
    """Space fields plus the sections loaded so far (model objects by key, in section order)."""

    def __init__(self, backend: StorageBackend, namespace: str, space: Record):
        self.backend = backend
        self.namespace = namespace
        self.revision: int = space["revision"]
        self.current_turn: int = space["currentTurn"]
        self.block_turn_size: int = space["blockTurnSize"]
        self.block_decay_lambda: float = space.get("blockDecayLambda", 0.3)
        self._sections: dict[str, dict[str, Any]] = {}
        self.listeners: list[Callable[[str, list[str]], None]] = []

    def section(self, name: str) -> dict[str, Any]:
        items = self._sections.get(name)
        if items is None:
            model = SECTION_MODELS[name]
            records = self.backend.load_section(self.namespace, name)
            key, items = SECTION_KEYS[name], {}
            for record in records:
                checkpoint()  # a cancelled read keeps nothing of the section
                items[record[key]] = model.from_record(record)
            self._sections[name] = items
        return items

    def is_loaded(self, name: str) -> bool:
        return name in self._sections

    def reload(self) -> None:
        """Forget every loaded section and re-read the space (after another writer committed)."""
        space = self.backend.load_space(self.namespace)
        if space is not None:
            self.revision = space["revision"]
            for key, attr in SPACE_FIELDS.items():
                if key in space:
                    setattr(self, attr, space[key])
        self._sections.clear()
        for listener in self.listeners:
            listener("*", [])

    def apply(self, mutation: Mutation, revision: int) -> None:
        self.revision = revision
        for key, value in mutation.space.items():
            setattr(self, SPACE_FIELDS[key], value)
        for name, changed in mutation.changed.items():
            items = self._sections.get(name)
            if items is not None:
                for key, item in changed.items():
                    if item is _DELETED:
                        items.pop(key, None)
                    else:
                        items[key] = item
        # Listeners run once everything is applied, so each sees the whole new state.
        for name, changed in mutation.changed.items():
            for listener in self.listeners:
                listener(name, list(changed))


class Mutation:
    """One atomic change. Read with `get`/`values`, change with `edit` (a private copy), `put` and `delete`."""

    def __init__(self, state: MemoryState):
        self.state = state
        self.space: dict[str, Any] = {}
        self.changed: dict[str, dict[str, Any]] = {}
        self.journal: list[Record] = []

    # space fields -------------------------------------------------------------------------------------------
    @property
    def current_turn(self) -> int:
        return self.space.get("currentTurn", self.state.current_turn)

    @current_turn.setter
    def current_turn(self, value: int) -> None:
        self.space["currentTurn"] = value

    def set_space(self, key: str, value: Any) -> None:
        self.space[key] = value

    # records ------------------------------------------------------------------------------------------------
    def get(self, section: str, key: str) -> Any | None:
        changed = self.changed.get(section)
        if changed is not None and key in changed:
            item = changed[key]
            return None if item is _DELETED else item
        return self.state.section(section).get(key)

    def edit(self, section: str, key: str) -> Any | None:
        """A private copy of the record, registered as changed; None if the key does not exist."""
        changed = self.changed.setdefault(section, {})
        if key in changed:
            item = changed[key]
            return None if item is _DELETED else item
        original = self.state.section(section).get(key)
        if original is None:
            return None
        item = original.clone() if hasattr(original, "clone") else copy.deepcopy(original)
        changed[key] = item
        return item

    def put(self, section: str, item: Any) -> None:
        self.changed.setdefault(section, {})[record_key(section, item)] = item

    def delete(self, section: str, key: str) -> None:
        self.changed.setdefault(section, {})[key] = _DELETED

    def values(self, section: str) -> Iterator[Any]:
        """Every record of the section as this mutation sees it, in section order."""
        changed = self.changed.get(section, {})
        base = self.state.section(section)
        for key, item in base.items():
            current = changed.get(key, item)
            if current is not _DELETED:
                yield current
        for key, item in list(changed.items()):
            if key not in base and item is not _DELETED:
                yield item

    def has_changes(self) -> bool:
        return bool(self.space or self.changed or self.journal)

    def to_change_set(self) -> ChangeSet:
        changes = ChangeSet(space=dict(self.space), journal=list(self.journal))
        for section, items in self.changed.items():
            for key, item in items.items():
                if item is _DELETED:
                    changes.delete(section, key)
                elif section == "elements":
                    self._element_changes(changes, item)
                else:
                    changes.upsert(section, item.to_record())
        return changes

    def _element_changes(self, changes: ChangeSet, element: Element) -> None:
        """A changed element as its own fields plus the facts it replaced or added, so the commit's cost follows
        the change rather than the element's history; a new element, or one whose facts were removed or
        reordered, goes whole."""
        changed = element.changed_facts() if element.id in self.state.section("elements") else None
        if changed is None:
            changes.upsert("elements", element.to_record())
            return
        changes.upsert("elements", element.change_record())
        for fact in changed:
            changes.upsert(ELEMENT_FACTS, {**fact.to_record(), "elementId": element.id})
