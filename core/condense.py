"""Deterministic block renderings: L3 (rule-condensed) and L4 (readable) transcripts, tool summaries.

These are the reference's exact rules (spec §2.4, §2.6), including its quirks: greetings are kept, `.` does not
split sentences, text split at `!?。！？` is re-joined with newlines, and any non-JSON message mentioning
`tool_call(s)`, `"function"` or `"arguments"` is replaced whole. Lengths are UTF-16 code units.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

from stratagate.model import Message, ToolTrace
from stratagate.text import collapse_whitespace, utf16_cut, utf16_length

REPEATED_PASTE = "[repeated paste omitted; original remains in L5]"
ROLE_LABELS = {"user": "User", "assistant": "Assistant", "tool": "Tool", "system": "System"}
FILLERS = frozenset({
    "ok", "okay", "got it", "thanks", "thank you", "yes", "correct", "sure", "好", "好的", "嗯", "嗯嗯", "明白",
    "收到", "谢谢", "感谢", "辛苦了", "是", "是的", "对", "对的", "没错", "可以", "行", "同意", "就这样",
})
_FILLER_TRAILING = "。！？，、,.!?～~"
_IGNORED_ARRAY_KEYS = frozenset({"arguments", "params", "input", "request"})
_JSON_STARTS = frozenset('{["-0123456789tfnNI')
"""The characters a JSON text can start with in `json.loads` (NaN and Infinity included)."""
_FENCE_OPEN = re.compile(r"^```(?:json)?", re.I)
_FENCE_CLOSE = re.compile(r"```$")
_RAW_TOOL_HINT = re.compile(r'(tool_calls|tool_call|"function"|"arguments")', re.I)
_RAW_TOOL_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')
_CODE_FENCE = re.compile(r"```[\s\S]*?```")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n+")
_SENTENCE_BREAK = re.compile(r"\n|(?<=[。！？!?])")
_SENTENCE_END = re.compile(r"[\n。！？!?]")
"""Where `_SENTENCE_BREAK` can split: a paragraph without one is one piece (found faster than a split)."""
_CODE_LINE = re.compile(r"^\s*(const|let|var|function|class|import|export|def|SELECT|INSERT|UPDATE)\b", re.M)


def role_label(role: str) -> str:
    return ROLE_LABELS.get(role, role[:1].upper() + role[1:])


def js_number_string(value: float) -> str:
    """`String(n)` for a JS number."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        text = f"{mantissa.removesuffix('.0')}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"
    return text


def result_summary(value: Any) -> str:
    """The reference's `resultSummary`: a short description of a tool result."""
    if isinstance(value, str):
        text = collapse_whitespace(value)
        if not text:
            return ""
        try:
            parsed = json.loads(text)
        except ValueError:
            return utf16_cut(text, 160)
        return result_summary(parsed)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number_string(value)
    if not isinstance(value, dict | list):
        return ""
    entries = value.items() if isinstance(value, dict) else ((str(i), item) for i, item in enumerate(value))
    entries = list(entries)
    fields = dict(entries)
    if isinstance(fields.get("error"), str):
        return utf16_cut("failed: " + collapse_whitespace(fields["error"]), 140)
    for key in ("summary", "message"):
        if isinstance(fields.get(key), str):
            return utf16_cut(collapse_whitespace(fields[key]), 160)
    counts = [f"{key}: {len(item)}" for key, item in entries if isinstance(item, list) and key not in _IGNORED_ARRAY_KEYS]
    if counts:
        return utf16_cut(", ".join(counts), 160)
    if fields.get("ok") is True:
        return "completed"
    if fields.get("ok") is False:
        return "not completed"
    return "structured result returned"


def tool_call_line(call: ToolTrace) -> str:
    summary = result_summary(call.result)
    return f"Tool call: {call.name}" + (f" ({summary})" if summary else "")


def _collect_tool_names(value: Any, names: list[str]) -> None:
    if isinstance(value, list):
        for item in value:
            _collect_tool_names(item, names)
        return
    if not isinstance(value, dict):
        return
    found = []
    if isinstance(value.get("name"), str) and ("arguments" in value or "parameters" in value):
        found.append(value["name"])
    if isinstance(value.get("tool"), str):
        found.append(value["tool"])
    function = value.get("function")
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        found.append(function["name"])
    names.extend(name for name in found if name not in names)
    for item in value.values():
        _collect_tool_names(item, names)


