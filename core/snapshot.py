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
    version = data.get("schemaVersion")
    if not _is_int(version) or not 1 <= version <= SCHEMA_VERSION:
        raise SnapshotError(f"Unsupported StrataGate snapshot schema: {version!r}")
    snapshot: Snapshot = copy.deepcopy(data)
    _require_int(snapshot, "currentTurn", "snapshot", minimum=0)
    _require_int(snapshot, "blockTurnSize", "snapshot", minimum=1)
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


def _drop_empty_thread_ids(snapshot: Snapshot) -> None:
    """An empty thread id means 'no thread', as the reference's loader reads it."""
    messages = list(snapshot["openTail"])
    for block in snapshot["blocks"]:
        if isinstance(block.get("l5Raw"), list):
            messages.extend(block["l5Raw"])
    for record in [*snapshot["blocks"], *messages]:
        if isinstance(record, dict) and record.get("threadId") in ("", None):
            record.pop("threadId", None)


def _convert_anchor_turns(blocks: list[dict[str, Any]]) -> None:
    """v5 → v6: a turn anchor becomes the count of same-thread blocks ending at or before it (at least 1)."""
    for index, block in enumerate(blocks):
        if "pointerAnchorBlockPosition" in block and "pointerAnchorTurn" not in block:
            continue
        anchor_turn = block.pop("pointerAnchorTurn", None)
        if not _is_number(anchor_turn):
            raise SnapshotError(f"Invalid StrataGate snapshot: blocks[{index}] ({block.get('id')!r}) pointerAnchorTurn must be a number")
        thread = block.get("threadId")
        count = sum(
            1 for other in blocks
            if other.get("threadId") == thread and _is_number(other.get("endTurn")) and other["endTurn"] <= anchor_turn
        )
        block["pointerAnchorBlockPosition"] = max(1, count)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
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
    if not _is_number(value):
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


def _validate_shapes(snapshot: Snapshot) -> None:
    lam = snapshot.get("blockDecayLambda")
    if not _is_number(lam) or lam < 0:
        raise SnapshotError("Invalid StrataGate snapshot: blockDecayLambda must be a non-negative finite number")
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
    block_messages = {block["id"]: {message["id"] for message in block["l5Raw"]} for block in snapshot["blocks"]}
    _unique((block["id"] for block in snapshot["blocks"]), "block")
    _unique(
        [message["id"] for message in snapshot["openTail"]]
        + [message["id"] for block in snapshot["blocks"] for message in block["l5Raw"]],
        "message",
    )
    event_ids = _unique((event["id"] for event in snapshot["events"]), "event")
    event_messages: dict[str, set[str]] = {}
    for event in snapshot["events"]:
        messages = block_messages.get(event["sourceBlockId"])
        if messages is None:
            raise SnapshotError(f"Invalid StrataGate snapshot: event {event['id']!r} sourceBlockId {event['sourceBlockId']!r} does not exist")
        for message_id in event["sourceMessageIds"]:
            if message_id not in messages:
                raise SnapshotError(f"Invalid StrataGate snapshot: event {event['id']!r} sourceMessageIds {message_id!r} is not in block {event['sourceBlockId']!r}")
        event_messages[event["id"]] = set(event["sourceMessageIds"])
    for job in snapshot["extractionJobs"]:
        if job["blockId"] not in block_messages:
            raise SnapshotError(f"Invalid StrataGate snapshot: extraction job block {job['blockId']!r} does not exist")
    element_ids = _unique((element["id"] for element in snapshot["elements"]), "element")
    _unique((fact["id"] for element in snapshot["elements"] for fact in element["facts"]), "fact")
    for element in snapshot["elements"]:
        allowed_messages: set[str] = set()
        for event_id in element["sourceEventIds"]:
            if event_id not in event_ids:
                raise SnapshotError(f"Invalid StrataGate snapshot: element {element['id']!r} sourceEventIds {event_id!r} does not exist")
            allowed_messages |= event_messages[event_id]
        for message_id in element.get("sourceMessageIds", []):
            if message_id not in allowed_messages:
                raise SnapshotError(f"Invalid StrataGate snapshot: element {element['id']!r} sourceMessageIds {message_id!r} is not cited by its events")
        for fact in element["facts"]:
            for event_id in fact["sourceEventIds"]:
                if event_id not in event_ids:
                    raise SnapshotError(f"Invalid StrataGate snapshot: fact {fact['id']!r} sourceEventIds {event_id!r} does not exist")
    for job in snapshot["elementProjectionJobs"]:
        for event_id in job["sourceEventIds"]:
            if event_id not in event_ids:
                raise SnapshotError(f"Invalid StrataGate snapshot: projection job {job['id']!r} sourceEventIds {event_id!r} does not exist")
        for element_id in job["elementIds"]:
            if element_id not in element_ids:
                raise SnapshotError(f"Invalid StrataGate snapshot: projection job {job['id']!r} elementIds {element_id!r} does not exist")
