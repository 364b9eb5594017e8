"""Snapshot upgrade and validation: any v1–v7 snapshot dict in, a validated v7 snapshot dict out.

A snapshot is the reference's `exportSnapshot()` object (camelCase). Upgrades follow the reference and the
v6/v7 schema notes: v1 gains elements/projection jobs/ingestion receipts, v2 gains ingestion receipts, v1–v5
gain `blockDecayLambda: 0.3` and per-thread `pointerAnchorBlockPosition` (from `pointerAnchorTurn`), v1–v6 gain
`lastLiftedBy: null`. Validation is the reference's shape checks (§8.7), the v6/v7 checks, field types
(finite numbers, no NaN), and the cross-reference checks the reference runs when it restores a snapshot.
Every failure raises `SnapshotError` naming the section, record id and field.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable
from typing import Any

from stratagate.errors import SnapshotError
from stratagate.validation import MAX_MESSAGE_LENGTH

SCHEMA_VERSION = 7
DEFAULT_BLOCK_DECAY_LAMBDA = 0.3
MODEL_RESPONSE_HISTORY_LIMIT = 5
MAX_SAFE_INTEGER = 2**53 - 1

ARRAY_SECTIONS = (
    "openTail", "blocks", "events", "elements", "extractionJobs", "elementProjectionJobs", "usageReceipts",
    "ingestionReceipts",
)
LIFT_SOURCES = ("user", "agent")

Snapshot = dict[str, Any]
_TEMPORAL_TEXT = ("mentionedAt", "happenedStart", "happenedEnd", "eventType", "originalText", "threadId")
_TEMPORAL_LISTS = ("participants", "supersedesEventIds")


def empty_snapshot(block_turn_size: int = 12, block_decay_lambda: float = DEFAULT_BLOCK_DECAY_LAMBDA) -> Snapshot:
    return {
        "schemaVersion": SCHEMA_VERSION, "currentTurn": 0, "blockTurnSize": block_turn_size,
        "blockDecayLambda": block_decay_lambda, **{section: [] for section in ARRAY_SECTIONS},
        "successfulModelResponses": [],
    }


def normalize_snapshot(data: Any, *, check_references: bool = True) -> Snapshot:
    """Upgrade a v1–v7 snapshot to v7 and validate it. The input is not modified."""
    if not isinstance(data, dict):
        raise SnapshotError(f"Invalid StrataGate snapshot: expected an object, got {type(data).__name__}")
    version = check_version(data.get("schemaVersion"))
    snapshot: Snapshot = copy.deepcopy(data)
    check_counters(snapshot)
    if version == 1:
        for section in ("elements", "elementProjectionJobs", "ingestionReceipts"):
            snapshot.setdefault(section, [])
        for receipt in snapshot.get("usageReceipts") or []:
            if isinstance(receipt, dict):
                receipt.setdefault("elementIds", [])
    elif version == 2:
        snapshot.setdefault("ingestionReceipts", [])
    for section in ARRAY_SECTIONS:
        if not isinstance(snapshot.get(section), list):
            raise SnapshotError(f"Invalid StrataGate snapshot: {section} must be an array")
        for index, record in enumerate(snapshot[section]):
            if not isinstance(record, dict):
                raise SnapshotError(f"Invalid StrataGate snapshot: {section}[{index}] must be an object")
    responses = snapshot.get("successfulModelResponses", [])
    if not isinstance(responses, list):
        raise SnapshotError("Invalid StrataGate snapshot: successfulModelResponses must be an array")
    snapshot["successfulModelResponses"] = responses[-MODEL_RESPONSE_HISTORY_LIMIT:]
    _drop_empty_thread_ids(snapshot)
    if version < 6:
        snapshot["blockDecayLambda"] = DEFAULT_BLOCK_DECAY_LAMBDA
        _convert_anchor_turns(snapshot["blocks"])
    if version < 7:
        for block in snapshot["blocks"]:
            block["lastLiftedBy"] = None
    snapshot["schemaVersion"] = SCHEMA_VERSION
    _validate_shapes(snapshot)
    if check_references:
        validate_references(snapshot)
    return snapshot


def check_version(version: Any) -> int:
    if not _is_int(version) or not 1 <= version <= SCHEMA_VERSION:
        raise SnapshotError(f"Unsupported StrataGate snapshot schema: {version!r}")
    return version


def check_counters(snapshot: Snapshot) -> None:
    _require_int(snapshot, "currentTurn", "snapshot", minimum=0)
    _require_int(snapshot, "blockTurnSize", "snapshot", minimum=1)


def _drop_empty_thread_ids(snapshot: Snapshot) -> None:
    for section in ("openTail", "blocks"):
        for record in snapshot[section]:
            drop_empty_thread_ids(section, record)


def drop_empty_thread_ids(section: str, record: Any) -> None:
    """An empty thread id means 'no thread', as the reference's loader reads it (a block's and its messages')."""
    messages = record.get("l5Raw") if section == "blocks" and isinstance(record, dict) else None
    for item in [record, *(messages if isinstance(messages, list) else [])]:
        if isinstance(item, dict) and item.get("threadId") in ("", None):
            item.pop("threadId", None)


