"""The engine's model objects: dataclasses with snake_case attributes.

Each converts to and from its record, the camelCase dict of the v7 snapshot (`from_record` / `to_record`);
records are what crosses the storage boundary. Optional keys that are absent in a record stay absent after a
round trip. Objects returned by `StrataGate` read methods are the engine's own: treat them as read-only (every
mutation works on copies and swaps them in after the storage commit).
"""

from __future__ import annotations

import copy
import json
from bisect import insort
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from stratagate.storage.backend import nest_facts

Record = dict[str, Any]
LiftSource = Literal["user", "agent"]

EVENT_SCOPES = ("user", "project", "session")
CRITICALITIES = ("routine", "preference", "identity", "safety")
EVENT_STATUSES = ("active", "superseded", "forgotten", "archived")
ELEMENT_TYPES = ("person", "project", "organization", "tool", "place")
FACT_MODES = ("state", "set", "relation")
FACT_STATUSES = ("active", "superseded", "disputed")


def _optional(record: Record, key: str, value: Any) -> None:
    if value is not None:
        record[key] = value


@dataclass
class ToolTrace:
    """A tool call attached to a message: its name, and optionally its arguments and result (any JSON).
    None is an absent field, unless the field is in `null_fields`: given as JSON null, which is kept (the
    reference stores `"result": null` as given)."""

    name: str
    arguments: Any = None
    result: Any = None
    null_fields: frozenset[str] = frozenset()

    @classmethod
    def from_record(cls, record: Record) -> ToolTrace:
        nulls = frozenset(key for key in ("arguments", "result") if key in record and record[key] is None)
        return cls(record["name"], copy.deepcopy(record.get("arguments")), copy.deepcopy(record.get("result")), nulls)

    def to_record(self) -> Record:
        record: Record = {"name": self.name}
        for key, value in (("arguments", self.arguments), ("result", self.result)):
            if value is not None or key in self.null_fields:
                record[key] = copy.deepcopy(value)
        return record


@dataclass
class Message:
    id: str
    role: str
    content: str
    created_at: str
    thread_id: str | None = None
    tool_calls: list[ToolTrace] | None = None

    @classmethod
    def from_record(cls, record: Record) -> Message:
        calls = record.get("toolCalls")
        return cls(
            record["id"], record["role"], record["content"], record["createdAt"], record.get("threadId") or None,
            None if calls is None else [ToolTrace.from_record(call) for call in calls],
        )

    def to_record(self) -> Record:
        record: Record = {"id": self.id, "role": self.role, "content": self.content, "createdAt": self.created_at}
        _optional(record, "threadId", self.thread_id)
        if self.tool_calls is not None:
            record["toolCalls"] = [call.to_record() for call in self.tool_calls]
        return record


@dataclass
class Block:
    """A sealed run of `block_turn_size` turns with its six renderings and its decay pointer."""

    id: str
    sequence: int
    start_turn: int
    end_turn: int
    created_at: str
    should_extract: bool
    l0_title: str
    l0_tags: list[str]
    l1_summary: str
    l2_keypoints: list[str]
    l3_condensed: str
    l4_readable: str
    l5_raw: list[Message]
    pointer_current_level: int = 5
    pointer_anchor_level: int = 5
    pointer_anchor_block_position: int = 1
    last_lifted_at: str | None = None
    last_lifted_by: LiftSource | None = None
    thread_id: str | None = None

    @property
    def turn_range(self) -> tuple[int, int]:
        return (self.start_turn, self.end_turn)

    @property
    def lift_source(self) -> str | None:
        """'user', 'agent', 'legacy' (lifted before v7 recorded who lifted), or None if never lifted."""
        if self.last_lifted_by:
            return self.last_lifted_by
        return "legacy" if self.last_lifted_at else None

    @classmethod
    def from_record(cls, record: Record) -> Block:
        return cls(
            id=record["id"], thread_id=record.get("threadId") or None, sequence=record["sequence"],
            start_turn=record["startTurn"], end_turn=record["endTurn"], created_at=record["createdAt"],
            should_extract=record["shouldExtract"], l0_title=record["l0Title"], l0_tags=list(record["l0Tags"]),
            l1_summary=record["l1Summary"], l2_keypoints=list(record["l2Keypoints"]),
            l3_condensed=record["l3Condensed"], l4_readable=record["l4Readable"],
            l5_raw=[Message.from_record(message) for message in record["l5Raw"]],
            pointer_current_level=record["pointerCurrentLevel"], pointer_anchor_level=record["pointerAnchorLevel"],
            pointer_anchor_block_position=record["pointerAnchorBlockPosition"],
            last_lifted_at=record.get("lastLiftedAt"), last_lifted_by=record.get("lastLiftedBy"),
        )

    def to_record(self) -> Record:
        record: Record = {"id": self.id}
        _optional(record, "threadId", self.thread_id)
        record.update({
            "sequence": self.sequence, "startTurn": self.start_turn, "endTurn": self.end_turn,
            "createdAt": self.created_at, "shouldExtract": self.should_extract, "l0Title": self.l0_title,
            "l0Tags": list(self.l0_tags), "l1Summary": self.l1_summary, "l2Keypoints": list(self.l2_keypoints),
            "l3Condensed": self.l3_condensed, "l4Readable": self.l4_readable,
            "l5Raw": [message.to_record() for message in self.l5_raw],
            "pointerCurrentLevel": self.pointer_current_level, "pointerAnchorLevel": self.pointer_anchor_level,
            "pointerAnchorBlockPosition": self.pointer_anchor_block_position,
            "lastLiftedAt": self.last_lifted_at, "lastLiftedBy": self.last_lifted_by,
        })
        return record


