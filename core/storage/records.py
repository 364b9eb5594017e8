"""Rows ↔ snapshot records, following the reference's serialization rules (spec §8.3).

JSON columns hold compact `JSON.stringify`-style text (`,`/`:` separators, non-ASCII unescaped); booleans are
0/1; optional values are NULL, and a NULL or empty `thread_id`/`valid_from`/`valid_to` means the key is absent.
Record keys come out in the order the reference's snapshots use, and REAL columns that hold whole numbers come
back as ints (as JavaScript prints them), so an exported snapshot matches the reference's JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stratagate.errors import SnapshotError

Record = dict[str, Any]
Row = Mapping[str, Any]


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_scan_json = json.JSONDecoder().scan_once
"""The scanner `json.loads` runs (the default decoder's), called as `JSONDecoder.decode` calls it."""


def load_json(row: Row, column: str) -> Any:
    """A JSON column's value; damaged text (malformed, or nested too deep to read) is a SnapshotError naming
    the row and column."""
    text = row[column]
    try:
        # `json.loads`'s own steps for text that is one JSON value without surrounding whitespace (what this
        # engine and the reference write), at a third of its cost: a search decodes three columns per hit.
        value, end = _scan_json(text, 0)
        if end == len(text):
            return value
    except Exception:  # anything else is `json.loads`'s to answer, or to refuse, as before
        pass
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        key = row.get("id", row.get("block_id"))
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise SnapshotError(f"row {key!r}: column {column} is not valid JSON ({reason})") from None


def number(value: float | int | None) -> float | int | None:
    """A REAL read back as JavaScript would print it: 1.0 → 1."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _optional_text(record: Record, row: Row, key: str, column: str) -> None:
    if row[column]:
        record[key] = row[column]


# -- memory_spaces ---------------------------------------------------------------------------------------

SPACE_COLUMNS = {
    "schemaVersion": "schema_version",
    "revision": "revision",
    "currentTurn": "current_turn",
    "blockTurnSize": "block_turn_size",
    "blockDecayLambda": "block_decay_lambda",
    "createdAt": "created_at",
    "updatedAt": "updated_at",
}


def space_record(row: Row) -> Record:
    record = {key: row[column] for key, column in SPACE_COLUMNS.items()}
    record["blockDecayLambda"] = number(record["blockDecayLambda"])
    return record


def space_values(space: Record) -> dict[str, Any]:
    """Column values for the space fields present in `space` (revision excluded: the backend owns it)."""
    return {
        column: space[key] for key, column in SPACE_COLUMNS.items() if key in space and key != "revision"
    }


# -- messages (open tail and a block's l5Raw) ------------------------------------------------------------


def message_row(namespace: str, message: Record, block_id: str | None, position: int) -> dict[str, Any]:
    tool_calls = message.get("toolCalls")
    return {
        "namespace": namespace,
        "id": message["id"],
        "block_id": block_id,
        "thread_id": message.get("threadId"),
        "position": position,
        "role": message["role"],
        "content": message["content"],
        "created_at": message["createdAt"],
        "tool_calls_json": None if tool_calls is None else dumps(tool_calls),
    }


def message_record(row: Row) -> Record:
    record: Record = {
        "id": row["id"],
        "role": row["role"],
        "content": row["content"],
        "createdAt": row["created_at"],
    }
    _optional_text(record, row, "threadId", "thread_id")
    if row["tool_calls_json"] is not None:
        record["toolCalls"] = load_json(row, "tool_calls_json")
    return record


# -- blocks ----------------------------------------------------------------------------------------------


def block_row(namespace: str, block: Record) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "id": block["id"],
        "thread_id": block.get("threadId"),
        "sequence": block["sequence"],
        "start_turn": block["startTurn"],
        "end_turn": block["endTurn"],
        "created_at": block["createdAt"],
        "should_extract": int(bool(block["shouldExtract"])),
        "l0_title": block["l0Title"],
        "l0_tags_json": dumps(block["l0Tags"]),
        "l1_summary": block["l1Summary"],
        "l2_keypoints_json": dumps(block["l2Keypoints"]),
        "l3_condensed": block["l3Condensed"],
        "l4_readable": block["l4Readable"],
        "pointer_current_level": block["pointerCurrentLevel"],
        "pointer_anchor_level": block["pointerAnchorLevel"],
        "pointer_anchor_block_position": block["pointerAnchorBlockPosition"],
        "last_lifted_at": block.get("lastLiftedAt"),
        "last_lifted_by": block.get("lastLiftedBy"),
    }


def block_record(row: Row, l5_raw: list[Record]) -> Record:
    record: Record = {"id": row["id"]}
    _optional_text(record, row, "threadId", "thread_id")
    record.update(
        {
            "sequence": row["sequence"],
            "startTurn": row["start_turn"],
            "endTurn": row["end_turn"],
            "createdAt": row["created_at"],
            "shouldExtract": bool(row["should_extract"]),
            "l0Title": row["l0_title"],
            "l0Tags": load_json(row, "l0_tags_json"),
            "l1Summary": row["l1_summary"],
            "l2Keypoints": load_json(row, "l2_keypoints_json"),
            "l3Condensed": row["l3_condensed"],
            "l4Readable": row["l4_readable"],
            "l5Raw": l5_raw,
            "pointerCurrentLevel": row["pointer_current_level"],
            "pointerAnchorLevel": row["pointer_anchor_level"],
            "pointerAnchorBlockPosition": row["pointer_anchor_block_position"],
            "lastLiftedAt": row["last_lifted_at"],
            "lastLiftedBy": row["last_lifted_by"],
        }
    )
    return record


# -- events ----------------------------------------------------------------------------------------------


def event_row(namespace: str, event: Record, position: int) -> dict[str, Any]:
    weight = event["weight"]
    return {
        "namespace": namespace,
        "id": event["id"],
        "position": position,
        "title": event["title"],
        "summary": event["summary"],
        "narrative": event["narrative"],
        "tags_json": dumps(event["tags"]),
        "quotes_json": dumps(event["quotes"]),
        "source_block_id": event["sourceBlockId"],
        "temporal_json": dumps(event["temporal"]),
        "scope": event["scope"],
        "criticality": event["criticality"],
        "confidence": event["confidence"],
        "status": event["status"],
        "superseded_by": event.get("supersededBy"),
        **weight_columns(weight),
        "created_at": event["createdAt"],
        "updated_at": event["updatedAt"],
    }


def weight_columns(weight: Record) -> dict[str, Any]:
    return {
        "mention_count": weight["mentionCount"],
        "last_adopted_turn": weight["lastAdoptedTurn"],
        "last_retrieved_at": weight.get("lastRetrievedAt"),
        "pinned": int(bool(weight["pinned"])),
        "floor_weight": weight["floorWeight"],
        "forced_cap": weight.get("forcedCap"),
    }


def weight_record(row: Row) -> Record:
    return {
        "mentionCount": row["mention_count"],
        "lastAdoptedTurn": row["last_adopted_turn"],
        "lastRetrievedAt": row["last_retrieved_at"],
        "pinned": bool(row["pinned"]),
        "floorWeight": number(row["floor_weight"]),
        "forcedCap": number(row["forced_cap"]),
    }


def event_record(row: Row, source_message_ids: list[str]) -> Record:
    return {
        "id": row["id"],
        "title": row["title"],
        "summary": row["summary"],
        "narrative": row["narrative"],
        "tags": load_json(row, "tags_json"),
        "quotes": load_json(row, "quotes_json"),
        "sourceMessageIds": source_message_ids,
        "sourceBlockId": row["source_block_id"],
        "temporal": load_json(row, "temporal_json"),
        "scope": row["scope"],
        "criticality": row["criticality"],
        "confidence": number(row["confidence"]),
        "status": row["status"],
        "supersededBy": row["superseded_by"],
        "weight": weight_record(row),
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }


# -- elements and their facts ----------------------------------------------------------------------------


def element_row(namespace: str, element: Record, position: int) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "id": element["id"],
        "position": position,
        "name": element["name"],
        "type": element["type"],
        "aliases_json": dumps(element["aliases"]),
        "current_state": element["currentState"],
        **weight_columns(element["weight"]),
        "created_at": element["createdAt"],
        "updated_at": element["updatedAt"],
    }


def element_record(
    row: Row, facts: list[Record], source_event_ids: list[str], source_message_ids: list[str]
) -> Record:
    return {
        "id": row["id"],
        "name": row["name"],
        "type": row["type"],
        "aliases": load_json(row, "aliases_json"),
        "currentState": row["current_state"],
        "facts": facts,
        "sourceEventIds": source_event_ids,
        "sourceMessageIds": source_message_ids,
        "weight": weight_record(row),
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }


def fact_row(namespace: str, fact: Record, element_id: str, position: int) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "id": fact["id"],
        "element_id": element_id,
        "position": position,
        "key": fact["key"],
        "mode": fact["mode"],
        "value_json": dumps(fact["value"]),
        "valid_from": fact.get("validFrom"),
        "valid_to": fact.get("validTo"),
        "confidence": fact.get("confidence"),
        "status": fact["status"],
        "created_at": fact["createdAt"],
        "updated_at": fact["updatedAt"],
    }


def fact_record(row: Row, source_event_ids: list[str]) -> Record:
    record: Record = {
        "id": row["id"],
        "key": row["key"],
        "mode": row["mode"],
        "value": load_json(row, "value_json"),
    }
    _optional_text(record, row, "validFrom", "valid_from")
    _optional_text(record, row, "validTo", "valid_to")
    record["sourceEventIds"] = source_event_ids
    if row["confidence"] is not None:
        record["confidence"] = number(row["confidence"])
    record.update({"status": row["status"], "createdAt": row["created_at"], "updatedAt": row["updated_at"]})
    return record


# -- jobs, receipts, model responses ---------------------------------------------------------------------


def extraction_job_row(namespace: str, job: Record) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "block_id": job["blockId"],
        "status": job["status"],
        "attempts": job["attempts"],
        "last_error": job.get("lastError"),
        "updated_at": job["updatedAt"],
    }


def extraction_job_record(row: Row) -> Record:
    return {
        "blockId": row["block_id"],
        "status": row["status"],
        "attempts": row["attempts"],
        "lastError": row["last_error"],
        "updatedAt": row["updated_at"],
    }


def projection_job_row(namespace: str, job: Record) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "id": job["id"],
        "source_event_ids_json": dumps(job["sourceEventIds"]),
        "status": job["status"],
        "attempts": job["attempts"],
        "element_ids_json": dumps(job.get("elementIds", [])),
        "reason": job.get("reason"),
        "last_error": job.get("lastError"),
        "created_at": job["createdAt"],
        "updated_at": job["updatedAt"],
    }


def projection_job_record(row: Row) -> Record:
    return {
        "id": row["id"],
        "sourceEventIds": load_json(row, "source_event_ids_json"),
        "status": row["status"],
        "attempts": row["attempts"],
        "elementIds": load_json(row, "element_ids_json"),
        "reason": row["reason"],
        "lastError": row["last_error"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
    }


def usage_receipt_row(namespace: str, receipt: Record) -> dict[str, Any]:
    audit = receipt.get("audit")
    return {
        "namespace": namespace,
        "receipt_id": receipt["id"],
        "event_ids_json": dumps(receipt["eventIds"]),
        "element_ids_json": dumps(receipt.get("elementIds", [])),
        "audit_json": dumps(audit) if audit else "{}",
        "created_at": receipt["createdAt"],
    }


def usage_receipt_record(row: Row) -> Record:
    record: Record = {
        "id": row["receipt_id"],
        "eventIds": load_json(row, "event_ids_json"),
        "elementIds": load_json(row, "element_ids_json"),
    }
    audit = load_json(row, "audit_json")
    if audit:  # '{}' means no audit
        record["audit"] = audit
    record["createdAt"] = row["created_at"]
    return record


def ingestion_receipt_row(namespace: str, receipt: Record) -> dict[str, Any]:
    return {"namespace": namespace, "receipt_id": receipt["id"], "created_at": receipt["createdAt"]}


def ingestion_receipt_record(row: Row) -> Record:
    return {"id": row["receipt_id"], "createdAt": row["created_at"]}


def model_response_row(namespace: str, response: Record) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "id": response["id"],
        "kind": response["kind"],
        "response": response["response"],
        "created_at": response["createdAt"],
    }


def model_response_record(row: Row) -> Record:
    return {"id": row["id"], "kind": row["kind"], "response": row["response"], "createdAt": row["created_at"]}
