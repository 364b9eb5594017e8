"""Ranked raw-memory search: BM25 over conversation turns, each read with the turns around it.

The reference's `search_raw_memory` (kept as is in the engine for parity) returns the first messages, in
block order, that share any token with the query, and skips the open tail. That answers "is it anywhere in
the transcript?", not "where is it best said?". This is a separate, ranked mode:

- the unit is a turn: a user message and the replies that follow it, sealed or still in the open tail;
- each turn is scored with the engine's BM25 (reference tokenizer, k1 1.2, b 0.75) as a weighted document,
  the way event cards are: the turn's own text (weight `TURN_WEIGHT`) plus the previous and next turns of
  its thread (weight `NEARBY_WEIGHT`). An answer often only makes sense with the question it replies to, and
  the neighbours are what the reference's raw hits already show as `nearby`;
- ties keep conversation order. Nothing is written: this is a read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from stratagate.model import Block, Message
from stratagate.search.documents import SearchField
from stratagate.search.index import ExplainedHit, InvertedIndex

TURN_WEIGHT = 2
NEARBY_WEIGHT = 1


@dataclass(frozen=True)
class RawTurn:
    messages: tuple[Message, ...]
    """A user message and the replies after it (or replies with no user message before them)."""
    block_id: str | None
    """The sealed block that holds the turn; None while it is in the open tail."""
    thread_id: str | None
    position: int
    """Order of the turn in the whole memory (threads one after the other)."""

    @property
    def text(self) -> str:
        return "\n".join(message.content for message in self.messages if message.content)


@dataclass(frozen=True)
class RankedRawHit:
    turn: RawTurn
    score: float
    nearby: tuple[RawTurn, ...]
    """The previous and next turns of the same thread, when there are."""


def memory_turns(blocks: Iterable[Block], open_tail: Iterable[Message]) -> list[RawTurn]:
    """Every turn, grouped by thread (in order of first appearance), sealed messages before the open tail."""
    threads: dict[str | None, list[tuple[Message, str | None]]] = {}
    for block in sorted(blocks, key=lambda block: block.sequence):
        threads.setdefault(block.thread_id, []).extend((message, block.id) for message in block.l5_raw)
    for message in open_tail:
        threads.setdefault(message.thread_id, []).append((message, None))

    turns: list[RawTurn] = []
    for thread_id, messages in threads.items():
        current: list[Message] = []
        block_id: str | None = None
        for message, holder in messages:
            if message.role == "user" and current:
                turns.append(RawTurn(tuple(current), block_id, thread_id, len(turns)))
                current = []
            if not current:
                block_id = holder
            current.append(message)
        if current:
            turns.append(RawTurn(tuple(current), block_id, thread_id, len(turns)))
    return turns


class RankedRawSearch:
    """Ranked search over a memory's turns: build it once per memory state, then search many times."""

    def __init__(self, turns: Sequence[RawTurn]):
        self._turns = list(turns)
        self._neighbours = [self._nearby(index) for index in range(len(self._turns))]
        self._index = InvertedIndex()
        # Keys in conversation order, so that the index's tie-break (key order) keeps that order.
        self._index.add_many(
            (_key(index), _turn_fields(turn, neighbours))
            for index, (turn, neighbours) in enumerate(zip(self._turns, self._neighbours, strict=True))
        )

    @classmethod
    def of(cls, blocks: Iterable[Block], open_tail: Iterable[Message]) -> RankedRawSearch:
        return cls(memory_turns(blocks, open_tail))

    def search(self, query: str, limit: int = 6) -> list[RankedRawHit]:
        """The best `limit` turns for `query`, best first; no hit when no turn shares a token with it."""
        if limit <= 0:
            return []
        return [
            RankedRawHit(self._turns[int(key)], score, self._neighbours[int(key)])
            for key, score in self._index.rank(query, limit=limit)
        ]

    def explain(self, query: str, limit: int = 6) -> list[ExplainedHit]:
        """The same hits with each term's score split by field (the turn itself, the turn before, after)."""
        return self._index.rank(query, limit=max(0, limit), explain=True)

    def _nearby(self, index: int) -> tuple[RawTurn, ...]:
        turn = self._turns[index]
        around = [self._turns[i] for i in (index - 1, index + 1) if 0 <= i < len(self._turns)]
        return tuple(other for other in around if other.thread_id == turn.thread_id)


def _key(index: int) -> str:
    return f"{index:012d}"


def _turn_fields(turn: RawTurn, neighbours: Sequence[RawTurn]) -> list[SearchField]:
    fields: list[SearchField] = [("turn", turn.text, TURN_WEIGHT)]
    for neighbour in neighbours:
        side = "before" if neighbour.position < turn.position else "after"
        fields.append((side, neighbour.text, NEARBY_WEIGHT))
    return fields
