"""Markdown for the card panes. Memory text is shown as written; ids become in-app `sg://` jump links."""

from __future__ import annotations

import re

from stratagate.model import Element, Event
from stratagate_gui.views.temporal import happened_text
from stratagate_gui.widgets.markdown_browser import internal_link

_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!<>|~])")


def escape(text: str) -> str:
    """Show `text` literally inside markdown (titles, names, tags, ids)."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def link(kind: str, identifier: str) -> str:
    return f"[{escape(identifier)}]({internal_link(kind, identifier)})"


def event_card_markdown(event: Event, weight: float) -> str:
    temporal = event.temporal
    lines = [f"## {escape(event.title)}", ""]
    facts = [f"`{event.id}`", f"**{event.status}**", escape(temporal.event_type or "untyped"), event.criticality]
    facts.append(f"weight {weight:.3f}" + (" · pinned" if event.weight.pinned else ""))
    lines += [" · ".join(facts), "", event.summary, ""]
    if event.narrative and event.narrative != event.summary:
        lines += ["### Narrative", "", event.narrative, ""]
    if event.quotes:
        lines += ["### Quotes", ""] + [f"> {quote}\n" for quote in event.quotes]
    lines += ["### When", ""]
    lines.append(f"- **Mentioned at:** {escape(temporal.mentioned_at or 'not recorded')}")
    happened = happened_text(temporal)
    details = ", ".join(escape(part) for part in (temporal.precision, temporal.basis, temporal.status) if part)
    lines.append(f"- **Happened:** {escape(happened) if happened else 'not recorded'}" + (f" ({details})" if details else ""))
    if temporal.original_text:
        lines.append(f"- **Said as:** “{escape(temporal.original_text)}”")
    lines += ["", "### Who and what", ""]
    lines.append(f"- **Participants:** {escape(', '.join(temporal.participants or [])) or 'none'}")
    lines.append(f"- **Tags:** {escape(', '.join(event.tags)) or 'none'}")
    lines.append(f"- **Scope:** {event.scope} · **confidence** {event.confidence:g}")
    lines += ["", "### Sources", ""]
    lines.append(f"- **Block:** {link('block', event.source_block_id)}")
    messages = ", ".join(link("message", message) for message in event.source_message_ids)
    lines.append(f"- **Messages:** {messages or 'none'}")
    lines += ["", "### Supersession", ""]
    lines.append(f"- **Superseded by:** {link('event', event.superseded_by) if event.superseded_by else 'nothing'}")
    supersedes = ", ".join(link("event", other) for other in temporal.supersedes_event_ids or [])
    lines.append(f"- **Supersedes:** {supersedes or 'nothing'}")
    state = event.weight
    lines += ["", "### Weight", ""]
    lines.append(
        f"- mentions {state.mention_count} · last adopted at turn {state.last_adopted_turn} · floor {state.floor_weight:g}"
        + (f" · cap {state.forced_cap:g}" if state.forced_cap is not None else "")
        + (f" · last retrieved {escape(state.last_retrieved_at)}" if state.last_retrieved_at else "")
    )
    return "\n".join(lines)


def element_summary_markdown(element: Element) -> str:
    aliases = escape(", ".join(element.aliases)) or "none"
    sources = ", ".join(link("event", event) for event in element.source_event_ids) or "none"
    return "\n".join([
        f"## {escape(element.name)}",
        "",
        f"`{element.id}` · {element.type} · aliases: {aliases}",
        "",
        f"**Source events:** {sources}",
    ])