_TEMPORAL_FIELDS = {
    "mentionedAt": "mentioned_at", "happenedStart": "happened_start", "happenedEnd": "happened_end",
    "precision": "precision", "basis": "basis", "status": "status", "participants": "participants",
    "eventType": "event_type", "originalText": "original_text", "supersedesEventIds": "supersedes_event_ids",
    "conflictsWithEventIds": "conflicts_with_event_ids", "sameEventId": "same_event_id",
    "beforeEventIds": "before_event_ids", "afterEventIds": "after_event_ids", "threadId": "thread_id",
}


@dataclass
class EventTemporal:
    """When an event was mentioned (`mentioned_at`) versus when it happened (`happened_start/_end`).

    Caller-supplied strings are kept verbatim; keys the engine does not know are kept in `extra`."""

    mentioned_at: str | None = None
    happened_start: str | None = None
    happened_end: str | None = None
    precision: str | None = None
    basis: str | None = None
    status: str | None = None
    participants: list[str] | None = None
    event_type: str | None = None
    original_text: str | None = None
    supersedes_event_ids: list[str] | None = None
    conflicts_with_event_ids: list[str] | None = None
    same_event_id: str | None = None
    before_event_ids: list[str] | None = None
    after_event_ids: list[str] | None = None
    thread_id: str | None = None
    extra: Record = field(default_factory=dict)

    @property
    def chronology(self) -> str | None:
        """The reference's chronology key without the createdAt fallback."""
        return self.happened_start or self.happened_end or self.mentioned_at

    @classmethod
    def from_record(cls, record: Record) -> EventTemporal:
        known, extra = {}, {}
        for key, value in record.items():
            attr = _TEMPORAL_FIELDS.get(key)
            if attr is None:
                extra[key] = _copied(value)
            else:
                known[attr] = _copied(value)
        return cls(**known, extra=extra)

    def copy(self) -> EventTemporal:
        """A copy sharing no mutable value with this one, as `from_record(to_record())` makes but cheaper."""
        values = self.__dict__.copy()
        for attr, value in values.items():
            if value is not None and type(value) is not str:
                values[attr] = _copied(value) if value else type(value)()
        copied = object.__new__(EventTemporal)
        copied.__dict__ = values
        return copied

    def to_record(self) -> Record:
        record: Record = {}
        for key, attr in _TEMPORAL_FIELDS.items():
            _optional(record, key, _copied(getattr(self, attr)))
        record.update(copy.deepcopy(self.extra))
        return record


def _copied(value: Any) -> Any:
    """`copy.deepcopy` of a JSON value, without its cost for the texts and lists of texts temporals hold."""
    if value is None or type(value) is str:
        return value
    if type(value) is list:
        copied = value.copy()
        for item in copied:  # a loop, not all(...): a search copies its hits' lists, most of them short
            if type(item) is not str:
                return copy.deepcopy(value)
        return copied
    return copy.deepcopy(value)


