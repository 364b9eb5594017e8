"""Search orchestration: candidates, filters, structured rankings, the soft-filter and empty-query rules, RRF,
limits, and explanations (spec §6.4–§6.6). BM25 comes from `stratagate.search` (one inverted index for events,
one for element facts, built on first search and kept current on every write).

Searches only read: `Retrieval` sees a memory through `SearchSource`, its public read methods, the way
`raw_search.MemoryTurnSearch` sees it through `TurnSource`. Recording a retrieval (`record=True`: hits get
`lastRetrievedAt`, as the reference does on every search) is a write, done by the `StrataGate` facade. With `explain=True` each hit carries an explanation (its rank in every ranking, its BM25 term
contributions per field) and the result list carries the candidates that were left out, and why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from stratagate.arrays import np
from stratagate.cancellation import checkpoint
from stratagate.errors import InvalidInputError
from stratagate.event_cache import EVENT_CANDIDATE_STATUSES, EventSearchCache, parse_bound
from stratagate.model import EVENT_STATUSES, Block, Element, ElementFact, Event, EventCopies, Message
from stratagate.search.collation import locale_compare_key
from stratagate.search.documents import element_fact_search_fields, event_search_fields
from stratagate.search.index import ExplainedHit, InvertedIndex
from stratagate.search.rrf import RRF_K, fuse
from stratagate.search.stored import StoredEventIndex
from stratagate.search.stored.facets import StoredFacets
from stratagate.search.stored.filtered import fused_head
from stratagate.search.subsets import ALL, Subset, all_of
from stratagate.search.tokenize import fuzzy_search_match, normalize_search_text, search_tokens

if TYPE_CHECKING:
    from stratagate.search.stored_facts import StoredFactIndex

RAW_BLOCKS_PER_READ = 64
"""Blocks a raw-message search reads at a time."""
ELEMENTS_PER_READ = 500
"""Elements an element search reads at a time when it indexes them or lists their facts."""


@dataclass(frozen=True)
class _FactLabels:
    """What element search's filters and structured order read of a fact's element."""

    element_id: str
    names: tuple[str, ...]
    """The element's name and aliases."""
    type: str
    updated_at: str


@dataclass
class HitExplanation:
    """Why a hit ranked where it did."""

    ranks: dict[str, int | None]
    """0-based rank in each ranking that was fused (None: not in that ranking)."""
    bm25: ExplainedHit | None = None
    """BM25 score, idf per term and per-field term contributions (None when BM25 did not match it)."""


@dataclass(frozen=True)
class ExcludedCandidate:
    id: str
    reason: str
    """'status forgotten' / 'status archived', 'filter mismatch: participants, eventType', 'cut by limit (rank N)'."""


@dataclass
class SearchExplanation:
    query: str
    tokens: list[str]
    mode: str
    """'bm25', 'hard filters' (all filters intersect), 'soft filters' (filters as boosts) or 'fallback'
    (tokenless query, no ranking matched: every candidate by the structured order)."""
    rankings: dict[str, list[str]]
    excluded: list[ExcludedCandidate] = field(default_factory=list)


@dataclass
class EventHit:
    event: Event
    score: float
    explanation: HitExplanation | None = None

    @property
    def id(self) -> str:
        return self.event.id


@dataclass
class ElementHit:
    element: Element
    fact: ElementFact
    score: float
    explanation: HitExplanation | None = None

    @property
    def id(self) -> str:
        return self.fact.id

    @property
    def element_id(self) -> str:
        return self.element.id

    @property
    def name(self) -> str:
        return self.element.name

    @property
    def type(self) -> str:
        return self.element.type


Hit = TypeVar("Hit", "EventHit", "ElementHit")


class SearchHits(list[Hit], Generic[Hit]):
    """A list of hits; with `explain=True`, `.explanation` describes the rankings and exclusions."""

    explanation: SearchExplanation | None = None


@dataclass
class RawHit:
    block_id: str
    turn_range: tuple[int, int]
    message: Message
    nearby: list[Message]


class SearchSource(Protocol):
    """What `Retrieval` reads of a memory (the `StrataGate` facade has it)."""

    @property
    def current_turn(self) -> int: ...

    def list_events(self) -> list[Event]: ...

    def element_ids(self, where: dict[str, Any] | None = None) -> list[str]: ...

    def event_ids(self, where: dict[str, Any] | None = None) -> list[str]: ...

    def get_events(self, ids: Sequence[str]) -> list[Event]: ...
    def event_search_index(self) -> StoredEventIndex | None: ...

    def element_search_index(self) -> StoredFactIndex | None: ...

    def block_ids(self, where: dict[str, Any] | None = None) -> list[str]: ...

    def get_blocks(self, ids: Sequence[str]) -> list[Block]: ...

    def get_elements(self, ids: Sequence[str]) -> list[Element]: ...


