"""`MemoryBackend`: the storage contract held in process memory (for `stratagate.in_memory()` and tests).

It keeps the same promises as the SQL backends: records are copied on the way in and out, a commit applies
all of a ChangeSet or nothing, and a stale `expected_revision` raises `StorageConflictError`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from stratagate.errors import ReadOnlyError, StorageConflictError, StrataGateError
from stratagate.snapshot import MODEL_RESPONSE_HISTORY_LIMIT
from stratagate.storage.backend import SECTION_KEYS, ChangeSet, Record


class _Space:
    def __init__(self, space: Record):
        self.space = copy.deepcopy(space)
        self.sections: dict[str, dict[str, Record]] = {section: {} for section in SECTION_KEYS}
        self.journal: list[Record] = []


def _copy(value: Any) -> Any:
    """A deep copy of a JSON-shaped record (a JSON round trip is several times faster than copy.deepcopy)."""
    return json.loads(json.dumps(value))


def _matches(record: Record, where: Record) -> bool:
    """The `query_keys` filters of the contract."""
    temporal = record.get("temporal") or {}
    for name, wanted in where.items():
        if wanted is None:
            continue
        if name == "status" and record.get("status") not in (wanted if isinstance(wanted, list | tuple | set) else (wanted,)):
            return False
        if name == "criticality" and record.get("criticality") != wanted:
            return False
        if name == "eventType" and temporal.get("eventType") != wanted:
            return False
        if name == "threadId" and record.get("threadId") != wanted:
            return False
        if name == "participant" and str(wanted).casefold() not in {
            str(p).casefold() for p in temporal.get("participants") or []
        }:
            return False
        if name == "text":
            needle = str(wanted).casefold()
            haystack = " ".join(str(record.get(key, "")) for key in ("id", "title", "summary", "narrative", "name", "content"))
            if needle not in haystack.casefold():
                return False
    return True


class MemoryBackend:
    """A `StorageBackend` in a dict. Several engines may share one instance (like two openers of one file)."""

    def __init__(self, *, read_only: bool = False, location: str = ":memory:"):
        self.location = location
        self.read_only = read_only
        self._spaces: dict[str, _Space] = {}

    def list_namespaces(self) -> list[str]:
        return sorted(self._spaces)

    def load_space(self, namespace: str) -> Record | None:
        space = self._spaces.get(namespace)
        return copy.deepcopy(space.space) if space else None

    def create_space(self, namespace: str, space: Record) -> int:
        if self.read_only:
            raise ReadOnlyError(f"{self.location} is open read-only: cannot create namespace {namespace!r}")
        if namespace in self._spaces:
            raise StorageConflictError(namespace, 0, self._spaces[namespace].space["revision"])
        self._spaces[namespace] = _Space({**space, "revision": 1})
        return 1

    def import_snapshot(self, namespace: str, snapshot: Record, revision: int = 1) -> None:
        """Load a whole (normalized v7) snapshot as a namespace; used by tests and fixtures."""
        space = {key: snapshot[key] for key in ("schemaVersion", "currentTurn", "blockTurnSize", "blockDecayLambda")}
        stored = _Space({**space, "revision": revision, "createdAt": "", "updatedAt": ""})
        for section, key in SECTION_KEYS.items():
            stored.sections[section] = {record[key]: _copy(record) for record in snapshot.get(section, [])}
        self._spaces[namespace] = stored

    def _space(self, namespace: str) -> _Space:
        space = self._spaces.get(namespace)
        if space is None:
            raise StrataGateError(f"{self.location}: namespace {namespace!r} does not exist")
        return space

    def load_section(self, namespace: str, section: str) -> list[Record]:
        return _copy(list(self._space(namespace).sections[section].values()))

    def query_keys(self, namespace: str, section: str, where: Record | None = None) -> list[str]:
        records = self._space(namespace).sections[section]
        if not where:
            return list(records)
        return [key for key, record in records.items() if _matches(record, where)]

    def fetch(self, namespace: str, section: str, keys: list[str]) -> list[Record]:
        records = self._space(namespace).sections[section]
        return [_copy(records[key]) for key in keys if key in records]

    def journal(self, namespace: str) -> list[Record]:
        return copy.deepcopy(self._space(namespace).journal)

    def commit(self, namespace: str, changes: ChangeSet, expected_revision: int) -> int:
        if self.read_only:
            raise ReadOnlyError(f"{self.location} is open read-only")
        space = self._spaces.get(namespace)
        actual = space.space["revision"] if space else None
        if space is None or actual != expected_revision:
            raise StorageConflictError(namespace, expected_revision, actual)
        unknown = (set(changes.upserts) | set(changes.deletes)) - set(SECTION_KEYS)
        if unknown:
            raise StrataGateError(f"Unknown storage section(s): {', '.join(sorted(unknown))}")
        # Copy everything first, so a bad record fails before anything is applied.
        upserts: dict[str, list[Any]] = {
            section: [(record[SECTION_KEYS[section]], _copy(record)) for record in records]
            for section, records in changes.upserts.items()
        }
        for section, keys in changes.deletes.items():
            for key in keys:
                space.sections[section].pop(key, None)
        for section, records in upserts.items():
            target = space.sections[section]
            for key, record in records:
                target[key] = record
        responses = space.sections["successfulModelResponses"]
        for key in list(responses)[:-MODEL_RESPONSE_HISTORY_LIMIT]:
            del responses[key]
        space.space.update(copy.deepcopy(changes.space))
        space.journal.extend(copy.deepcopy(changes.journal))
        space.space["revision"] = expected_revision + 1
        return expected_revision + 1

    def close(self) -> None:
        """Nothing to release; the data lives as long as this object."""