@dataclass
class EventWeight:
    """Decay state shared by events and elements (`weights.memory_weight_at` turns it into a number)."""

    mention_count: int = 1
    last_adopted_turn: int = 0
    last_retrieved_at: str | None = None
    pinned: bool = False
    floor_weight: float = 0.0
    forced_cap: float | None = None

    @classmethod
    def from_record(cls, record: Record) -> EventWeight:
        return cls(record["mentionCount"], record["lastAdoptedTurn"], record.get("lastRetrievedAt"),
                   record["pinned"], record["floorWeight"], record.get("forcedCap"))

    def to_record(self) -> Record:
        return {"mentionCount": self.mention_count, "lastAdoptedTurn": self.last_adopted_turn,
                "lastRetrievedAt": self.last_retrieved_at, "pinned": self.pinned,
                "floorWeight": self.floor_weight, "forcedCap": self.forced_cap}


MemoryWeight = EventWeight


@dataclass
class Event:
    """An event card extracted from (or added against) one sealed block."""

    id: str
    title: str
    summary: str
    narrative: str
    tags: list[str]
    quotes: list[str]
    source_message_ids: list[str]
    source_block_id: str
    temporal: EventTemporal
    scope: str
    criticality: str
    confidence: float
    status: str
    superseded_by: str | None
    weight: EventWeight
    created_at: str
    updated_at: str

    @classmethod
    def from_record(cls, record: Record) -> Event:
        return cls(
            id=record["id"], title=record["title"], summary=record["summary"], narrative=record["narrative"],
            tags=list(record["tags"]), quotes=list(record["quotes"]),
            source_message_ids=list(record["sourceMessageIds"]), source_block_id=record["sourceBlockId"],
            temporal=EventTemporal.from_record(record["temporal"]), scope=record["scope"],
            criticality=record["criticality"], confidence=record["confidence"], status=record["status"],
            superseded_by=record.get("supersededBy"), weight=EventWeight.from_record(record["weight"]),
            created_at=record["createdAt"], updated_at=record["updatedAt"],
        )

    def copy(self) -> Event:
        """A copy sharing no mutable value with this event (what a fetch by id returns), without the records'
        round trip."""
        values = self.__dict__.copy()
        values["tags"] = list(self.tags)
        values["quotes"] = list(self.quotes)
        values["source_message_ids"] = list(self.source_message_ids)
        values["temporal"] = self.temporal.copy()
        weight = values["weight"] = object.__new__(EventWeight)
        weight.__dict__ = self.weight.__dict__.copy()
        copied = object.__new__(Event)
        copied.__dict__ = values
        return copied

    def to_record(self) -> Record:
        return {
            "id": self.id, "title": self.title, "summary": self.summary, "narrative": self.narrative,
            "tags": list(self.tags), "quotes": list(self.quotes), "sourceMessageIds": list(self.source_message_ids),
            "sourceBlockId": self.source_block_id, "temporal": self.temporal.to_record(), "scope": self.scope,
            "criticality": self.criticality, "confidence": self.confidence, "status": self.status,
            "supersededBy": self.superseded_by, "weight": self.weight.to_record(),
            "createdAt": self.created_at, "updatedAt": self.updated_at,
        }


class EventCopies:
    """Copies of one event, made again and again (a kept search answer's hits, one set per search): what
    `Event.copy` makes, from a snapshot taken once whose temporal values that need copying are found once,
    instead of testing each of its sixteen on every copy (a third of the cost)."""

    __slots__ = ("_values", "_temporal", "_temporal_copiers", "_weight")

    def __init__(self, event: Event):
        snapshot = event.copy()
        self._values = snapshot.__dict__
        self._temporal = snapshot.temporal.__dict__
        self._weight = snapshot.weight.__dict__
        self._temporal_copiers = tuple((attr, _copier(value)) for attr, value in self._temporal.items()
                                       if value is not None and type(value) is not str)

    def __call__(self) -> Event:
        temporal_values = self._temporal.copy()
        for attr, copier in self._temporal_copiers:
            temporal_values[attr] = copier(temporal_values[attr])
        temporal = object.__new__(EventTemporal)
        temporal.__dict__ = temporal_values
        weight = object.__new__(EventWeight)
        weight.__dict__ = self._weight.copy()
        values = self._values.copy()
        values["tags"] = values["tags"].copy()
        values["quotes"] = values["quotes"].copy()
        values["source_message_ids"] = values["source_message_ids"].copy()
        values["temporal"] = temporal
        values["weight"] = weight
        copied = object.__new__(Event)
        copied.__dict__ = values
        return copied


def _copier(value: Any) -> Callable[[Any], Any]:
    """How `EventCopies` copies a temporal value as `_copied` would: a list of texts, or an empty dict, by its
    own `copy`."""
    if (type(value) is list and all(type(item) is str for item in value)) or (type(value) is dict and not value):
        return type(value).copy
    return _copied