def _convert_anchor_turns(blocks: list[dict[str, Any]]) -> None:
    """v5 → v6: a turn anchor becomes the count of same-thread blocks ending at or before it (at least 1)."""
    for index, block in enumerate(blocks):
        if "pointerAnchorBlockPosition" in block and "pointerAnchorTurn" not in block:
            continue
        anchor_turn = block.pop("pointerAnchorTurn", None)
        if not is_number(anchor_turn):
            raise SnapshotError(f"Invalid StrataGate snapshot: blocks[{index}] ({block.get('id')!r}) pointerAnchorTurn must be a number")
        thread = block.get("threadId")
        count = sum(
            1 for other in blocks
            if other.get("threadId") == thread and is_number(other.get("endTurn")) and other["endTurn"] <= anchor_turn
        )
        block["pointerAnchorBlockPosition"] = max(1, count)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _where(section: str, record: dict[str, Any]) -> str:
    key = "blockId" if section == "extractionJobs" else "id"
    return f"{section} record {record.get(key)!r}"


def _require_int(record: dict[str, Any], field: str, where: str, *, minimum: int) -> None:
    value = record.get(field)
    if not _is_int(value) or not minimum <= value <= MAX_SAFE_INTEGER:
        raise SnapshotError(f"Invalid StrataGate snapshot: {where} {field} must be an integer >= {minimum}, got {value!r}")


def _require_str(record: dict[str, Any], field: str, where: str, *, optional: bool = False, nonempty: bool = False) -> None:
    value = record.get(field)
    if value is None and optional:
        return
    if not isinstance(value, str) or (nonempty and not value):
        raise SnapshotError(f"Invalid StrataGate snapshot: {where} {field} must be a {'non-empty ' if nonempty else ''}string, got {value!r}")


def _require_str_list(record: dict[str, Any], field: str, where: str) -> None:
    value = record.get(field)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise SnapshotError(f"Invalid StrataGate snapshot: {where} {field} must be an array of strings")


def _require_number(record: dict[str, Any], field: str, where: str, *, optional: bool = False) -> None:
    value = record.get(field)
    if value is None and optional:
        return
    if not is_number(value):
        raise SnapshotError(f"Invalid StrataGate snapshot: {where} {field} must be a finite number, got {value!r}")


def _require_choice(record: dict[str, Any], field: str, where: str, choices: Iterable[str]) -> None:
    if record.get(field) not in tuple(choices):
        raise SnapshotError(f"Invalid StrataGate snapshot: {where} {field} must be one of {', '.join(choices)}, got {record.get(field)!r}")


def validate_section(section: str, records: list[Any]) -> None:
    """Check the records of one section (as a backend reads them) with the snapshot's shape rules."""
    snapshot: Snapshot = {name: [] for name in (*ARRAY_SECTIONS, "successfulModelResponses")}
    snapshot["blockDecayLambda"] = DEFAULT_BLOCK_DECAY_LAMBDA
    snapshot[section] = records
    _validate_shapes(snapshot)


def _validate_message(message: dict[str, Any], where: str) -> None:
    if not isinstance(message, dict):
        raise SnapshotError(f"Invalid StrataGate snapshot: {where} message must be an object")
    inner = f"{where} message {message.get('id')!r}"
    _require_str(message, "id", inner, nonempty=True)
    _require_str(message, "role", inner, nonempty=True)
    _require_str(message, "content", inner)
    if len(message["content"]) > MAX_MESSAGE_LENGTH:  # append_turn refuses such a message too
        raise SnapshotError(f"Invalid StrataGate snapshot: {inner} content is longer than {MAX_MESSAGE_LENGTH} characters")
    _require_str(message, "createdAt", inner)
    _require_str(message, "threadId", inner, optional=True)
    calls = message.get("toolCalls")
    if calls is not None and (not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls)):
        raise SnapshotError(f"Invalid StrataGate snapshot: {inner} toolCalls must be an array of {{name, arguments?, result?}}")


