"""What a model adapter sends and accepts: the three structured tools (JSON schemas), the target-first
payloads, and the answer checks that run before the engine sees anything.

Payloads are target-first (docs/adapters.md): the extractor gets the target block's raw messages and their ids,
only the L2 key points of its neighbours, and a compact timeline; the projector gets its job's events and the
names of the known elements. Answers are validated against the tool's schema, then narrowed: an event's
`sourceMessageIds` outside the target block and a change's `sourceEventIds` outside the job are dropped, and an
event or change left without evidence is dropped with them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import jsonschema

from stratagate.callbacks import ExtractionRequest, ProjectionRequest
from stratagate.model import CRITICALITIES, ELEMENT_TYPES, EVENT_SCOPES, FACT_MODES, Block, Message

# The newest events the extractor sees in its timeline: enough to link supersessions, bounded so the payload
# does not grow with the memory.
TIMELINE_LIMIT = 200

_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}


@dataclass(frozen=True)
class StructuredTool:
    kind: str
    name: str
    description: str
    parameters: dict[str, Any]

    @cached_property
    def validator(self) -> jsonschema.protocols.Validator:
        validator_class = jsonschema.validators.validator_for(self.parameters)
        validator_class.check_schema(self.parameters)
        return validator_class(self.parameters)

    def validate(self, arguments: Any) -> None:
        """Raise `jsonschema.ValidationError` (the most relevant one) when the arguments do not fit the schema."""
        error = jsonschema.exceptions.best_match(self.validator.iter_errors(arguments))
        if error is not None:
            raise error


SUMMARIZER_TOOL = StructuredTool(
    "summarizer", "stratagate_summarize_block",
    "Submit the durable summary of the supplied conversation block.",
    {
        "type": "object",
        "required": ["l0Title", "l0Tags", "l1Summary", "l2Keypoints", "shouldExtract"],
        "properties": {
            "l0Title": {"type": "string"},
            "l0Tags": _STRINGS,
            "l1Summary": {"type": "string"},
            "l2Keypoints": _STRINGS,
            "shouldExtract": {"type": "boolean"},
        },
    },
)

EXTRACTOR_TOOL = StructuredTool(
    "extractor", "stratagate_extract_event_cards",
    "Submit durable, evidence-backed event cards from the target block only.",
    {
        "type": "object",
        "required": ["shouldExtract", "reason", "events"],
        "properties": {
            "shouldExtract": {"type": "boolean"},
            "reason": {"type": "string"},
            "events": {"type": "array", "items": {
                "type": "object",
                "required": ["title", "summary", "sourceMessageIds"],
                "properties": {
                    "title": {"type": "string", "minLength": 1},
                    "summary": {"type": "string"},
                    "narrative": {"type": "string"},
                    "tags": _STRINGS,
                    "quotes": _STRINGS,
                    "sourceMessageIds": _STRINGS,
                    "temporal": {"type": "object"},
                    "scope": {"type": "string", "enum": list(EVENT_SCOPES)},
                    "criticality": {"type": "string", "enum": list(CRITICALITIES)},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                },
            }},
        },
    },
)

PROJECTOR_TOOL = StructuredTool(
    "projector", "stratagate_project_element_cards",
    "Submit element-card changes supported by the supplied event cards.",
    {
        "type": "object",
        "required": ["reason", "changes"],
        "properties": {
            "reason": {"type": "string"},
            "changes": {"type": "array", "items": {
                "type": "object",
                "required": ["name", "type", "key", "mode", "operation", "value", "sourceEventIds"],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "type": {"type": "string", "enum": list(ELEMENT_TYPES)},
                    "aliases": _STRINGS,
                    "key": {"type": "string", "minLength": 1},
                    "mode": {"type": "string", "enum": list(FACT_MODES)},
                    "operation": {"type": "string", "enum": ["set_state", "add_set_item", "set_relation"]},
                    "value": {"oneOf": [{"type": "string"}, _STRINGS]},
                    "validFrom": {"type": "string"},
                    "validTo": {"type": "string"},
                    "sourceEventIds": _STRINGS,
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                },
            }},
        },
    },
)

TOOLS = {tool.kind: tool for tool in (SUMMARIZER_TOOL, EXTRACTOR_TOOL, PROJECTOR_TOOL)}


# payloads -----------------------------------------------------------------------------------------------------
def _message(message: Message) -> dict[str, Any]:
    return message.to_record()


def summarizer_payload(messages: Sequence[Message]) -> dict[str, Any]:
    return {"messages": [_message(message) for message in messages]}


def _neighbour(block: Block | None) -> dict[str, Any] | None:
    if block is None:
        return None
    return {"blockId": block.id, "startTurn": block.start_turn, "endTurn": block.end_turn,
            "l2Keypoints": list(block.l2_keypoints)}


def extractor_payload(request: ExtractionRequest) -> dict[str, Any]:
    target = request.target
    timeline = [
        {key: value for key, value in (("id", entry.id), ("title", entry.title),
                                       ("happenedStart", entry.temporal.happened_start),
                                       ("happenedEnd", entry.temporal.happened_end),
                                       ("mentionedAt", entry.temporal.mentioned_at)) if value is not None}
        for entry in request.timeline[-TIMELINE_LIMIT:]
    ]
    return {
        "target": {"blockId": target.id, "threadId": target.thread_id, "startTurn": target.start_turn,
                   "endTurn": target.end_turn, "l5Raw": [_message(message) for message in target.l5_raw]},
        "allowedSourceMessageIds": [message.id for message in target.l5_raw],
        "neighbors": {"previous": _neighbour(request.previous), "next": _neighbour(request.next)},
        "timeline": timeline,
    }


def projector_payload(request: ProjectionRequest) -> dict[str, Any]:
    events = [{"id": event.id, "title": event.title, "summary": event.summary, "tags": list(event.tags),
               "temporal": event.temporal.to_record()} for event in request.events]
    elements = [{"name": name, "type": element_type} for name, element_type in request.element_labels()]
    return {"events": events, "existingElements": elements}


# answers ------------------------------------------------------------------------------------------------------
def summary_result(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {key: arguments[key] for key in SUMMARIZER_TOOL.parameters["required"]}


def extraction_result(arguments: Mapping[str, Any], target: Block) -> dict[str, Any]:
    """The extractor's answer for the engine: each event's evidence narrowed to the target's messages; an
    event citing only messages outside the target (a neighbour's, or invented) is dropped."""
    allowed = {message.id for message in target.l5_raw}
    events = []
    for raw in arguments["events"]:
        cited = [message_id for message_id in raw["sourceMessageIds"] if message_id in allowed]
        if cited:
            events.append({**raw, "sourceMessageIds": cited, "sourceBlockId": target.id})
    reason = arguments["reason"]
    if arguments["shouldExtract"] and not events and arguments["events"]:
        reason = f"every event cited messages outside block {target.id}: {reason}"
    return {"shouldExtract": arguments["shouldExtract"], "reason": reason, "events": events}


def projection_result(arguments: Mapping[str, Any], request: ProjectionRequest) -> dict[str, Any]:
    """The projector's answer for the engine: evidence narrowed to the job's events; a change left without
    evidence is dropped."""
    allowed = {event.id for event in request.events}
    changes = []
    for raw in arguments["changes"]:
        cited = [event_id for event_id in raw["sourceEventIds"] if event_id in allowed]
        if cited:
            changes.append({**raw, "sourceEventIds": cited})
    return {"reason": arguments["reason"], "changes": changes}
