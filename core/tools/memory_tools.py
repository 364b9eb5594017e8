"""The memory tools of the reference host, as plain Python with JSON schemas (`MemoryTools`).

A model calls them by name with JSON arguments (`call(name, arguments)`) and reads JSON back. As in the
reference host, every retrieval (search, block listing, expansion) becomes the session's latest *batch*: its
evidence refs (`event:<id>`, `element:<id>:fact:<id>`, `raw:<block>:<message>:<n>`, `block:<id>:level:<n>`)
are what `memory_assess` may accept, and `memory_record_use` adopts refs only from a sufficient assessment of
that same batch. The receipt it writes keeps the batch in its audit: the query and its options, each hit with
its rank and score, the revision searched, so the app's Receipts view can replay exactly what the agent ran.

Turn ingestion (`memory_append_turn`, `memory_resume_pending_work`) stores turns under a receipt key (a
repeat is ignored) and defers sealing and derivation by default, as the reference's hooks do. A memory opened
read-only lists and serves only the read tools.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import jsonschema

from stratagate.assessment import RETRIEVAL_ASSESSMENT_SCHEMA
from stratagate.errors import StrataGateError
from stratagate.journal import new_entry
from stratagate.memory import BlockPointer
from stratagate.model import ELEMENT_TYPES
from stratagate.tools.results import block_json, element_json, event_json, message_json

_TEXT = {"type": "string"}
_LIMIT = {"type": "integer", "minimum": 1}
_TEXTS = {"type": "array", "items": {"type": "string"}}


def _schema(required: list[str], **properties: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": required, "properties": properties}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    writes: bool

    @cached_property
    def validator(self) -> jsonschema.protocols.Validator:
        """Built once: checking the schema itself on every call would cost more than most tools."""
        validator_class = jsonschema.validators.validator_for(self.input_schema)
        validator_class.check_schema(self.input_schema)
        return validator_class(self.input_schema)


TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec("memory_search_events",
             "Search durable event memories. Returns a batchId, evidenceRefs and ranked event cards; assess the "
             "batch (memory_assess) before relying on it.",
             _schema(["query"], query={**_TEXT, "description": "What decision, event, preference or outcome "
                                                               "to find."},
                     limit={**_LIMIT, "maximum": 20}, temporal_intent={"type": "string", "enum": ["first", "latest"]},
                     event_type=_TEXT, participants=_TEXTS, happened_from=_TEXT, happened_to=_TEXT), False),
    ToolSpec("memory_search_elements",
             "Search facts about people, projects, organizations, tools or places. Returns evidenceRefs to "
             "assess before use.",
             _schema(["query"], query=_TEXT, limit={**_LIMIT, "maximum": 12}, name=_TEXT,
                     type={"type": "string", "enum": list(ELEMENT_TYPES)}), False),
    ToolSpec("memory_search_raw",
             "Search verbatim archived messages when summarized memories are not enough.",
             _schema(["query"], query=_TEXT, limit=_LIMIT), False),
    ToolSpec("memory_get_blocks",
             "List the conversation blocks at their current (decayed) detail level.",
             _schema([], thread_id=_TEXT), False),
    ToolSpec("memory_expand_block",
             "Lift one block to a more detailed level (L0-L5, or 'next'). The result becomes the latest batch.",
             _schema(["id"], id=_TEXT, target={"oneOf": [{"type": "string"}, {"type": "integer"}]}), True),
    ToolSpec("memory_expand_event",
             "Retrieve one complete event card by id. The result becomes the latest batch.",
             _schema(["id"], id=_TEXT), False),
    ToolSpec("memory_expand_element",
             "Expand an element card, optionally as it stood at an ISO date. The result becomes the latest batch.",
             _schema(["id"], id=_TEXT, at=_TEXT), False),
    ToolSpec("memory_assess",
             "Apply the evidence gate to the latest retrieval batch: 'sufficient' needs real refs from that batch "
             "and next_strategy 'answer'.",
             RETRIEVAL_ASSESSMENT_SCHEMA, False),
    ToolSpec("memory_record_use",
             "Required after every retrieval: pass exactly the evidence refs the answer used (or none). Non-empty "
             "refs need a sufficient assessment of the latest batch. Idempotent per receipt_id.",
             _schema(["evidence_refs"], evidence_refs=_TEXTS, receipt_id=_TEXT), True),
    ToolSpec("memory_append_turn",
             "Store one finished user+assistant turn under a receipt key (a repeated key is ignored). Sealing and "
             "derivation wait for memory_resume_pending_work unless defer_processing is false.",
             _schema(["user", "assistant", "receipt_id"], user=_TEXT, assistant=_TEXT, receipt_id=_TEXT,
                     thread_id=_TEXT, created_at=_TEXT, defer_processing={"type": "boolean"}), True),
    ToolSpec("memory_resume_pending_work",
             "Seal every full block and run the pending extraction and projection jobs.",
             _schema([], retry_skipped={"type": "boolean"}), True),
)
SPECS = {spec.name: spec for spec in TOOL_SPECS}


class ToolError(StrataGateError):
    """A tool call the model got wrong (unknown tool, bad arguments, no batch to assess): say so to the model."""


@dataclass
class Batch:
    """The latest retrieval: its refs (each mapped to the event and element ids it stands for) and what ran."""

    id: str
    refs: dict[str, dict[str, list[str]]]
    query: dict[str, Any]
    adopted: dict[str, Any] | None = None
    """The sufficient assessment of this batch, once there is one."""


@dataclass
class MemoryTools:
    """The tools over one open memory for one agent session. `after_write` runs after each writing tool (the
    MCP server moves model adapters' responses into the history there)."""

    memory: Any
    session_id: str = field(default_factory=lambda: f"session-{uuid.uuid4().hex[:12]}")
    after_write: Callable[[], None] | None = None
    _batch: Batch | None = field(default=None, init=False)
    _batches: int = field(default=0, init=False)

    @property
    def actor(self) -> str:
        """Who the journal says acted: the agent of this session."""
        return f"agent:{self.session_id}"

    def specs(self) -> list[ToolSpec]:
        """The tools this memory serves: the read tools only when it is open read-only."""
        return [spec for spec in TOOL_SPECS if not (spec.writes and self.memory.read_only)]

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
        spec = SPECS.get(name)
        if spec is None or spec not in self.specs():
            known = ", ".join(spec.name for spec in self.specs())
            raise ToolError(f"unknown tool {name!r} for this memory (it serves: {known})")
        arguments = dict(arguments or {})
        error = jsonschema.exceptions.best_match(spec.validator.iter_errors(arguments))
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "arguments"
            raise ToolError(f"{name}: {where}: {error.message}")
        result = getattr(self, name.removeprefix("memory_"))(**arguments)
        if spec.writes and self.after_write is not None:
            self.after_write()
        return result

    # retrieval ----------------------------------------------------------------------------------------------
    def _new_batch(self, kind: str, query: str, options: Mapping[str, Any],
                   hits: list[tuple[str, dict[str, list[str]], dict[str, Any]]], results: Any) -> dict[str, Any]:
        """Make the hits the latest batch. `hits`: (ref, the ids it stands for, the hit as the audit keeps it)."""
        self._batches += 1
        batch_id = f"batch_{self._batches}"
        ran = {"kind": kind, "query": query, "options": dict(options), "revision": self.memory.revision,
               "hits": [{"rank": rank, "ref": ref, **kept} for rank, (ref, _ids, kept) in enumerate(hits, start=1)]}
        self._batch = Batch(batch_id, {ref: ids for ref, ids, _kept in hits}, ran)
        return {"batchId": batch_id, "evidenceRefs": [ref for ref, _ids, _kept in hits], "results": results}

    def _record(self) -> bool:
        """Searches record retrieval (lastRetrievedAt) on the agent path; never on a read-only memory."""
        return not self.memory.read_only

    def search_events(self, query: str, **options: Any) -> dict[str, Any]:
        hits = self.memory.search_events(query, **options, record=self._record())
        return self._new_batch("events", query, options, [
            (f"event:{hit.event.id}", {"eventIds": [hit.event.id], "elementIds": []},
             {"eventId": hit.event.id, "score": hit.score}) for hit in hits],
            [event_json(hit.event, hit.score) for hit in hits])

    def search_elements(self, query: str, **options: Any) -> dict[str, Any]:
        hits = self.memory.search_elements(query, **options, record=self._record())
        return self._new_batch("elements", query, options, [
            (f"element:{hit.element_id}:fact:{hit.id}", {"eventIds": [], "elementIds": [hit.element_id]},
             {"elementId": hit.element_id, "factId": hit.id, "score": hit.score}) for hit in hits],
            [{"id": hit.id, "elementId": hit.element_id, "name": hit.element.name, "type": hit.element.type,
              "fact": hit.fact.to_record(), "score": hit.score} for hit in hits])

    def search_raw(self, query: str, limit: int = 6) -> dict[str, Any]:
        hits = self.memory.search_raw_memory(query, limit)
        return self._new_batch("raw", query, {"limit": limit}, [
            (f"raw:{hit.block_id}:{hit.message.id}:{index}", {"eventIds": [], "elementIds": []},
             {"blockId": hit.block_id, "messageId": hit.message.id}) for index, hit in enumerate(hits)],
            [{"blockId": hit.block_id, "turnRange": list(hit.turn_range), "message": message_json(hit.message),
              "nearby": [message_json(message) for message in hit.nearby]} for hit in hits])

    def get_blocks(self, thread_id: str | None = None) -> dict[str, Any]:
        entries = self.memory.get_block_context(thread_id)
        return self._new_batch("blocks", "", {"thread_id": thread_id} if thread_id else {}, [
            (f"block:{entry.id}:level:{entry.level}", {"eventIds": [], "elementIds": []},
             {"blockId": entry.id, "level": entry.level}) for entry in entries],
            [block_json(entry) for entry in entries])

    def expand_block(self, id: str, target: str | int = "next") -> dict[str, Any]:
        before = BlockPointer.of(self.memory.get_block(id))
        after = self.memory.lift_pointer(id, target, "agent")
        journal = new_entry(self.actor, "lift", [id], before.to_json(), after.to_json())
        entry = self.memory.set_block_pointer(id, after, journal_entry=journal).entry
        return self._new_batch("expand_block", id, {"target": target}, [
            (f"block:{entry.id}:level:{entry.level}", {"eventIds": [], "elementIds": []},
             {"blockId": entry.id, "level": entry.level})], block_json(entry))

    def expand_event(self, id: str) -> dict[str, Any]:
        event = self.memory.expand_event(id)
        return self._new_batch("expand_event", id, {}, [
            (f"event:{event.id}", {"eventIds": [event.id], "elementIds": []}, {"eventId": event.id})],
            event_json(event))

    def expand_element(self, id: str, at: str | None = None) -> dict[str, Any]:
        element = self.memory.expand_element(id, at)
        return self._new_batch("expand_element", id, {"at": at} if at else {}, [
            (f"element:{element.id}", {"eventIds": [], "elementIds": [element.id]}, {"elementId": element.id})],
            element_json(element))

    # the gate and adoption ----------------------------------------------------------------------------------
    def assess(self, **assessment: Any) -> dict[str, Any]:
        batch = self._require_batch()
        result = self.memory.assess_retrieval(assessment, batch.refs.keys()).to_record()
        batch.adopted = result if result["verdict"] == "sufficient" else None
        return {"batchId": batch.id, **result}

    def record_use(self, evidence_refs: list[str], receipt_id: str | None = None) -> dict[str, Any]:
        batch = self._require_batch()
        refs = list(dict.fromkeys(ref.strip() for ref in evidence_refs if ref.strip()))
        # One receipt per batch by default: a retried call adopts nothing twice.
        receipt = receipt_id or f"{self.session_id}:use:{batch.id}"
        event_ids: dict[str, None] = {}
        element_ids: dict[str, None] = {}
        audit: dict[str, Any] = {"sessionId": self.session_id, "turn": self.memory.current_turn,
                                 "batchId": batch.id, "evidenceRefs": refs, "retrieval": {"queries": [batch.query]}}
        if refs:
            if batch.adopted is None:
                raise ToolError("non-empty evidence_refs need a sufficient assessment of the latest retrieval batch")
            for ref in refs:
                if ref not in batch.adopted["evidenceRefs"]:
                    raise ToolError(f"evidence ref was not adopted by the latest assessment: {ref}")
                event_ids.update(dict.fromkeys(batch.refs[ref]["eventIds"]))
                element_ids.update(dict.fromkeys(batch.refs[ref]["elementIds"]))
            audit.update({key: batch.adopted[key] for key in ("verdict", "fit", "missing", "nextStrategy")})
        ids = [*event_ids, *element_ids]
        already = any(existing.id == receipt for existing in self.memory.list_usage_receipts())
        journal = None if already else new_entry(self.actor, "record use", ids, None,
                                                 {"receiptId": receipt, "batchId": batch.id, "evidenceRefs": refs})
        stored = self.memory.record_memory_use(event_ids=list(event_ids), element_ids=list(element_ids),
                                               receipt_id=receipt, audit=audit, journal_entry=journal)
        return {"recorded": True, "receiptId": stored.id, "incremented": len(event_ids) + len(element_ids),
                "evidenceRefs": refs, "eventIds": list(event_ids), "elementIds": list(element_ids)}

    def _require_batch(self) -> Batch:
        if self._batch is None:
            raise ToolError("no retrieval batch yet in this session: search or expand first")
        return self._batch

    # ingestion ----------------------------------------------------------------------------------------------
    def append_turn(self, user: str, assistant: str, receipt_id: str, thread_id: str | None = None,
                    created_at: str | None = None, defer_processing: bool = True) -> dict[str, Any]:
        result = self.memory.append_turn(user, assistant, receipt_id=receipt_id, thread_id=thread_id,
                                         created_at=created_at, defer_processing=defer_processing)
        return {"receiptId": receipt_id, "duplicate": result.duplicate, "turn": self.memory.current_turn,
                "revision": self.memory.revision,
                "sealedBlockId": result.sealed_block.id if result.sealed_block else None,
                "eventIds": [event.id for event in result.extracted_events],
                "elementIds": [element.id for element in result.projected_elements]}

    def resume_pending_work(self, retry_skipped: bool = False) -> dict[str, Any]:
        work = self.memory.resume_pending_work(retry_skipped=retry_skipped)
        return {"sealedBlockIds": [block.id for block in work.sealed_blocks],
                "eventIds": [event.id for event in work.extracted_events],
                "elementIds": [element.id for element in work.projected_elements],
                "revision": self.memory.revision}