def tool_json_summary(content: str) -> str | None:
    """'Tool call: …' when a message is a tool-call JSON payload (or looks like a broken one), else None."""
    source = content.strip()
    body = source
    if "```" in source:
        body = _FENCE_CLOSE.sub("", _FENCE_OPEN.sub("", source, count=1), count=1).strip()
    if body[:1] not in ("{", "[") and not _may_name_tool(source):
        return None  # no tool names in it, parsed or not: a scalar names none, a broken payload needs a hint
    try:
        if body[:1] not in _JSON_STARTS:  # json.loads would fail: skip raising and catching its error
            raise ValueError(body)
        parsed = json.loads(body)
    except ValueError:
        if not _RAW_TOOL_HINT.search(source):
            return None
        names = list(dict.fromkeys(_RAW_TOOL_NAME.findall(source)))
        return f"Tool call: {', '.join(names)} (raw arguments omitted)" if names else "Tool call (raw arguments omitted)"
    names: list[str] = []
    _collect_tool_names(parsed, names)
    if not names:
        return None
    result = None
    if isinstance(parsed, dict):
        result = parsed.get("result") if parsed.get("result") is not None else parsed.get("content")
    summary = result_summary(result)
    return f"Tool call: {', '.join(names)}" + (f" ({summary})" if summary else "")


def _may_name_tool(source: str) -> bool:
    """`_RAW_TOOL_HINT.search`, answered without the search for text with neither `_` nor `"` (each hint has
    one)."""
    return ("_" in source or '"' in source) and _RAW_TOOL_HINT.search(source) is not None


def _normalized_paragraph(text: str) -> str:
    return collapse_whitespace(text).lower()


def _is_filler(piece: str) -> bool:
    return piece.rstrip(_FILLER_TRAILING).strip().lower() in FILLERS


def _remove_fillers(paragraph: str) -> str:
    if not _SENTENCE_END.search(paragraph):
        piece = paragraph.strip()
        return "" if _is_filler(piece) else piece
    pieces = (piece.strip() for piece in _SENTENCE_BREAK.split(paragraph))
    return "\n".join(piece for piece in pieces if piece and not _is_filler(piece))


def _looks_like_code(paragraph: str) -> bool:
    if "\n" not in paragraph:
        return False
    return bool(_CODE_LINE.search(paragraph)) or "=>" in paragraph or any(char in paragraph for char in "{};")


def _segments(source: str) -> list[tuple[str, bool]]:
    """(segment, is code fence) pairs of a message: the text between fenced code blocks, and the blocks."""
    if "```" not in source:
        return [(source, False)]
    position = 0
    segments: list[tuple[str, bool]] = []
    for match in _CODE_FENCE.finditer(source):
        segments.append((source[position:match.start()], False))
        segments.append((match.group(0), True))
        position = match.end()
    segments.append((source[position:], False))
    return segments


def _message_parts(content: str) -> list[tuple[str, str | None]]:
    """(part, its paste key, or None when it is not a paste candidate) pairs of one message, before
    repeated-paste removal."""
    source = content.strip()
    tool_summary = tool_json_summary(source)
    if tool_summary is not None:
        return [(tool_summary, None)]
    parts: list[tuple[str, str | None]] = []
    for segment, is_code in _segments(source):
        if is_code:
            code = segment.strip()
            if code:
                parts.append((code, _normalized_paragraph(code)))
            continue
        for paragraph in _PARAGRAPH_BREAK.split(segment) if "\n" in segment else (segment,):
            kept = _remove_fillers(paragraph)
            if kept:
                key = _normalized_paragraph(kept)
                parts.append((kept, key if _looks_like_code(kept) or utf16_length(key) >= 80 else None))
    return parts


def condense_transcript(messages: Iterable[Message]) -> str:
    """L3: system messages dropped, fillers removed, repeated pastes replaced, tool calls summarized."""
    seen: set[str] = set()
    rendered: list[str] = []
    for message in messages:
        if message.role == "system":
            continue
        parts: list[str] = []
        for part, key in _message_parts(message.content):
            if key is not None:
                if key in seen:
                    part = REPEATED_PASTE
                seen.add(key)
            parts.append(part)
        parts.extend(tool_call_line(call) for call in message.tool_calls or [])
        if parts:
            rendered.append(f"{role_label(message.role)}: " + "\n\n".join(parts))
    return "\n\n".join(rendered)


def format_readable_transcript(messages: Iterable[Message]) -> str:
    """L4: every non-system message as `Label: text`, tool calls as one line each (never their arguments)."""
    lines: list[str] = []
    for message in messages:
        if message.role == "system":
            continue
        text = message.content.strip()
        if message.role == "tool":
            text = tool_json_summary(text) or text
        if text:
            lines.append(f"{role_label(message.role)}: {text}")
        lines.extend(tool_call_line(call) for call in message.tool_calls or [])
    return "\n\n".join(lines)
