"""`MemoryBackend`: the storage contract held in process memory (for `stratagate.in_memory()` and tests).

It keeps the same promises as the SQL backends: records are copied on the way in and out, a commit applies
all of a ChangeSet or nothing, and a stale `expected_revision` raises `StorageConflictError`. Like the SQL
backends it keeps an element's facts apart from the element (as rows of their own), so a commit that changes
one fact copies that fact only.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from stratagate.errors import ReadOnlyError, StorageConflictError, StrataGateError
from stratagate.search.tokenize import search_tokens
from stratagate.snapshot import MODEL_RESPONSE_HISTORY_LIMIT
from stratagate.storage.backend import (
    CHANGE_SECTION_KEYS,
    ELEMENT_FACTS,
    SECTION_KEYS,
    SPAN_KEYS,
    ChangeSet,
    Record,
    nest_facts,
)

_ADDED = {"addedSourceEventIds": "sourceEventIds", "addedSourceMessageIds": "sourceMessageIds"}
"""The appending form of an element's source lists (backend.py)."""


class _Space:
    def __init__(self, space: Record):
        self.space = copy.deepcopy(space)
        self.sections: dict[str, dict[str, Record]] = {section: {} for section in SECTION_KEYS}
        """Records by key; element records without their facts."""
        self.facts: dict[str, dict[str, Record]] = {}
        """Element id -> its fact records (without `elementId`) by fact id, in fact order."""
        self.fact_owner: dict[str, str] = {}
        """Fact id -> element id."""
        self.journal: list[Record] = []

    def put_element(self, key: str, record: Record) -> None:
        """Store an element record; its `facts`, when present, replace the element's stored facts, and its
        `added…` source ids go after the stored ones."""
        facts = record.pop("facts", None)
        stored = self.sections["elements"].get(key, {})
        for added, name in _ADDED.items():
            if added in record:  # extended in place: the stored list is this backend's own
                stored.setdefault(name, []).extend(record[added])
        record = {_ADDED.get(name, name): stored[_ADDED[name]] if name in _ADDED else value
                  for name, value in record.items()}
        self.sections["elements"][key] = record
        if facts is not None:
            self.drop_facts(key)
            self.facts[key] = {}
            for fact in facts:
                self.put_fact({**fact, "elementId": key})
        else:
            self.facts.setdefault(key, {})

    def drop_facts(self, element_id: str) -> None:
        for fact_id in self.facts.pop(element_id, {}):
            self.fact_owner.pop(fact_id, None)

    def put_fact(self, record: Record) -> None:
        """Replace a known fact in place, or append a new one to its element (moving it if its owner changed)."""
        element_id = record.pop("elementId")
        owner = self.fact_owner.get(record["id"])
        if owner is not None and owner != element_id:
            self.facts[owner].pop(record["id"], None)
        self.facts[element_id][record["id"]] = record
        self.fact_owner[record["id"]] = element_id

    def delete_fact(self, fact_id: str) -> None:
        owner = self.fact_owner.pop(fact_id, None)
        if owner is not None:
            self.facts[owner].pop(fact_id, None)

    def records(self, section: str, keys: list[str] | None = None) -> list[Record]:
        """Stored records (not copies), elements with their facts nested."""
        stored = self.sections[section]
        chosen = list(stored.values()) if keys is None else [stored[key] for key in keys if key in stored]
        if section != "elements":
            return chosen
        return [nest_facts(element, list(self.facts[element["id"]].values())) for element in chosen]


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
        if name == "pinned" and bool((record.get("weight") or {}).get("pinned")) != bool(wanted):
            return False
        if name == "criticality" and record.get("criticality") != wanted:
            return False
        if name == "eventType" and temporal.get("eventType") != wanted:
            return False
        if name == "threadId" and record.get("threadId") != wanted:
            return False
        if name == "messageId" and wanted not in {message["id"] for message in record.get("l5Raw") or []}:
            return False
        if name == "messageTokens" and not any(
            set(wanted).intersection(search_tokens(message["content"])) for message in record.get("l5Raw") or []
        ):
            return False
        if name == "participant" and str(wanted).casefold() not in {
            str(p).casefold() for p in temporal.get("participants") or []
        }:
            return False
        if name == "idContains" and str(wanted).casefold() not in str(record.get("id", "")).casefold():
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
            for record in snapshot.get(section, []):
                if section == "elements":
                    stored.put_element(record[key], _copy(record))
                else:
                    stored.sections[section][record[key]] = _copy(record)
        self._spaces[namespace] = stored

    def _space(self, namespace: str) -> _Space:
        space = self._spaces.get(namespace)
        if space is None:
            raise StrataGateError(f"{self.location}: namespace {namespace!r} does not exist")
        return space

    def load_section(self, namespace: str, section: str) -> list[Record]:
        return _copy(self._space(namespace).records(section))

    def query_keys(self, namespace: str, section: str, where: Record | None = None) -> list[str]:
        space = self._space(namespace)
        records = space.sections[section]
        where = dict(where or {})
        fact_status = where.pop("factStatus", None)  # element records are kept without their facts
        keys = [key for key, record in records.items() if _matches(record, where) and (
            fact_status is None or any(fact.get("status") == fact_status for fact in space.facts.get(key, {}).values())
        )]
        if section == "blocks":  # in sequence order, as the SQL backends list them
            keys.sort(key=lambda key: records[key]["sequence"])
        return keys

    def fetch(self, namespace: str, section: str, keys: list[str]) -> list[Record]:
        return _copy(self._space(namespace).records(section, keys))

    def packed_keys(
        self, namespace: str, section: str, where: Record | None = None, order: Any = None, limit: int | None = None
    ) -> Sequence[str]:
        if order is not None:
            raise StrataGateError("An in-memory store does not order keys by value; sort the records instead")
        return self.query_keys(namespace, section, where)[:limit]

    def filter_values(self, namespace: str, section: str, name: str) -> list[str]:
        if (section, name) not in (("events", "eventType"), ("events", "participant")):
            raise StrataGateError(f"Section {section!r} lists no values of the filter {name!r}")
        values: set[str] = set()
        for record in self._space(namespace).sections[section].values():
            temporal = record.get("temporal") or {}
            found = [temporal.get("eventType")] if name == "eventType" else temporal.get("participants") or []
            values.update(str(value) for value in found if value is not None and str(value).strip())
        return sorted(values)

    def key_statuses(self, namespace: str, section: str, statuses: list[str]) -> dict[str, str]:
        records = self._space(namespace).sections[section]
        return {key: record["status"] for key, record in records.items() if record.get("status") in statuses}

    def key_tail(self, namespace: str, section: str, known: int) -> tuple[int, list[str]]:
        keys = list(self._space(namespace).sections[section])
        return len(keys), keys[known:]

    def block_tally(self, namespace: str, thread_id: str | None) -> tuple[int, int | None, int]:
        blocks = self._space(namespace).sections["blocks"].values()
        mine = [block for block in blocks if (block.get("threadId") or None) == thread_id]
        last = max(mine, key=lambda block: block["sequence"], default=None)
        return len(mine), None if last is None else last["endTurn"], max((b["sequence"] for b in blocks), default=0)

    def block_spans(self, namespace: str, thread_id: str | None = None) -> list[Record]:
        blocks = sorted(self._space(namespace).sections["blocks"].values(), key=lambda block: block["sequence"])
        return [
            {**{key: value for key, value in block.items() if key in SPAN_KEYS}, "messageCount": len(block["l5Raw"])}
            for block in blocks
            if thread_id is None or (block.get("threadId") or None) == thread_id
        ]

    def thread_ids(self, namespace: str) -> list[str | None]:
        sections = self._space(namespace).sections
        blocks = sorted(sections["blocks"].values(), key=lambda block: block["sequence"])
        return list(dict.fromkeys(record.get("threadId") or None for record in [*blocks, *sections["openTail"].values()]))

    def journal(self, namespace: str) -> list[Record]:
        return copy.deepcopy(self._space(namespace).journal)

    def commit(self, namespace: str, changes: ChangeSet, expected_revision: int) -> int:
        if self.read_only:
            raise ReadOnlyError(f"{self.location} is open read-only")
        space = self._spaces.get(namespace)
        actual = space.space["revision"] if space else None
        if space is None or actual != expected_revision:
            raise StorageConflictError(namespace, expected_revision, actual)
        unknown = (set(changes.upserts) | set(changes.deletes)) - set(CHANGE_SECTION_KEYS)
        if unknown:
            raise StrataGateError(f"Unknown storage section(s): {', '.join(sorted(unknown))}")
        # Copy and check everything first, so a bad record fails before anything is applied.
        upserts: dict[str, list[Any]] = {
            section: [(record[CHANGE_SECTION_KEYS[section]], _copy(record)) for record in records]
            for section, records in changes.upserts.items()
        }
        self._check_fact_owners(space, changes, upserts)
        for section, keys in changes.deletes.items():
            for key in keys:
                if section == ELEMENT_FACTS:
                    space.delete_fact(key)
                    continue
                space.sections[section].pop(key, None)
                if section == "elements":
                    space.drop_facts(key)
        for section in sorted(upserts, key=lambda name: name == ELEMENT_FACTS):  # facts after their elements
            for key, record in upserts[section]:
                if section == ELEMENT_FACTS:
                    space.put_fact(record)
                elif section == "elements":
                    space.put_element(key, record)
                else:
                    space.sections[section][key] = record
        responses = space.sections["successfulModelResponses"]
        for key in list(responses)[:-MODEL_RESPONSE_HISTORY_LIMIT]:
            del responses[key]
        space.space.update(copy.deepcopy(changes.space))
        space.journal.extend(copy.deepcopy(changes.journal))
        space.space["revision"] = expected_revision + 1
        return expected_revision + 1

    @staticmethod
    def _check_fact_owners(space: _Space, changes: ChangeSet, upserts: dict[str, list[Any]]) -> None:
        """Every upserted fact names an element that exists once the change is applied."""
        deleted = set(changes.deletes.get("elements", ()))
        upserted = {key for key, _record in upserts.get("elements", ())}
        for key, record in upserts.get(ELEMENT_FACTS, ()):
            owner = record.get("elementId")
            if owner not in upserted and (owner in deleted or owner not in space.sections["elements"]):
                raise StrataGateError(f"{ELEMENT_FACTS} record {key!r}: element {owner!r} does not exist")

    def event_search_index(self, namespace: str, progress: Any = None) -> None:
        """None: an in-memory store keeps no search index (searches index the loaded events)."""
        return None

    def element_search_index(self, namespace: str, progress: Any = None) -> None:
        """None: an in-memory store keeps no search index (searches index the loaded elements)."""
        return None

    def exclusive(self, namespace: str) -> AbstractContextManager[None]:
        """Nothing to hold: one process, and a commit never yields to another writer midway."""
        return nullcontext()

    def shared_read(self) -> AbstractContextManager[None]:
        """Nothing to share: reads see the data as it is."""
        return nullcontext()

    def last_read(self) -> AbstractContextManager[None]:
        """Nothing to end early: no transaction."""
        return nullcontext()

    def close(self) -> None:
        """Nothing to release; the data lives as long as this object."""