def _outdated(index: StoredEventIndex | StoredFactIndex) -> bool:
    """Whether an outside-cache index may show an older revision than the database's (another process
    committed since): the backend is asked again, and answers with the index of the revision now stored."""
    return not index.follows_commits and not index.still_current()


def _check_limit(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(f"limit must be a number, got {value!r}")


def _limit(value: Any, default: int, maximum: int) -> int:
    """The reference's `slice(0, Math.max(1, Math.min(maximum, limit ?? default)))`: clamped to 1..maximum and
    truncated; NaN (which Math.min/max propagate and slice reads as 0) keeps nothing."""
    if value is None:
        return default
    _check_limit(value)
    if math.isnan(value):
        return 0
    return int(min(maximum, max(1, value)))


def _optional_text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string, got {type(value).__name__}")
    return value


def _wanted_names(participants: Iterable[Any]) -> list[str]:
    """The participants filter's names, normalized, the empty ones left out."""
    wanted = [normalize_search_text(_optional_text(name, "participants") or "") for name in participants]
    return [name for name in wanted if name]


def _fused(rankings: list[tuple[str, list[str]]], limit: int, explain: bool,
           explain_bm25: Callable[[list[str]], dict[str, ExplainedHit]],
           ) -> tuple[list[tuple[str, float, HitExplanation | None]], list[str]]:
    """RRF over the rankings: the kept (id, score, explanation) and the ids cut by the limit (listed only with
    `explain`; without it only the kept hits are fused, exact as every ranking lists an id at most once)."""
    if not explain and len(rankings) == 1:
        # A ranking alone is the fused order, scored as `fuse` scores it, without building its FusedHits
        # (frozen dataclasses, about 1 µs each: most of a repeated query without words' fusion).
        head = rankings[0][1][:max(limit, 0)]
        return [(item, 1 / (RRF_K + rank + 1), None) for rank, item in enumerate(head)], []
    fused = fuse([ids for _name, ids in rankings], None if explain else limit)
    kept = fused[:limit]
    bm25 = explain_bm25([hit.id for hit in kept]) if explain else {}
    rows = []
    for hit in kept:
        explanation = None
        if explain:
            explanation = HitExplanation({name: rank for (name, _ids), rank in zip(rankings, hit.ranks, strict=True)},
                                         bm25.get(hit.id))
        rows.append((hit.id, hit.score, explanation))
    return rows, [hit.id for hit in fused[limit:]]


def _copied_hits(kept: list[tuple[str, float, HitExplanation | None]],
                 copies: dict[str, EventCopies]) -> SearchHits[EventHit]:
    """Hits of kept events: each search gets copies, so a caller changing one changes no later answer."""
    return SearchHits([EventHit(copies[item](), score, explanation) for item, score, explanation in kept
                       if item in copies])


def _no_explainer(_ids: list[str]) -> dict[str, ExplainedHit]:
    return {}


def _bm25_explainer(index: InvertedIndex, query: str, has_tokens: bool) -> Callable[[list[str]], dict[str, ExplainedHit]]:
    """Per-hit BM25 details (statistics of the whole index) for the given ids."""
    def explain(ids: list[str]) -> dict[str, ExplainedHit]:
        if not has_tokens or not ids:
            return {}
        return {hit.key: hit for hit in index.rank(query, restrict_to=ids, explain=True)}  # type: ignore[union-attr]
    return explain


def _status_exclusions(items: list[Any], tokens: list[str], matches_query: Callable[[Any], bool],
                       ) -> list[ExcludedCandidate]:
    """Candidates left out by their status (with tokens: only those that share one with the query)."""
    return [ExcludedCandidate(item.id, f"status {item.status}") for item in items
            if not tokens or matches_query(item)]


def _list_mismatches(filters: list[tuple[str, list[str]]], intersection: list[str] | None,
                     ids: list[str]) -> list[tuple[str, list[str]]]:
    """(id, the filters it fails) of every id outside the hard filters' intersection, in `ids` order."""
    if intersection is None:
        return []
    kept = set(intersection)
    matching = [(name, set(members)) for name, members in filters]
    return [(item, [name for name, members in matching if item not in members])
            for item in ids if item not in kept]


def _mismatch_exclusions(mismatched: Iterable[tuple[str, list[str]]]) -> list[ExcludedCandidate]:
    return [ExcludedCandidate(item, "filter mismatch: " + ", ".join(failed)) for item, failed in mismatched]


def _explanation(query: str, tokens: list[str], mode: str, rankings: list[tuple[str, list[str]]],
                 cut: list[str], size: int, excluded: list[ExcludedCandidate]) -> SearchExplanation:
    """The explanation of a search: its rankings, and what it left out (`excluded`, then what the limit
    cut)."""
    excluded = excluded + [ExcludedCandidate(item, f"cut by limit {size} (fused rank {size + offset + 1})")
                           for offset, item in enumerate(cut)]
    return SearchExplanation(query, tokens, mode, dict(rankings), excluded)


S = TypeVar("S")
"""A candidate set: a `Subset` of a stored index, or a list of ids in candidate order."""


class _EventFilters(Protocol[S]):
    """What answers the event filters: the loaded events (`EventSearchCache`, id lists) or the stored index's
    columns (`StoredFacets`, `Subset`s)."""

    def with_participants(self, wanted: list[str], /) -> S: ...
    def with_event_type(self, requested: str, /) -> S: ...
    def happened_within(self, low: float, high: float, /) -> S: ...


def _event_filters(source: _EventFilters[S], wanted: list[str], type_wanted: str, happened_from: str | None,
                   happened_to: str | None) -> list[tuple[str, S]]:
    """The named hard filters of an event search, in the reference's order."""
    filters: list[tuple[str, S]] = []
    if wanted:
        filters.append(("participants", source.with_participants(wanted)))
    if type_wanted:
        filters.append(("eventType", source.with_event_type(type_wanted)))
    if happened_from or happened_to:
        filters.append(("happened", source.happened_within(parse_bound(happened_from, -math.inf),
                                                           parse_bound(happened_to, math.inf))))
    return filters


def _rankings(
    *,
    has_tokens: bool,
    bm25: Callable[[S | None], list[str]],
    structured: Callable[[S, bool], list[str]],
    filters: list[tuple[str, S]],
    intersect: Callable[[list[S]], S],
    exists: Callable[[S], bool],
    everything: S,
) -> tuple[str, list[tuple[str, list[str]]], S | None]:
    """(mode, named rankings, the hard-filter intersection or None) by the reference's rules.

    `structured(subset, alone)` orders a subset; `alone` says whether it is the only ranking that can hold
    ids (so the fused order is its order and its head is enough). Soft filters fuse one structured ranking
    per filter, where an id ranked low in two of them can beat one ranked first in one."""
    if filters:
        intersection = intersect([subset for _name, subset in filters])
        if exists(intersection):
            rankings = [("bm25", bm25(intersection)), ("structured", structured(intersection, True))]
            return "hard filters", rankings, intersection
        rankings = [("bm25", bm25(None))]
        for name, subset in filters:
            ordered = structured(subset, False)
            if ordered:
                rankings.append((f"structured:{name}", ordered))
        mode = "soft filters"
    else:
        rankings = [("bm25", bm25(None))]
        mode = "bm25"
        if has_tokens and not rankings[0][1]:
            return mode, [], None
    if not any(ids for _name, ids in rankings):
        if has_tokens:
            return mode, [], None
        return "fallback", [("structured", structured(everything, True))], None
    return mode, rankings, None


def _stored_rankings(**options: Any) -> tuple[str, list[tuple[str, list[str]]], Subset | None]:
    """`_rankings` over a stored index, whose candidate sets are `Subset`s of it."""
    return _rankings(intersect=all_of, everything=ALL, **options)


def _listed_rankings(all_ids: list[str],
                     **options: Any) -> tuple[str, list[tuple[str, list[str]]], list[str] | None]:
    """`_rankings` over loaded candidates, whose sets are lists of ids in `all_ids` order."""
    return _rankings(intersect=_intersection, exists=bool, everything=all_ids, **options)


def _intersection(lists: list[list[str]]) -> list[str]:
    # Every filter lists its matches in candidate order, so the shortest one, kept where all others match,
    # is the intersection in that order.
    shortest = min(lists, key=len)
    others = [set(ids) for ids in lists if ids is not shortest]
    return [item for item in shortest if all(item in other for other in others)]


class Retrieval:
    """Searches over one memory. Built lazily by `StrataGate.retrieval`, which calls `on_applied` after each
    commit."""

    def __init__(self, memory: SearchSource):
        self._memory = memory
        self._events: InvertedIndex | None = None
        self._event_filters: EventSearchCache | None = None
        self._facts: InvertedIndex | None = None
        self._fact_elements: dict[str, str] = {}
        self._element_labels: dict[str, tuple[str, tuple[str, ...], str]] = {}
        # The storage's persistent event index (None: in-memory storage) and its filters and orders.
        self._stored: StoredEventIndex | None | bool = False
        self._facets: StoredFacets | None = None
        # The storage's persistent element index (None: in-memory storage).
        self._stored_facts: StoredFactIndex | None | bool = False
        self._kept_answer: tuple[list[str], dict[str, EventCopies], tuple[tuple[EventCopies, float], ...]] | None = None
        """(a kept head, its hits' kept events, each hit's event and score): the last answer of a query without
        words or filters, fused once for as long as the revision keeps that head and those events."""

    # index upkeep -------------------------------------------------------------------------------------------
    def _event_index(self) -> InvertedIndex:
        if self._events is None:
            index = InvertedIndex()
            index.add_many((event.id, event_search_fields(event.to_record()))
                           for event in self._memory.list_events() if event.status in EVENT_CANDIDATE_STATUSES)
            self._events = index
        return self._events

    def _event_cache(self) -> EventSearchCache:
        if self._event_filters is None:
            self._event_filters = EventSearchCache(self._memory.list_events())
        return self._event_filters

    def _fact_index(self) -> InvertedIndex:
        if self._facts is None:
            index = InvertedIndex()
            self._fact_elements, self._element_labels = {}, {}
            for element in self._each_element():
                checkpoint()
                self._index_element(index, element)
            self._facts = index
        return self._facts

    def _each_element(self) -> Iterator[Element]:
        """Every element in section order, read a chunk at a time: the section is never held whole."""
        ids = self._memory.element_ids()
        for start in range(0, len(ids), ELEMENTS_PER_READ):
            yield from self._memory.get_elements(ids[start : start + ELEMENTS_PER_READ])

    def _index_element(self, index: InvertedIndex, element: Element) -> None:
        """(Re-)index the element's facts. Facts are replaced, never edited, so for a just-committed copy only
        the facts it replaced or added need indexing (re-indexing an unchanged fact changes nothing), unless
        the element's name, aliases or type (part of every fact's document) changed."""
        labels = (element.name, tuple(element.aliases), element.type)
        relabelled = self._element_labels.get(element.id) != labels
        self._element_labels[element.id] = labels
        element_record: dict | None = None
        changed = None if relabelled else element.changed_facts()
        for fact in element.facts if changed is None else changed:
            if element_record is None:
                element_record = {"name": element.name, "aliases": element.aliases, "type": element.type}
            index.replace(fact.id, element_fact_search_fields(element_record, fact.to_record()))
            self._fact_elements[fact.id] = element.id

    def _stored_index(self) -> StoredEventIndex | None:
        stored = self._stored
        if stored is False or (isinstance(stored, StoredEventIndex) and _outdated(stored)):
            self._stored = self._memory.event_search_index()
            if self._stored is not stored:
                self._facets = None
        return self._stored  # type: ignore[return-value]

    def _stored_fact_index(self) -> StoredFactIndex | None:
        facts = self._stored_facts
        if facts is False or (facts and _outdated(facts)):  # an index, not False or None
            self._stored_facts = self._memory.element_search_index()
        return self._stored_facts  # type: ignore[return-value]

    def _stored_facets(self, index: StoredEventIndex) -> StoredFacets:
        if self._facets is None:
            self._facets = StoredFacets(index)
        return self._facets

    def on_applied(self, section: str, keys: list[str]) -> None:
        """Keep the indexes and the events' filter inputs current after a commit (called by the memory)."""
        stored = self._stored
        if section in ("events", "*") and isinstance(stored, StoredEventIndex) and not stored.follows_commits:
            # An outside-cache index (a writable v5/v6 file's) shows the revision it was built for.
            self._stored, self._facets = False, None
        if self._facets is not None:
            self._facets.committed()
        facts = self._stored_facts
        if section in ("elements", "*") and facts and not facts.follows_commits:  # an index, not False or None
            self._stored_facts = False
        if section == "*":
            self._events = self._facts = self._event_filters = self._facets = None
        elif section == "events" and (self._events is not None or self._event_filters is not None):
            events = {event.id: event for event in self._memory.get_events(keys)}
            for key in keys:
                event = events.get(key)
                if self._event_filters is not None:
                    self._event_filters.update(key, event)
                if self._events is None:
                    continue
                if event is not None and event.status in EVENT_CANDIDATE_STATUSES:
                    self._events.replace(key, event_search_fields(event.to_record()))
                elif key in self._events:
                    self._events.remove(key)
        elif section == "elements" and self._facts is not None:
            for element in self._memory.get_elements(keys):
                self._index_element(self._facts, element)

    # events -------------------------------------------------------------------------------------------------
    def search_events(
        self,
        query: str,
        *,
        limit: int | None = None,
        temporal_intent: str | None = None,
        participants: Sequence[str] | None = None,
        event_type: str | None = None,
        happened_from: str | None = None,
        happened_to: str | None = None,
        explain: bool = False,
    ) -> SearchHits[EventHit]:
        if not isinstance(query, str):
            raise InvalidInputError(f"query must be a string, got {type(query).__name__}")
        size = _limit(limit, 6, 20)
        if participants is not None and (isinstance(participants, str) or not isinstance(participants, Iterable)):
            raise InvalidInputError("participants must be a list of names")
        wanted = _wanted_names(participants) if participants else []
        event_type = _optional_text(event_type, "event_type")
        type_wanted = normalize_search_text(event_type) if event_type else ""
        happened_from = _optional_text(happened_from, "happened_from")
        happened_to = _optional_text(happened_to, "happened_to")
        tokens = search_tokens(query)
        stored = self._stored_index()
        if stored is not None and not (tokens or wanted or type_wanted or happened_from or happened_to or explain):
            unchanged = self._unchanged_empty_answer(stored, temporal_intent, size)
            if unchanged is not None:
                return unchanged
        if stored is not None:
            # One read transaction for the index, the filters and the hits (each one a round trip or more on
            # PostgreSQL), begun once the index is there.
            with self._memory.backend.shared_read():
                if explain:
                    return self._explain_stored_events(stored, query, tokens, size, temporal_intent, wanted,
                                                       type_wanted, happened_from, happened_to)
                return self._search_stored_events(stored, query, tokens, size, temporal_intent, wanted,
                                                  type_wanted, happened_from, happened_to)
        if tokens and not (wanted or type_wanted or happened_from or happened_to) and not explain:
            return self._text_only_events(query, size)
        return self._search_events(query, tokens, size, temporal_intent, wanted, type_wanted, happened_from,
                                   happened_to, explain)

    def _text_only_events(self, query: str, size: int) -> SearchHits[EventHit]:
        """A query with tokens and no filter fuses a single ranking (BM25): only its top `size` are needed, so
        the cost is the query's postings, not a pass over every event."""
        ranked = self._event_index().rank(query, limit=size)
        kept, _cut = _fused([("bm25", [key for key, _score in ranked])], size, False, _no_explainer)  # type: ignore[misc]
        events = self._memory.get_events([item for item, _score, _explanation in kept])
        return SearchHits(EventHit(event, score) for event, (_item, score, _explanation) in zip(events, kept, strict=True))

    def _unchanged_empty_answer(self, index: StoredEventIndex, temporal_intent: Any,
                                size: int) -> SearchHits[EventHit] | None:
        """The answer of a query without words or filters kept with its index's revision, when the storage
        tells without a read that nothing was committed since (the app repeats its list's query): no
        connection, no transaction, only copies of the kept events. None when it must be searched."""
        kept = self._stored_facets(index).unchanged_head_and_hits(ALL, temporal_intent, self._memory.current_turn,
                                                                  size)
        if kept is None:
            return None
        head, events = kept
        answer = self._kept_answer
        if answer is None or answer[0] is not head or answer[1] is not events:
            # A head is kept per size (its `top`): the same head is the same fusion.
            fused = _fused([("structured", head)], size, False, _no_explainer)[0]
            answer = self._kept_answer = (head, events, tuple((events[item], score)
                                                              for item, score, _explanation in fused if item in events))
        return SearchHits([EventHit(copies(), score) for copies, score in answer[2]])

    def _search_stored_events(self, index: StoredEventIndex, query: str, tokens: list[str], size: int,
                              temporal_intent: Any, wanted: list[str], type_wanted: str, happened_from: str | None,
                              happened_to: str | None) -> SearchHits[EventHit]:
        """`_search_events` (without explain) over the storage's persistent index: the same rankings by the same
        rules (`_rankings`), with filters and structured orders answered by the index's columns (`EventFacets`),
        and only the kept hits fetched."""
        if tokens and not (wanted or type_wanted or happened_from or happened_to):
            ranked = index.rank(query, limit=size)
            kept = _fused([("bm25", [key for key, _score in ranked])], size, False, _no_explainer)[0]
            return self._event_hits(kept, last=True)
        facets = self._stored_facets(index)
        turn = self._memory.current_turn
        head_only = not tokens  # as in _search_events: BM25 ranks nothing, a structured ranking alone is the order

        def structured(subset: Subset, alone: bool) -> list[str]:
            return facets.structured(subset, temporal_intent, turn, size if head_only and alone else None)

        filters = _event_filters(facets, wanted, type_wanted, happened_from, happened_to)
        rankings: list[tuple[str, list[str]]] = []
        if filters:
            intersection = all_of(subset for _name, subset in filters)
            if tokens:
                # RRF of BM25 and the structured order over the intersection, from the rankings' heads.
                fused = fused_head(index, facets, query, intersection, temporal_intent, turn, size)
                if fused is not None:
                    return self._event_hits([(item, score, None) for item, score in fused], last=True)
            else:
                head = structured(intersection, True)
                if head:
                    rankings = [("bm25", []), ("structured", head)]
            if not rankings:
                # Soft filters: one structured ranking per filter that matches something.
                rankings = [("bm25", [key for key, _score in index.rank(query)])]
                for name, subset in filters:
                    ordered = structured(subset, False)
                    if ordered:
                        rankings.append((f"structured:{name}", ordered))
        if not any(ids for _name, ids in rankings):
            if tokens:
                return SearchHits()
            # When the head and its hits are kept, the index's revision is the last read (on PostgreSQL the
            # transaction ends in its round trip); if it moved, the reads after it begin another snapshot.
            kept_answer = facets.head_and_hits_kept(ALL, temporal_intent, turn, size)
            with self._memory.backend.last_read() if kept_answer else nullcontext():
                rankings = [("structured", structured(ALL, True))]
        kept = _fused(rankings, size, False, _no_explainer)[0]
        return self._kept_event_hits(facets, kept) if not tokens else self._event_hits(kept, last=True)

    def _explain_stored_events(self, index: StoredEventIndex, query: str, tokens: list[str], size: int,
                               temporal_intent: Any, wanted: list[str], type_wanted: str,
                               happened_from: str | None, happened_to: str | None) -> SearchHits[EventHit]:
        """`_search_events` with `explain=True` over the storage's persistent index: every ranking in full,
        the filters' exclusions from the index's columns, and BM25 details from its statistics and the kept
        hits' fields; no other event is read (those left out by their status are read by id)."""
        # Imported here: a search without explain (a one-shot CLI search) does not load them.
        from stratagate.search.explained import explain_stored_events, filter_mismatches, rank_within

        facets = self._stored_facets(index)
        turn = self._memory.current_turn
        filters = _event_filters(facets, wanted, type_wanted, happened_from, happened_to)
        ordered_subsets: dict[Subset, list[tuple[int, str]]] = {}

        def ordered(subset: Subset) -> list[tuple[int, str]]:
            checkpoint()
            if subset not in ordered_subsets:
                ordered_subsets[subset] = facets.ordered(subset, temporal_intent, turn)
            return ordered_subsets[subset]

        def bm25(subset: Subset | None) -> list[str]:
            checkpoint()
            if not tokens:
                return []
            if subset is None:
                return [key for key, _score in index.rank(query)]
            names = dict(ordered(subset))
            if not names:
                return []
            allowed = np.fromiter(names, dtype=np.int64, count=len(names))
            return [key for key, _score in rank_within(index, query, allowed)]

        mode, rankings, intersection = _stored_rankings(
            has_tokens=bool(tokens), bm25=bm25, exists=lambda subset: bool(ordered(subset)), filters=filters,
            structured=lambda subset, _alone: [item for _p, item in ordered(subset)])
        checkpoint()

        def explain_bm25(ids: list[str]) -> dict[str, ExplainedHit]:
            records = {event.id: event.to_record() for event in self._memory.get_events(ids)}
            return explain_stored_events(index, query, records)

        kept, cut = _fused(rankings, size, True, explain_bm25)
        hits = self._event_hits(kept)
        checkpoint()
        left_out = [status for status in EVENT_STATUSES if status not in EVENT_CANDIDATE_STATUSES]
        excluded = _status_exclusions(
            self._memory.get_events(self._memory.event_ids({"status": left_out})), tokens,
            lambda e: bool(set(tokens) & set(search_tokens(
                " ".join(text for _n, text, _w in event_search_fields(e.to_record()))))))
        if intersection is not None:
            with index.connect() as connection:
                mismatched = filter_mismatches(connection, index.namespace, "search_events", "event_id",
                                               "position", filters)
            excluded += _mismatch_exclusions(mismatched)
        hits.explanation = _explanation(query, tokens, mode, rankings, cut, size, excluded)
        return hits

    def _event_hits(self, kept: list[tuple[str, float, HitExplanation | None]], *,
                    last: bool = False) -> SearchHits[EventHit]:
        """Hits for the kept (id, score, explanation), their events fetched by id (`last`: the search's last
        read, which may end its read transaction)."""
        with self._memory.backend.last_read() if last else nullcontext():
            events = {event.id: event for event in self._memory.get_events([item for item, _s, _e in kept])}
        return SearchHits(EventHit(events[item], score, explanation) for item, score, explanation in kept
                          if item in events)

    def _kept_event_hits(self, facets: StoredFacets,
                         kept: list[tuple[str, float, HitExplanation | None]]) -> SearchHits[EventHit]:
        """`_event_hits` for a query without words: its hits' events are kept for the index's revision with
        its head (the app repeats its list's query), and each search gets copies of them."""
        ids = tuple(item for item, _score, _explanation in kept)

        def fetched() -> dict[str, EventCopies]:
            with self._memory.backend.last_read():
                return {event.id: EventCopies(event) for event in self._memory.get_events(ids)}

        return _copied_hits(kept, facets.kept_for_revision("hit events", ids, fetched))

    def _search_events(self, query: str, tokens: list[str], size: int, temporal_intent: Any, wanted: list[str],
                       type_wanted: str, happened_from: str | None, happened_to: str | None,
                       explain: bool) -> SearchHits[EventHit]:
        cache = self._event_cache()
        ids = cache.candidate_ids()
        turn = self._memory.current_turn
        # Without tokens BM25 ranks nothing, so a structured ranking fused alone is the fused order: only its
        # top `size` is needed (explain lists every ranking in full).
        head_only = not (explain or tokens)

        def structured(subset: list[str], alone: bool) -> list[str]:
            checkpoint()  # between ranking steps: a cancelled search stops here
            return cache.structured(subset, temporal_intent, turn, size if head_only and alone else None)

        index = self._event_index()

        def bm25(restrict: list[str] | None) -> list[str]:
            checkpoint()
            return [key for key, _score in index.rank(query, restrict_to=restrict)]  # type: ignore[misc]

        filters = _event_filters(cache, wanted, type_wanted, happened_from, happened_to)

        mode, rankings, intersection = _listed_rankings(ids, has_tokens=bool(tokens), bm25=bm25,
                                                        structured=structured, filters=filters)
        checkpoint()
        kept, cut = _fused(rankings, size, explain, _bm25_explainer(index, query, bool(tokens)))
        hits = SearchHits(EventHit(cache.event(item), score, explanation) for item, score, explanation in kept)
        if explain:
            checkpoint()
            excluded = _status_exclusions(
                [e for e in self._memory.list_events() if e.status not in EVENT_CANDIDATE_STATUSES], tokens,
                lambda e: bool(set(tokens) & set(search_tokens(
                    " ".join(text for _n, text, _w in event_search_fields(e.to_record()))))))
            excluded += _mismatch_exclusions(_list_mismatches(filters, intersection, ids))
            hits.explanation = _explanation(query, tokens, mode, rankings, cut, size, excluded)
        return hits

    # elements -----------------------------------------------------------------------------------------------
    def search_elements(
        self,
        query: str,
        *,
        limit: int | None = None,
        name: str | None = None,
        type: str | None = None,
        explain: bool = False,
    ) -> SearchHits[ElementHit]:
        if not isinstance(query, str):
            raise InvalidInputError(f"query must be a string, got {query.__class__.__name__}")
        size = _limit(limit, 8, 12)
        name = _optional_text(name, "name")
        element_type = _optional_text(type, "type")
        tokens = search_tokens(query)
        stored = self._stored_fact_index()
        if stored is not None:
            return self._search_stored_elements(stored, query, tokens, size, name, element_type, explain)
        if tokens and not (name and normalize_search_text(name)) and not element_type and not explain:
            return self._text_only_facts(query, size)
        return self._search_elements(query, tokens, size, name, element_type, explain)

    def _text_only_facts(self, query: str, size: int) -> SearchHits[ElementHit]:
        """Like `_text_only_events`: a single BM25 ranking, only its top `size` hits are built."""
        index = self._fact_index()
        ranked = index.rank(query, limit=size)
        kept, _cut = _fused([("bm25", [key for key, _score in ranked])], size, False, _no_explainer)  # type: ignore[misc]
        return self._element_hits([(self._fact_elements[fact_id], fact_id, score, explanation)
                                   for fact_id, score, explanation in kept])

    def _search_stored_elements(self, index: StoredFactIndex, query: str, tokens: list[str], size: int,
                                name: str | None, element_type: str | None,
                                explain: bool) -> SearchHits[ElementHit]:
        """`_search_elements` over the storage's persistent element index: the same rankings by the same
        rules, filters and the structured order answered by its columns, and only the kept hits' elements
        read."""
        filters: list[tuple[str, Subset]] = []
        if name and normalize_search_text(name):
            filters.append(("name", index.with_name(name)))
        if element_type:
            filters.append(("type", index.of_type(element_type)))
        if tokens and not filters and not explain:
            ranked = [key for key, _score in index.rank(query, limit=size)]
            mode, rankings, intersection = "bm25", [("bm25", ranked)], None
        else:
            mode, rankings, intersection = _stored_rankings(
                has_tokens=bool(tokens), exists=index.exists, filters=filters,
                bm25=lambda subset: [key for key, _score in index.rank(query, subset)],
                structured=lambda subset, _alone: index.structured(subset))

        def explain_bm25(ids: list[str]) -> dict[str, ExplainedHit]:
            return index.explain(query, ids, self._fact_fields) if tokens else {}

        kept, cut = _fused(rankings, size, explain, explain_bm25)
        elements = index.elements_of([item for item, _score, _explanation in kept])
        hits = self._element_hits([(elements[item], item, score, explanation)
                                   for item, score, explanation in kept])
        if explain:
            mismatched = index.mismatches(filters) if intersection is not None else []
            hits.explanation = _explanation(query, tokens, mode, rankings, cut, size,
                                            _mismatch_exclusions(mismatched))
        return hits

    def _fact_fields(self, owners: dict[str, str]) -> dict[str, list[tuple[str, str, float]]]:
        """The search fields of these facts (fact id → element id), their elements read by id."""
        fields = {}
        for element in self._memory.get_elements(list(dict.fromkeys(owners.values()))):
            labels = {"name": element.name, "aliases": element.aliases, "type": element.type}
            for fact in element.facts:
                if owners.get(fact.id) == element.id:
                    fields[fact.id] = element_fact_search_fields(labels, fact.to_record())
        return fields

    def _element_hits(self, kept: list[tuple[str, str, float, Any]]) -> SearchHits[ElementHit]:
        """Hits for the kept (element id, fact id, score, explanation), only their elements fetched."""
        elements = {element.id: element for element in
                    self._memory.get_elements(list(dict.fromkeys(element_id for element_id, *_rest in kept)))}
        hits: SearchHits[ElementHit] = SearchHits()
        for element_id, fact_id, score, explanation in kept:
            element = elements.get(element_id)
            if element is not None:
                fact = element.fact(fact_id)
                hits.append(ElementHit(element, fact, score, explanation))  # type: ignore[arg-type]
        return hits

    def _search_elements(self, query: str, tokens: list[str], size: int, name: str | None, element_type: str | None,
                         explain: bool) -> SearchHits[ElementHit]:
        # What filters and orders read of each fact's element, the elements read a chunk at a time.
        labels: dict[str, _FactLabels] = {}
        for element in self._each_element():
            of_element = _FactLabels(element.id, (element.name, *element.aliases), element.type,
                                     element.updated_at)
            labels.update((fact.id, of_element) for fact in element.facts)
        ids = list(labels)

        def structured(subset: list[str], _alone: bool) -> list[str]:
            ordered = sorted(subset, key=locale_compare_key)
            ordered.sort(key=lambda fact_id: locale_compare_key(labels[fact_id].updated_at), reverse=True)
            return ordered

        index = self._fact_index()

        def bm25(restrict: list[str] | None) -> list[str]:
            return [key for key, _score in index.rank(query, restrict_to=restrict)]  # type: ignore[misc]

        filters: list[tuple[str, list[str]]] = []
        if name and normalize_search_text(name):
            filters.append(("name", [fid for fid, fact in labels.items()
                                     if any(fuzzy_search_match(label, name) for label in fact.names)]))
        if element_type:
            filters.append(("type", [fid for fid, fact in labels.items() if fact.type == element_type]))
        mode, rankings, intersection = _listed_rankings(ids, has_tokens=bool(tokens), bm25=bm25,
                                                        structured=structured, filters=filters)
        kept, cut = _fused(rankings, size, explain, _bm25_explainer(index, query, bool(tokens)))
        hits = self._element_hits([(labels[item].element_id, item, score, explanation)
                                   for item, score, explanation in kept])
        if explain:
            mismatched = _list_mismatches(filters, intersection, ids)
            excluded = _mismatch_exclusions(mismatched)
            hits.explanation = _explanation(query, tokens, mode, rankings, cut, size, excluded)
        return hits

    # raw memory ---------------------------------------------------------------------------------------------
    def search_raw_memory(self, query: str, limit: float | None = 6) -> list[RawHit]:
        """Sealed messages (block order) sharing any token with the query, each with its neighbours; stops
        once it holds `limit` hits, checked after each hit as the reference does: a limit of 1 or less (0, -1)
        gives one hit, 2.5 gives three, NaN or infinity every hit; None is the default 6. Unranked, as the
        reference's; `stratagate.raw_search` ranks turns instead."""
        if not isinstance(query, str):
            raise InvalidInputError(f"query must be a string, got {type(query).__name__}")
        limit = 6 if limit is None else limit
        _check_limit(limit)
        wanted = set(search_tokens(query))
        hits: list[RawHit] = []
        if not wanted:
            return hits
        # The storage names the blocks that may hold a match (sequence order); they are read a few at a time
        # and their messages tokenized, so memory stays bounded and the scan stops at the limit.
        ids = self._memory.block_ids({"messageTokens": sorted(wanted)})
        for start in range(0, len(ids), RAW_BLOCKS_PER_READ):
            checkpoint()
            for block in self._memory.get_blocks(ids[start : start + RAW_BLOCKS_PER_READ]):
                for position, message in enumerate(block.l5_raw):
                    if not wanted.isdisjoint(search_tokens(message.content)):
                        nearby = block.l5_raw[max(0, position - 1):position + 2]
                        hits.append(RawHit(block.id, block.turn_range, message, list(nearby)))
                        if len(hits) >= limit:
                            return hits
        return hits
