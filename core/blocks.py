"""Blocks: L0–L5 levels, v7 block-position decay, level targets, rendering, and the default summary."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from stratagate.errors import InvalidInputError
from stratagate.model import Block, Message
from stratagate.text import collapse_whitespace, utf16_cut

DEFAULT_BLOCK_TURN_SIZE = 12
BLOCK_MAX_LEVEL = 5
BLOCK_DECAY_LAMBDA = 0.3
LEVEL_TEXT = (
    "title and tags", "narrative summary", "key points", "rule-condensed transcript",
    "readable near-verbatim transcript", "raw transcript",
)
# (weight above which, levels dropped); below the last threshold the block drops all five levels.
_DROP_THRESHOLDS = ((0.7, 0), (0.5, 1), (0.3, 2), (0.15, 3), (0.08, 4))
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


def normalize_block_level(target: object, current: int) -> int:
    """A lift target as a level: 'raw'/'L5'/5 → 5; 'next'/'+1'/None → current+1; 0–5 or 'L0'–'L5' → that level;
    other numbers rounded and clamped. Anything else is rejected (the reference silently used current+1)."""
    if target is None or (isinstance(target, str) and target.strip().lower() in ("next", "+1")):
        return min(BLOCK_MAX_LEVEL, current + 1)
    if isinstance(target, str):
        text = target.strip().lower()
        if text == "raw":
            return BLOCK_MAX_LEVEL
        text = text.removeprefix("l")
        if len(text) == 1 and text in "012345":
            return int(text)
    elif isinstance(target, int | float) and not isinstance(target, bool) and math.isfinite(target):
        return min(BLOCK_MAX_LEVEL, max(0, js_round(target)))
    raise InvalidInputError(f"Invalid block level target {target!r}: use 0-5, 'L0'-'L5', 'raw' or 'next'")


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
    natural = [collapse_whitespace(m.content) for m in messages if m.role in NATURAL_ROLES]
    first_user = next((collapse_whitespace(m.content) for m in messages if m.role == "user"), "")
    return BlockSummary(
        title=utf16_cut(first_user, 80) or "Conversation block",
        tags=[],
        summary=utf16_cut(" ".join(natural[:4]), 500),
        keypoints=[utf16_cut(text, 160) for text in natural[:8] if text],
        should_extract=False,
    )
