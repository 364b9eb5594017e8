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
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Protocol

from stratagate.errors import InvalidInputError
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
    """The turn's number in its search: the order it arrived in (built from a memory: its threads one after
    the other, then what was appended)."""

    @property
    def text(self) -> str:
        return "\n".join(message.content for message in self.messages if message.content)


@dataclass(frozen=True)
class RankedRawHit:
    turn: RawTurn
    score: float
    nearby: tuple[RawTurn, ...]
    """Up to `NEARBY_TURNS` turns before and after it in the same thread, in conversation order."""
    explanation: ExplainedHit | None = None
    """With `explain`: the score split by term and field (`turn`, `before 1` for the turn just before,
    `after 2` for the second one after, ...); the terms are the stems `ranked_text` makes."""


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


class TurnSource(Protocol):
    """What `MemoryTurnSearch` reads of a memory (the `StrataGate` facade has it)."""

    def list_blocks(self) -> list[Block]: ...

    def list_open_tail(self) -> list[Message]: ...

    def get_block(self, block_id: str) -> Block: ...


class RankedRawSearch:
    """Ranked search over turns, kept current as messages arrive (`append`) and blocks are sealed (`seal`)."""

    def __init__(self, turns: Iterable[RawTurn] = ()):
        self._turns: list[RawTurn] = []
        self._threads: dict[str | None, list[int]] = {}
        """Turn numbers of each thread, in order."""
        self._place: list[int] = []
        """Each turn's place in its thread's list."""
        self._turn_of_message: dict[str, int] = {}
        self._index = InvertedIndex()
        for turn in turns:
            self._register(turn.messages, turn.block_id, turn.thread_id)
        # Keys in arrival order, so that the index's tie-break (key order) keeps conversation order.
        self._index.add_many((_key(number), self._fields(number)) for number in range(len(self._turns)))

    @classmethod
    def of(cls, blocks: Iterable[Block], open_tail: Iterable[Message]) -> RankedRawSearch:
        return cls(memory_turns(blocks, open_tail))

    def append(self, message: Message, block_id: str | None = None) -> None:
        """Add a message after the others of its thread (a message already held is left as it is): a user
        message, or a thread's first, starts a turn; a reply joins the thread's last turn. That turn and the
        `NEARBY_TURNS` before it, which see it as a neighbour, are indexed again."""
        if message.id in self._turn_of_message:
            return
        thread = self._threads.get(message.thread_id)
        if message.role == "user" or not thread:
            self._register((message,), block_id, message.thread_id)
        else:
            last = self._turns[thread[-1]]
            self._turns[thread[-1]] = replace(last, messages=(*last.messages, message))
            self._turn_of_message[message.id] = thread[-1]
        for number in self._threads[message.thread_id][-1 - NEARBY_TURNS :]:
            self._index.replace(_key(number), self._fields(number))

    def seal(self, block: Block) -> None:
        """Record that `block` now holds its messages (the text is unchanged: nothing is indexed again, but
        messages not seen yet are appended)."""
        for message in block.l5_raw:
            number = self._turn_of_message.get(message.id)
            if number is None:
                self.append(message, block.id)
            elif self._turns[number].messages[0].id == message.id:
                self._turns[number] = replace(self._turns[number], block_id=block.id)

    def search(self, query: str, limit: int = 6, explain: bool = False) -> list[RankedRawHit]:
        """The best `limit` turns for `query`, best first; no hit when no turn shares a term with it."""
        if limit <= 0:
            return []
        terms = ranked_text(query)
        if not explain:
            return [self._hit(key, score) for key, score in self._index.rank(terms, limit=limit)]
        return [self._hit(hit.key, hit.score, hit) for hit in self._index.rank(terms, limit=limit, explain=True)]

    def _hit(self, key: str, score: float, explanation: ExplainedHit | None = None) -> RankedRawHit:
        number = int(key)
        return RankedRawHit(self._turns[number], score, tuple(self._turns[n] for n in self._nearby(number)), explanation)

    def _register(self, messages: tuple[Message, ...], block_id: str | None, thread_id: str | None) -> None:
        number = len(self._turns)
        self._turns.append(RawTurn(messages, block_id, thread_id, number))
        thread = self._threads.setdefault(thread_id, [])
        self._place.append(len(thread))
        thread.append(number)
        for message in messages:
            self._turn_of_message[message.id] = number

    def _nearby(self, number: int) -> list[int]:
        thread, place = self._threads[self._turns[number].thread_id], self._place[number]
        return [other for other in thread[max(0, place - NEARBY_TURNS) : place + NEARBY_TURNS + 1] if other != number]

    def _fields(self, number: int) -> list[SearchField]:
        fields: list[SearchField] = [("turn", ranked_text(self._turns[number].text), TURN_WEIGHT)]
        for other in self._nearby(number):
            distance = self._place[other] - self._place[number]
            side = "before" if distance < 0 else "after"
            fields.append((f"{side} {abs(distance)}", ranked_text(self._turns[other].text), NEARBY_WEIGHT))
        return fields


class MemoryTurnSearch:
    """`RankedRawSearch` over a memory: built on the first search, then kept current from the memory's
    commit notifications (`on_applied`, as the engine's other indexes) instead of being rebuilt."""

    def __init__(self, memory: TurnSource):
        self._memory = memory
        self._search: RankedRawSearch | None = None

    def on_applied(self, section: str, keys: Sequence[str]) -> None:
        if self._search is None:
            return
        if section == "*":
            self._search = None
        elif section == "openTail":
            tail = {message.id: message for message in self._memory.list_open_tail()}
            for key in keys:
                if key in tail:  # a message that left the tail is in a block now (see "blocks")
                    self._search.append(tail[key])
        elif section == "blocks":
            for key in keys:
                self._search.seal(self._memory.get_block(key))

    def search(self, query: str, limit: int = 10, explain: bool = False) -> list[RankedRawHit]:
        """`RankedRawSearch.search`, with the arguments checked as the facade's other searches do."""
        if not isinstance(query, str):
            raise InvalidInputError(f"query must be a string, got {type(query).__name__}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputError(f"limit must be a positive integer, got {limit!r}")
        if not isinstance(explain, bool):
            raise InvalidInputError(f"explain must be true or false, got {explain!r}")
        if self._search is None:
            self._search = RankedRawSearch.of(self._memory.list_blocks(), self._memory.list_open_tail())
        return self._search.search(query, limit, explain)

_WORD = "word:"

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
    return _stemmer().stemWord(word)


@lru_cache(maxsize=1)
def _stemmer():
    # Imported on first use: snowballstemmer loads every language's stemmer, which a process that never runs
    # a ranked raw search (the CLI's event search, the app's start) should not pay for.
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def _key(index: int) -> str:
    return f"{index:012d}"



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