@dataclass
class ElementFact:
    """One fact about an element, valid from `valid_from` to `valid_to` (superseded facts are kept)."""

    id: str
    key: str
    mode: str
    value: str | list[str]
    source_event_ids: list[str]
    status: str
    created_at: str
    updated_at: str
    valid_from: str | None = None
    valid_to: str | None = None
    confidence: float | None = None

    @property
    def value_text(self) -> str:
        return ", ".join(self.value) if isinstance(self.value, list) else self.value

    @classmethod
    def from_record(cls, record: Record) -> ElementFact:
        value = record["value"]
        return cls(
            id=record["id"], key=record["key"], mode=record["mode"], value=list(value) if isinstance(value, list) else value,
            source_event_ids=list(record["sourceEventIds"]), status=record["status"],
            created_at=record["createdAt"], updated_at=record["updatedAt"], valid_from=record.get("validFrom") or None,
            valid_to=record.get("validTo") or None, confidence=record.get("confidence"),
        )

    _record: Record | None = field(default=None, init=False, repr=False, compare=False)

    def to_record(self) -> Record:
        # The engine never edits a fact in place (it replaces it), so its record is built once; an element with
        # a long history re-serializes cheaply.
        if self._record is None:
            record: Record = {"id": self.id, "key": self.key, "mode": self.mode, "value": self.value}
            _optional(record, "validFrom", self.valid_from)
            _optional(record, "validTo", self.valid_to)
            record["sourceEventIds"] = self.source_event_ids
            _optional(record, "confidence", self.confidence)
            record.update({"status": self.status, "createdAt": self.created_at, "updatedAt": self.updated_at})
            self._record = record
        record = dict(self._record)
        record["sourceEventIds"] = list(self.source_event_ids)
        if isinstance(self.value, list):
            record["value"] = list(self.value)
        return record