def _validate_weight(record: dict[str, Any], where: str) -> None:
    weight = record.get("weight")
    if not isinstance(weight, dict):
        raise SnapshotError(f"Invalid StrataGate snapshot: {where} weight must be an object")
    _require_int(weight, "mentionCount", f"{where} weight", minimum=0)
    _require_int(weight, "lastAdoptedTurn", f"{where} weight", minimum=0)
    _require_str(weight, "lastRetrievedAt", f"{where} weight", optional=True)
    if not isinstance(weight.get("pinned"), bool):
        raise SnapshotError(f"Invalid StrataGate snapshot: {where} weight pinned must be a boolean")
    _require_number(weight, "floorWeight", f"{where} weight")
    _require_number(weight, "forcedCap", f"{where} weight", optional=True)


_EVENT_TEXT = ("title", "summary", "narrative", "sourceBlockId", "scope", "criticality", "createdAt", "updatedAt")
_EVENT_LISTS = ("tags", "quotes", "sourceMessageIds")
_EVENT_STATUSES = ("active", "superseded", "forgotten", "archived")


def _event_well_formed(event: Any) -> bool:
    """True only for an event that passes every check of `_validate_shapes`, tested without naming anything
    (reads check every event they return); False sends it through those checks, which name what is wrong."""
    if type(event) is not dict:
        return False
    get = event.get
    temporal, weight = get("temporal"), get("weight")
    if type(temporal) is not dict or type(weight) is not dict:
        return False
    return (
        type(get("id")) is str and get("id") != ""
        and set(map(type, map(get, _EVENT_TEXT))) == _TEXT
        and get("status") in _EVENT_STATUSES and type(get("status")) is str
        and type(get("supersededBy")) in _TEXT_OR_NONE
        and _is_str_list(get("tags")) and _is_str_list(get("quotes")) and _is_str_list(get("sourceMessageIds"))
        and set(map(type, map(temporal.get, _TEMPORAL_TEXT))) <= _TEXT_OR_NONE
        and all(temporal.get(field) is None or _is_str_list(temporal[field]) for field in _TEMPORAL_LISTS)
        and is_number(get("confidence"))
        and _is_count(weight.get("mentionCount")) and _is_count(weight.get("lastAdoptedTurn"))
        and type(weight.get("lastRetrievedAt")) in _TEXT_OR_NONE
        and type(weight.get("pinned")) is bool
        and is_number(weight.get("floorWeight"))
        and (weight.get("forcedCap") is None or is_number(weight.get("forcedCap")))
    )


_TEXT = {str}
_TEXT_OR_NONE = {str, type(None)}


def _is_str_list(value: Any) -> bool:
    return type(value) is list and set(map(type, value)) <= _TEXT


