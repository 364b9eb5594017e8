"""Ranked raw-memory search: BM25 over conversation turns, each read with the turns around it.

The reference's `search_raw_memory` (kept as is in the engine for parity) returns the first messages, in
block order, that share any token with the query, and skips the open tail. That answers "is it anywhere in
the transcript?", not "where is it best said?". This is a separate, ranked mode:

- the unit is a turn: a user message and the replies that follow it, sealed or still in the open tail;
- each turn is scored with the engine's BM25 (reference tokenizer, k1 1.2, b 0.75) as a weighted document,
  the way event cards are: the turn's own text (weight `TURN_WEIGHT`) plus the `NEARBY_TURNS` turns before
  and after it in its thread (weight `NEARBY_WEIGHT`). An answer often only makes sense with the question it
  replies to, and the neighbours are what the reference's raw hits already show as `nearby`. Two on each
  side, so that a transcript imported one utterance per turn (LoCoMo: the other speaker's line is the next
  turn) still sees a whole exchange: question, answer and the follow-up;
- words are matched by their English stem (`ranked_text`): "painted", "paintings" and "paint" are one
  term, and so are "caroline's" and "caroline" or "kids'" and "kid". The reference tokenizer keeps a word
  with an apostrophe whole, so without this a question about "Caroline's kids" finds neither "Caroline" nor
  "kids". This is this mode's own analysis: the engine's tokenizer and its event/element search, which the
  reference parity tests pin down, are untouched;
- ties keep conversation order. Nothing is written: this is a read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from stratagate.model import Block, Message
from stratagate.search.documents import SearchField
from stratagate.search.index import ExplainedHit, InvertedIndex
from stratagate.search.rrf import RRF_K
from stratagate.search.tokenize import search_tokens

TURN_WEIGHT = 2
NEARBY_WEIGHT = 1
NEARBY_TURNS = 2
EVENT_PAGE = 10
# An event's best hit is worth the gap between the first raw rank and rank EVENT_PAGE + 1 (RRF k 60): it can
# lift the turn at rank EVENT_PAGE + 1 to the second place, never to the first. Deeper down reciprocal ranks
# are closer together, so there it lifts a turn further (the 20th into the first ten).
EVENT_WEIGHT = 1 - (RRF_K + 1) / (RRF_K + 1 + EVENT_PAGE)


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
    """Up to `NEARBY_TURNS` turns before and after it in the same thread, in conversation order."""


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
            for key, score in self._index.rank(ranked_text(query), limit=limit)
        ]

    def explain(self, query: str, limit: int = 6) -> list[ExplainedHit]:
        """The same hits with each term's score split by field (`turn`, `before 1` for the turn just
        before, `after 2` for the second one after, ...); the terms are the stems `ranked_text` makes."""
        return self._index.rank(ranked_text(query), limit=max(0, limit), explain=True)

    def _nearby(self, index: int) -> tuple[RawTurn, ...]:
        turn = self._turns[index]
        reach = range(index - NEARBY_TURNS, index + NEARBY_TURNS + 1)
        around = [self._turns[i] for i in reach if i != index and 0 <= i < len(self._turns)]
        return tuple(other for other in around if other.thread_id == turn.thread_id)


_WORD = "word:"
_STEMMER = snowballstemmer.stemmer("english")

# English function words: articles, pronouns, auxiliaries and modals, prepositions, conjunctions and question
# words (closed word classes only; no content word, however common). Turns are short, so BM25 gives a rare
# "her" or "would" as much weight as the word the question is about; these are dropped from turns and queries.
_FUNCTION_WORD_LINES = """
    a an the this that these those
    i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its
    itself we us our ours ourselves they them their theirs themselves one
    i'm i've i'll i'd you're you've you'll you'd he's he'll he'd she's she'll she'd it's it'll it'd we're
    we've we'll we'd they're they've they'll they'd that's there's here's what's who's let's
    am is are was were be been being have has had having do does did doing
    will would shall should can could may might must
    isn't aren't wasn't weren't haven't hasn't hadn't don't doesn't didn't won't wouldn't shan't shouldn't
    can't cannot couldn't mustn't
    of to in on at by for with from into onto about as than over under through between during before after
    up down out off
    and or but nor so if then because while though although
    what which who whom whose when where why how
    not no yes there here
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORD_LINES.split())


def ranked_text(text: str) -> str:
    """`text` as this mode indexes and queries it: each word of the reference tokenizer replaced by its
    Snowball English stem (which also drops a possessive "'s" or a plural's trailing apostrophe), joined by
    spaces. The engine's index tokenizes that again; a stem is one word-like segment, so it stays one term.
    Han runs keep their words, whose bigrams the index derives again (within each word, no longer across)."""
    words = (_ascii_apostrophe(token.removeprefix(_WORD)) for token in search_tokens(text) if token.startswith(_WORD))
    return " ".join(_stem(word) for word in words if word not in FUNCTION_WORDS)


def _ascii_apostrophe(word: str) -> str:
    # Snowball knows only the ASCII apostrophe; NFKC leaves the typographic one as it is.
    return word.replace("\u2019", "'")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _STEMMER.stemWord(word)


def _key(index: int) -> str:
    return f"{index:012d}"


def _turn_fields(turn: RawTurn, neighbours: Sequence[RawTurn]) -> list[SearchField]:
    fields: list[SearchField] = [("turn", ranked_text(turn.text), TURN_WEIGHT)]
    for neighbour in neighbours:
        distance = neighbour.position - turn.position
        side = "before" if distance < 0 else "after"
        fields.append((f"{side} {abs(distance)}", ranked_text(neighbour.text), NEARBY_WEIGHT))
    return fields



def promote_event_turns(turn_ranking: Sequence[str], event_turn_ranking: Sequence[str]) -> list[str]:
    """The raw ranking of turns (or of ids standing for them), reordered by the turns events cite.

    Events are derived from the same turns by an extractor that covers a fraction of them, so they are
    evidence about turns the raw search already holds, not a second source: a turn only events cite is left
    out, and events only reorder. Each ranking gives its reciprocal rank (k 60, as the engine's RRF), the
    events' weighted by `EVENT_WEIGHT`. Ties keep the raw order; repeats count at their best rank.
    """
    raw = list(dict.fromkeys(turn_ranking))
    event_rank: dict[str, int] = {}
    for rank, turn in enumerate(event_turn_ranking):
        event_rank.setdefault(turn, rank)
    scores = {
        turn: _reciprocal(rank) + (EVENT_WEIGHT * _reciprocal(event_rank[turn]) if turn in event_rank else 0.0)
        for rank, turn in enumerate(raw)
    }
    return sorted(raw, key=lambda turn: -scores[turn])


def _reciprocal(rank: int) -> float:
    return 1 / (RRF_K + rank + 1)