@dataclass
class Element:
    """A person, project, organization, tool or place, with its fact history. Facts are only ever replaced
    (`set_fact`) or appended (`add_fact`), never edited in place, removed or reordered."""

    id: str
    name: str
    type: str
    aliases: list[str]
    current_state: str
    facts: list[ElementFact]
    source_event_ids: list[str]
    source_message_ids: list[str]
    weight: EventWeight
    created_at: str
    updated_at: str

    _active: dict[tuple[str, str], list[int]] | None = field(default=None, init=False, repr=False, compare=False)
    _changed: set[int] | None = field(default=None, init=False, repr=False, compare=False)
    """On a clone: the positions of the facts replaced or appended since it was cloned."""
    _cloned_count: int = field(default=0, init=False, repr=False, compare=False)
    _cloned_sources: tuple[int, int] = field(default=(0, 0), init=False, repr=False, compare=False)
    _source_sets: dict[str, tuple[int, frozenset[str]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    """List name -> (n, the set of its first n ids): shared by clones (the lists only grow), rebuilt rarely."""

    def fact(self, fact_id: str) -> ElementFact | None:
        return next((fact for fact in self.facts if fact.id == fact_id), None)

    def active_positions(self, key: str, mode: str) -> list[int]:
        """Positions of the active facts with this key and mode, in order. The index behind it is built once
        per element and kept by `set_fact` / `add_fact`, so projecting onto an element with a long history of
        superseded facts does not scan that history."""
        return list(self._active_index().get((key, mode), ()))

    def active_facts(self) -> list[ElementFact]:
        """The active facts, in fact order."""
        return [self.facts[position] for position in sorted(p for ps in self._active_index().values() for p in ps)]

    def set_fact(self, position: int, fact: ElementFact) -> None:
        self._unindex(position, self.facts[position])
        self.facts[position] = fact
        self._index(position, fact)
        if self._changed is not None:
            self._changed.add(position)

    def add_fact(self, fact: ElementFact) -> None:
        self.facts.append(fact)
        self._index(len(self.facts) - 1, fact)
        if self._changed is not None:
            self._changed.add(len(self.facts) - 1)

    def add_sources(self, event_ids: list[str], message_ids: list[str]) -> None:
        """Append the ids not yet among the element's source events / messages, in order."""
        for name, ids in (("source_event_ids", event_ids), ("source_message_ids", message_ids)):
            sources: list[str] = getattr(self, name)
            for source_id in ids:
                if not self._has_source(name, sources, source_id):
                    sources.append(source_id)

    def _has_source(self, name: str, sources: list[str], source_id: str) -> bool:
        """Membership without scanning a long source list: a set of its first n ids, plus a scan of the few
        appended since; the set is rebuilt once those pass an eighth of it (amortized O(1) per append)."""
        count, known = self._source_sets.get(name, (0, frozenset()))
        if not count <= len(sources) <= count + 32 + count // 8:
            count, known = len(sources), frozenset(sources)
            self._source_sets[name] = (count, known)
        return source_id in known or source_id in sources[count:]

    def _active_index(self) -> dict[tuple[str, str], list[int]]:
        if self._active is None:
            self._active = {}
            for position, fact in enumerate(self.facts):
                self._index(position, fact)
        return self._active

    def _index(self, position: int, fact: ElementFact) -> None:
        if self._active is not None and fact.status == "active":
            insort(self._active.setdefault((fact.key, fact.mode), []), position)

    def _unindex(self, position: int, fact: ElementFact) -> None:
        if self._active is not None and fact.status == "active":
            self._active[(fact.key, fact.mode)].remove(position)

    def clone(self) -> Element:
        """A copy for a mutation that shares the fact objects (facts are replaced, never edited in place),
        so changing an element with a long history does not copy that history. The copy records which facts
        it replaces or adds (`changed_facts`)."""
        copied = replace(self, aliases=list(self.aliases), facts=list(self.facts),
                         source_event_ids=list(self.source_event_ids), source_message_ids=list(self.source_message_ids),
                         weight=replace(self.weight))
        if self._active is not None:
            copied._active = {key: list(positions) for key, positions in self._active.items()}
        copied._changed, copied._cloned_count = set(), len(self.facts)
        copied._cloned_sources = (len(self.source_event_ids), len(self.source_message_ids))
        copied._source_sets = dict(self._source_sets)
        return copied

    def changed_facts(self) -> list[ElementFact] | None:
        """On a clone: the facts replaced or appended since cloning, in fact order. None when that is not known
        (not a clone, or the fact list changed other than through `set_fact` / `add_fact`): then only the whole
        fact list says what changed."""
        if self._changed is None:
            return None
        appended = sum(1 for position in self._changed if position >= self._cloned_count)
        if len(self.facts) != self._cloned_count + appended:
            return None
        return [self.facts[position] for position in sorted(self._changed)]

    @classmethod
    def from_record(cls, record: Record) -> Element:
        return cls(
            id=record["id"], name=record["name"], type=record["type"], aliases=list(record["aliases"]),
            current_state=record["currentState"], facts=[ElementFact.from_record(fact) for fact in record["facts"]],
            source_event_ids=list(record["sourceEventIds"]),
            source_message_ids=list(record.get("sourceMessageIds", [])),
            weight=EventWeight.from_record(record["weight"]), created_at=record["createdAt"],
            updated_at=record["updatedAt"],
        )

    def to_record(self) -> Record:
        return nest_facts(self.own_record(), [fact.to_record() for fact in self.facts])

    def change_record(self) -> Record:
        """On a clone: `own_record` with the sources it gained as `addedSourceEventIds` /
        `addedSourceMessageIds` (sources are only ever appended), so the record does not repeat the history."""
        events, messages = self._cloned_sources
        if len(self.source_event_ids) < events or len(self.source_message_ids) < messages:
            return self.own_record()
        return self.own_record({"addedSourceEventIds": self.source_event_ids[events:],
                                "addedSourceMessageIds": self.source_message_ids[messages:]})

    def own_record(self, sources: Record | None = None) -> Record:
        """The element's own fields, without its facts (an `elements` upsert that leaves the facts as stored);
        `sources` in place of the source id lists."""
        record: Record = {
            "id": self.id, "name": self.name, "type": self.type, "aliases": list(self.aliases),
            "currentState": self.current_state,
        }
        record.update(sources if sources is not None else {
            "sourceEventIds": list(self.source_event_ids), "sourceMessageIds": list(self.source_message_ids)})
        record.update(weight=self.weight.to_record(), createdAt=self.created_at, updatedAt=self.updated_at)
        return record


@dataclass
class ExtractionJob:
    block_id: str
    status: str
    attempts: int
    last_error: str | None
    updated_at: str

    @property
    def id(self) -> str:
        return self.block_id

    @classmethod
    def from_record(cls, record: Record) -> ExtractionJob:
        return cls(record["blockId"], record["status"], record["attempts"], record.get("lastError"), record["updatedAt"])

    def to_record(self) -> Record:
        return {"blockId": self.block_id, "status": self.status, "attempts": self.attempts,
                "lastError": self.last_error, "updatedAt": self.updated_at}


@dataclass
class ElementProjectionJob:
    id: str
    source_event_ids: list[str]
    status: str
    attempts: int
    element_ids: list[str]
    reason: str | None
    last_error: str | None
    created_at: str
    updated_at: str

    @classmethod
    def from_record(cls, record: Record) -> ElementProjectionJob:
        return cls(record["id"], list(record["sourceEventIds"]), record["status"], record["attempts"],
                   list(record["elementIds"]), record.get("reason"), record.get("lastError"),
                   record["createdAt"], record["updatedAt"])

    def to_record(self) -> Record:
        return {"id": self.id, "sourceEventIds": list(self.source_event_ids), "status": self.status,
                "attempts": self.attempts, "elementIds": list(self.element_ids), "reason": self.reason,
                "lastError": self.last_error, "createdAt": self.created_at, "updatedAt": self.updated_at}


@dataclass
class UsageReceipt:
    """Which memories an answer adopted (`record_memory_use`), with the assessment audit if one was given."""

    id: str
    event_ids: list[str]
    element_ids: list[str]
    created_at: str
    audit: Record | None = None

    @classmethod
    def from_record(cls, record: Record) -> UsageReceipt:
        audit = record.get("audit")
        return cls(record["id"], list(record["eventIds"]), list(record["elementIds"]), record["createdAt"],
                   copy.deepcopy(audit) if audit is not None else None)

    def to_record(self) -> Record:
        record: Record = {"id": self.id, "eventIds": list(self.event_ids), "elementIds": list(self.element_ids)}
        _optional(record, "audit", copy.deepcopy(self.audit))
        record["createdAt"] = self.created_at
        return record


@dataclass
class IngestionReceipt:
    id: str
    created_at: str

    @classmethod
    def from_record(cls, record: Record) -> IngestionReceipt:
        return cls(record["id"], record["createdAt"])

    def to_record(self) -> Record:
        return {"id": self.id, "createdAt": self.created_at}


USAGE_HEADER = "#usage "


@dataclass(frozen=True)
class ModelCallUsage:
    """What one model call cost: the model, its token counts and the wall time of the call (retries included)."""

    model: str
    input_tokens: int | None
    output_tokens: int | None
    latency_ms: int

    def header(self) -> str:
        """The first line a model adapter writes into a stored response (the schema has no usage columns, and
        the reference reads the response as plain text, so the usage travels inside it)."""
        return USAGE_HEADER + json.dumps({"model": self.model, "inputTokens": self.input_tokens,
                                          "outputTokens": self.output_tokens, "latencyMs": self.latency_ms})


@dataclass
class ModelResponse:
    """A successful model response kept for debugging (the last 5 are kept)."""

    id: str
    kind: str
    response: str
    created_at: str

    @classmethod
    def from_record(cls, record: Record) -> ModelResponse:
        return cls(record["id"], record["kind"], record["response"], record["createdAt"])

    def to_record(self) -> Record:
        return {"id": self.id, "kind": self.kind, "response": self.response, "createdAt": self.created_at}

    @property
    def usage(self) -> ModelCallUsage | None:
        """The usage a model adapter recorded in the response's first line; None for any other response."""
        first, _newline, _rest = self.response.partition("\n")
        if not first.startswith(USAGE_HEADER):
            return None
        try:
            data = json.loads(first[len(USAGE_HEADER):])
            latency = data["latencyMs"]
            tokens = [data.get("inputTokens"), data.get("outputTokens")]
        except (ValueError, KeyError, TypeError):
            return None
        if not isinstance(latency, int) or not all(value is None or isinstance(value, int) for value in tokens):
            return None
        return ModelCallUsage(str(data.get("model", "")), tokens[0], tokens[1], latency)


SECTION_MODELS: dict[str, type] = {
    "openTail": Message,
    "blocks": Block,
    "events": Event,
    "elements": Element,
    "extractionJobs": ExtractionJob,
    "elementProjectionJobs": ElementProjectionJob,
    "usageReceipts": UsageReceipt,
    "ingestionReceipts": IngestionReceipt,
    "successfulModelResponses": ModelResponse,
}


@dataclass
class BlockContextEntry:
    """One block as `get_block_context` / `expand_block` present it, rendered at its current level."""

    id: str
    thread_id: str | None
    turn_range: tuple[int, int]
    age: int
    level: int
    label: str
    content: str