def _is_count(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def check_block_decay_lambda(value: Any) -> None:
    if not is_number(value) or value < 0:
        raise SnapshotError("Invalid StrataGate snapshot: blockDecayLambda must be a non-negative finite number")


def _validate_shapes(snapshot: Snapshot) -> None:
    check_block_decay_lambda(snapshot.get("blockDecayLambda"))
    for message in snapshot["openTail"]:
        _validate_message(message, "openTail")
    for block in snapshot["blocks"]:
        where = _where("blocks", block)
        _require_str(block, "id", where, nonempty=True)
        _require_str(block, "threadId", where, optional=True)
        for field in ("sequence", "startTurn", "endTurn", "pointerCurrentLevel", "pointerAnchorLevel"):
            _require_int(block, field, where, minimum=0)
        position = block.get("pointerAnchorBlockPosition")
        if not _is_int(position) or not 1 <= position <= MAX_SAFE_INTEGER:
            raise SnapshotError(f"Invalid StrataGate snapshot: {where} pointerAnchorBlockPosition must be a positive integer")
        if "lastLiftedBy" not in block or block["lastLiftedBy"] not in (*LIFT_SOURCES, None):
            raise SnapshotError(f"Invalid StrataGate snapshot: {where} lastLiftedBy must be user, agent, or null")
        for field in ("createdAt", "l0Title", "l1Summary", "l3Condensed", "l4Readable"):
            _require_str(block, field, where)
        _require_str(block, "lastLiftedAt", where, optional=True)
        _require_str_list(block, "l0Tags", where)
        _require_str_list(block, "l2Keypoints", where)
        if not isinstance(block.get("shouldExtract"), bool):
            raise SnapshotError(f"Invalid StrataGate snapshot: {where} shouldExtract must be a boolean")
        if not isinstance(block.get("l5Raw"), list):
            raise SnapshotError(f"Invalid StrataGate snapshot: {where} l5Raw must be an array")
        for message in block["l5Raw"]:
            _validate_message(message, where)
    for event in snapshot["events"]:
        if _event_well_formed(event):
            continue  # the checks below would all pass: spare their messages' formatting
        where = _where("events", event)
        _require_str(event, "id", where, nonempty=True)
        for field in ("title", "summary", "narrative", "sourceBlockId", "scope", "criticality", "status", "createdAt", "updatedAt"):
            _require_str(event, field, where)
        _require_str(event, "supersededBy", where, optional=True)
        for field in ("tags", "quotes", "sourceMessageIds"):
            _require_str_list(event, field, where)
        if not isinstance(event.get("temporal"), dict):
            raise SnapshotError(f"Invalid StrataGate snapshot: {where} temporal must be an object")
        _require_choice(event, "status", where, ("active", "superseded", "forgotten", "archived"))
        temporal = event["temporal"]
        for field in _TEMPORAL_TEXT:
            _require_str(temporal, field, f"{where} temporal", optional=True)
        for field in _TEMPORAL_LISTS:
            if temporal.get(field) is not None:
                _require_str_list(temporal, field, f"{where} temporal")
        _require_number(event, "confidence", where)
        _validate_weight(event, where)
    for element in snapshot["elements"]:
        where = _where("elements", element)
        _require_str(element, "id", where, nonempty=True)
        for field in ("name", "type", "currentState", "createdAt", "updatedAt"):
            _require_str(element, field, where)
        for field in ("aliases", "sourceEventIds"):
            _require_str_list(element, field, where)
        if "sourceMessageIds" in element:
            _require_str_list(element, "sourceMessageIds", where)
        _validate_weight(element, where)
        if not isinstance(element.get("facts"), list):
            raise SnapshotError(f"Invalid StrataGate snapshot: {where} facts must be an array")
        for fact in element["facts"]:
            if not isinstance(fact, dict):
                raise SnapshotError(f"Invalid StrataGate snapshot: {where} fact must be an object")
            fact_where = f"{where} fact {fact.get('id')!r}"
            for field in ("id", "key", "createdAt", "updatedAt"):
                _require_str(fact, field, fact_where)
            _require_choice(fact, "mode", fact_where, ("state", "set", "relation"))
            _require_choice(fact, "status", fact_where, ("active", "superseded", "disputed"))
            value = fact.get("value")
            if not isinstance(value, str) and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise SnapshotError(f"Invalid StrataGate snapshot: {fact_where} value must be a string or an array of strings")
            _require_str(fact, "validFrom", fact_where, optional=True)
            _require_str(fact, "validTo", fact_where, optional=True)
            _require_number(fact, "confidence", fact_where, optional=True)
            _require_str_list(fact, "sourceEventIds", fact_where)
    for job in snapshot["extractionJobs"]:
        where = _where("extractionJobs", job)
        _require_str(job, "blockId", where, nonempty=True)
        _require_choice(job, "status", where, ("running", "succeeded", "failed", "skipped"))
        _require_int(job, "attempts", where, minimum=0)
        _require_str(job, "lastError", where, optional=True)
        _require_str(job, "updatedAt", where)
    for job in snapshot["elementProjectionJobs"]:
        where = _where("elementProjectionJobs", job)
        _require_str(job, "id", where, nonempty=True)
        _require_choice(job, "status", where, ("pending", "running", "completed", "failed"))
        _require_int(job, "attempts", where, minimum=0)
        _require_str_list(job, "sourceEventIds", where)
        _require_str_list(job, "elementIds", where)
        for field in ("reason", "lastError"):
            _require_str(job, field, where, optional=True)
    for receipt in snapshot["usageReceipts"]:
        where = _where("usageReceipts", receipt)
        _require_str(receipt, "id", where, nonempty=True)
        _require_str_list(receipt, "eventIds", where)
        _require_str_list(receipt, "elementIds", where)
        if receipt.get("audit") is not None and not isinstance(receipt["audit"], dict):
            raise SnapshotError(f"Invalid StrataGate snapshot: {where} audit must be an object")
    for receipt in snapshot["ingestionReceipts"]:
        _require_str(receipt, "id", _where("ingestionReceipts", receipt), nonempty=True)
    for response in snapshot["successfulModelResponses"]:
        if not isinstance(response, dict):
            raise SnapshotError("Invalid StrataGate snapshot: successfulModelResponses items must be objects")
        _require_str(response, "id", "successfulModelResponses record", nonempty=True)


def _unique(ids: Iterable[str], what: str) -> set[str]:
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            raise SnapshotError(f"Invalid StrataGate snapshot: duplicate {what} id {item!r}")
        seen.add(item)
    return seen


def validate_references(snapshot: Snapshot) -> None:
    """The reference's `validateReferences`: unique ids and every provenance link resolving."""
    references = References()
    for section in References.SECTIONS:
        for record in snapshot[section]:
            references.add(section, record)
    references.check()


class References:
    """What `validate_references` checks, gathered a (shape-checked) record at a time keeping only ids and
    links, so a snapshot streamed from a file is checked without holding it; `check()` raises the first broken
    rule, in the reference's order."""

    SECTIONS = ("openTail", "blocks", "events", "extractionJobs", "elements", "elementProjectionJobs")

    def __init__(self) -> None:
        self._tail: list[str] = []
        self._blocks: list[tuple[str, tuple[str, ...]]] = []
        self._events: list[tuple[str, str, tuple[str, ...]]] = []
        self._jobs: list[str] = []
        self._elements: list[tuple[str, tuple[str, ...], tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]] = []
        self._projections: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []

    def add(self, section: str, record: dict[str, Any]) -> None:
        if section == "openTail":
            self._tail.append(record["id"])
        elif section == "blocks":
            self._blocks.append((record["id"], tuple(message["id"] for message in record["l5Raw"])))
        elif section == "events":
            self._events.append((record["id"], record["sourceBlockId"], tuple(record["sourceMessageIds"])))
        elif section == "extractionJobs":
            self._jobs.append(record["blockId"])
        elif section == "elements":
            facts = tuple((fact["id"], tuple(fact["sourceEventIds"])) for fact in record["facts"])
            self._elements.append((record["id"], tuple(record["sourceEventIds"]),
                                   tuple(record.get("sourceMessageIds", [])), facts))
        elif section == "elementProjectionJobs":
            self._projections.append((record["id"], tuple(record["sourceEventIds"]), tuple(record["elementIds"])))

    def check(self) -> None:
        block_messages = {block_id: set(messages) for block_id, messages in self._blocks}
        _unique((block_id for block_id, _messages in self._blocks), "block")
        _unique(self._tail + [message for _block, messages in self._blocks for message in messages], "message")
        event_ids = _unique((event_id for event_id, _block, _messages in self._events), "event")
        event_messages: dict[str, tuple[str, ...]] = {}
        for event_id, block_id, message_ids in self._events:
            messages = block_messages.get(block_id)
            if messages is None:
                raise SnapshotError(f"Invalid StrataGate snapshot: event {event_id!r} sourceBlockId {block_id!r} does not exist")
            for message_id in message_ids:
                if message_id not in messages:
                    raise SnapshotError(f"Invalid StrataGate snapshot: event {event_id!r} sourceMessageIds {message_id!r} is not in block {block_id!r}")
            event_messages[event_id] = message_ids
        for block_id in self._jobs:
            if block_id not in block_messages:
                raise SnapshotError(f"Invalid StrataGate snapshot: extraction job block {block_id!r} does not exist")
        element_ids = _unique((element[0] for element in self._elements), "element")
        _unique((fact_id for element in self._elements for fact_id, _events in element[3]), "fact")
        for element_id, source_event_ids, source_message_ids, facts in self._elements:
            allowed_messages: set[str] = set()
            for event_id in source_event_ids:
                if event_id not in event_ids:
                    raise SnapshotError(f"Invalid StrataGate snapshot: element {element_id!r} sourceEventIds {event_id!r} does not exist")
                allowed_messages.update(event_messages[event_id])
            for message_id in source_message_ids:
                if message_id not in allowed_messages:
                    raise SnapshotError(f"Invalid StrataGate snapshot: element {element_id!r} sourceMessageIds {message_id!r} is not cited by its events")
            for fact_id, fact_events in facts:
                for event_id in fact_events:
                    if event_id not in event_ids:
                        raise SnapshotError(f"Invalid StrataGate snapshot: fact {fact_id!r} sourceEventIds {event_id!r} does not exist")
        for job_id, source_event_ids, job_element_ids in self._projections:
            for event_id in source_event_ids:
                if event_id not in event_ids:
                    raise SnapshotError(f"Invalid StrataGate snapshot: projection job {job_id!r} sourceEventIds {event_id!r} does not exist")
            for element_id in job_element_ids:
                if element_id not in element_ids:
                    raise SnapshotError(f"Invalid StrataGate snapshot: projection job {job_id!r} elementIds {element_id!r} does not exist")
