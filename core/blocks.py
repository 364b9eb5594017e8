"""Blocks: L0–L5 levels, v7 block-position decay, level targets, rendering, and the default summary."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice

from stratagate.model import Block, Message
from stratagate.text import collapse_whitespace, utf16_cut
from stratagate.v8date import JS_WHITESPACE

DEFAULT_BLOCK_TURN_SIZE = 12
BLOCK_MAX_LEVEL = 5
BLOCK_DECAY_LAMBDA = 0.3
LEVEL_TEXT = (
    "title and tags", "narrative summary", "key points", "rule-condensed transcript",
    "readable near-verbatim transcript", "raw transcript",
)
# (weight above which, levels dropped); below the last threshold the block drops all five levels.
_DROP_THRESHOLDS = ((0.7, 0), (0.5, 1), (0.3, 2), (0.15, 3), (0.08, 4))
_LEVEL_TEXT = re.compile(r"[Ll]?[0-5]")
NATURAL_ROLES = ("user", "assistant")


def js_round(value: float) -> int:
    """`Math.round`: halves round up."""
    return math.floor(value + 0.5)


def block_weight(anchor_position: int, latest_position: int, lam: float = BLOCK_DECAY_LAMBDA) -> float:
    """exp(−λ · age) where age counts blocks sealed in the thread since the anchor (v6+)."""
    return math.exp(-lam * max(0, latest_position - anchor_position))


def decayed_block_level(anchor_level: int, anchor_position: int, latest_position: int,
                        lam: float = BLOCK_DECAY_LAMBDA) -> int:
    """The level a block shows now: its anchor level minus the levels its weight has dropped, in [0, 5]."""
    weight = block_weight(anchor_position, latest_position, lam)
    dropped = next((drop for threshold, drop in _DROP_THRESHOLDS if weight > threshold), 5)
    return min(BLOCK_MAX_LEVEL, max(0, js_round(anchor_level - dropped)))


@dataclass(frozen=True)
class BlockSpan:
    """A block as a timeline draws it: where it sits, its level now and its size, without any of its text."""

    id: str
    thread_id: str | None
    sequence: int
    start_turn: int
    end_turn: int
    title: str
    level: int
    """The level it shows now (`decayed_block_level`)."""
    age: int
    """Blocks sealed in its thread after it."""
    message_count: int


def spans_now(records: Sequence[dict], lam: float) -> list[BlockSpan]:
    """Spans with their current levels from span records in sequence order (`StorageBackend.block_spans`):
    a block's position counts the blocks before it in its thread, so the records must hold whole threads."""
    in_thread: dict[str | None, int] = {}
    positions = []
    for record in records:
        thread = record.get("threadId") or None
        in_thread[thread] = in_thread.get(thread, 0) + 1
        positions.append(in_thread[thread])
    spans = []
    # Levels by (anchor level, blocks since the anchor): most blocks of a long thread share one.
    levels: dict[tuple[int, int], int] = {}
    for record, position in zip(records, positions, strict=True):
        thread = record.get("threadId") or None
        latest = in_thread[thread]
        key = (record["pointerAnchorLevel"], max(0, latest - record["pointerAnchorBlockPosition"]))
        level = levels.get(key)
        if level is None:
            level = levels[key] = decayed_block_level(key[0], 0, key[1], lam)
        spans.append(BlockSpan(record["id"], thread, record["sequence"], record["startTurn"], record["endTurn"],
                               record["l0Title"], level, latest - position, record["messageCount"]))
    return spans


def normalize_block_level(target: object, current: int) -> int:
    """A lift target as a level, read as the reference reads it: 'raw', 'L5', '5' or 5 → 5; a finite number →
    rounded and clamped to 0–5; 'L0'–'L5' or '0'–'5' (any case, surrounding spaces ignored) → that level;
    anything else ('next', '+1', None, an unknown word, NaN, a bool) → one level up from `current`.
    One fix: ' L3' (a space before the L) is level 3; the reference computed NaN and stored it."""
    up = min(BLOCK_MAX_LEVEL, current + 1)
    if isinstance(target, str):
        if target in ("raw", "L5", "5"):
            return BLOCK_MAX_LEVEL
        text = target.strip(JS_WHITESPACE)
        return int(text[-1]) if _LEVEL_TEXT.fullmatch(text) else up
    if isinstance(target, int | float) and not isinstance(target, bool) and math.isfinite(target):
        return min(BLOCK_MAX_LEVEL, max(0, js_round(target)))
    return up


def block_level_label(level: int) -> str:
    return f"L{level} {LEVEL_TEXT[level]}"


def render_block(block: Block, level: int) -> str:
    """A block's content at a level (the reference's rendering, L5 = `role: content` per raw message)."""
    if level == 0:
        return f"{block.l0_title}\nTags: {', '.join(block.l0_tags) if block.l0_tags else 'none'}"
    if level == 1:
        return block.l1_summary or block.l0_title
    if level == 2:
        return "\n".join(f"- {point}" for point in block.l2_keypoints) if block.l2_keypoints else block.l1_summary
    if level == 3:
        return block.l3_condensed
    if level == 4:
        return block.l4_readable
    return "\n\n".join(f"{message.role.lower()}: {message.content}" for message in block.l5_raw)


@dataclass
class BlockSummary:
    """What a summarizer returns for a block about to be sealed (L0–L2 and whether to extract events)."""

    title: str
    tags: list[str]
    summary: str
    keypoints: list[str]
    should_extract: bool


def default_summary(messages: Sequence[Message]) -> BlockSummary:
    """The reference's summary when no summarizer is configured: first messages, and never extract."""
    # Only the first 8 natural messages are used (4 in the summary, 8 as keypoints): collapse no others.
    natural_messages = islice((m for m in messages if m.role in NATURAL_ROLES), 8)
    natural = [collapse_whitespace(m.content) for m in natural_messages]
    first_user = next((collapse_whitespace(m.content) for m in messages if m.role == "user"), "")
    return BlockSummary(
        title=utf16_cut(first_user, 80) or "Conversation block",
        tags=[],
        summary=utf16_cut(" ".join(natural[:4]), 500),
        keypoints=[utf16_cut(text, 160) for text in natural[:8] if text],
        should_extract=False,
    )
