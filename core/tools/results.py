"""JSON a model can read, for what the memory tools return: event cards, element facts, raw messages, blocks."""

from __future__ import annotations

from typing import Any

from stratagate.model import BlockContextEntry, Element, Event, Message


def event_json(event: Event, score: float | None = None) -> dict[str, Any]:
    card: dict[str, Any] = {
        "id": event.id, "title": event.title, "summary": event.summary, "narrative": event.narrative,
        "tags": list(event.tags), "quotes": list(event.quotes), "status": event.status,
        "criticality": event.criticality, "scope": event.scope, "temporal": event.temporal.to_record(),
        "sourceBlockId": event.source_block_id, "sourceMessageIds": list(event.source_message_ids),
        "createdAt": event.created_at,
    }
    if score is not None:
        card["score"] = score
    return card


def element_json(element: Element) -> dict[str, Any]:
    return {"id": element.id, "name": element.name, "type": element.type, "aliases": list(element.aliases),
            "currentState": element.current_state,
            "facts": [fact.to_record() for fact in element.facts]}


def message_json(message: Message) -> dict[str, Any]:
    return {"id": message.id, "role": message.role, "content": message.content, "createdAt": message.created_at}


def block_json(entry: BlockContextEntry) -> dict[str, Any]:
    return {"id": entry.id, "threadId": entry.thread_id, "turnRange": list(entry.turn_range),
            "level": entry.level, "label": entry.label, "content": entry.content}
