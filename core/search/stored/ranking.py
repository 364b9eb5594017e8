"""BM25 over the stored postings of one namespace. Ranking gives the same keys, order and scores as
`InvertedIndex.rank` over the same events, and so as the reference's BM25: N and the mean length are over every
candidate, the document frequency is the term's posting count, and each document's score is summed in
query-term order with the same numpy operations."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import Connection

from stratagate.arrays import np
from stratagate.search.bm25 import K1, B, average_length, idf, unique_query_terms
from stratagate.search.collation import locale_compare_key, sort_tied_runs
from stratagate.search.postings import contributions
from stratagate.search.stored.documents import participant_term
from stratagate.search.stored.tables import INDEX_FORMAT, Connect, chunks, driver_rows, index_exists, marks
from stratagate.search.stored.terms import Postings, merge
from stratagate.storage.driver import one_of


def _unknown() -> None:
    return None


class StoredEventIndex:
    """BM25 over the stored index of one namespace, through `connect()` (a read transaction)."""

    def __init__(self, connect: Connect, namespace: str, *, follows_commits: bool = True,
                 events_beside: bool = False, change_marker: Callable[[], object | None] | None = None):
        self.connect = connect
        self.namespace = namespace
        self.change_marker = change_marker or _unknown
        """A value equal to one read earlier only if no commit changed the database in between, read without
        a transaction; None when that cannot be told so (the storage's `change_marker`)."""
        self.follows_commits = follows_commits
        """False for an index in the outside cache (`search_cache`): it shows one revision, so after a commit
        its holder asks the backend again for the index of the new revision."""
        self.still_current: Callable[[], bool] = lambda: True
        """For an outside-cache index: False when a commit may have changed the database since the backend
        handed it out (another process's too), then its holder asks the backend again (set by the backend)."""
        self._scratch = threading.local()
        """Each thread's array of a score per position (`_zeroed`)."""
        self._kept_postings: tuple[int, dict[str, tuple[int, Postings]]] = (-1, {})
        """(the index's revision, the (document frequency, postings) of the terms last asked at it, the most
        recently asked last): see `KEPT_POSTINGS`."""
        self._keeping = threading.Lock()
        self._names_from_events: bool | None = None if events_beside else False
        """Whether `ids` reads the events table's covering position index (decided at its first call when
        the events are in the index's database: the index is this package's addition to the v7 schema)."""

    def rank(self, query: str, limit: int | None = None) -> list[tuple[str, float]]:
        """(event id, score) with a positive score, best first, ties by `localeCompare` of the id then section
        order."""
        if limit is not None and limit <= 0:
            return []
        with self.connect() as connection:
            positions, scores = self.scored(connection, query, limit=limit)
            ids = self.ids(connection, positions)
        pairs = list(zip(ids, scores.tolist(), strict=True))
        # Only runs of equal scores need the collation keys; the sort is stable, so position breaks their ties.
        tied = np.flatnonzero(scores[1:] == scores[:-1]).tolist()
        sort_tied_runs(pairs, tied, key=lambda pair: locale_compare_key(pair[0]))
        return pairs if limit is None else pairs[:limit]

    def scored(self, connection: Connection, query: str, allowed: np.ndarray | None = None,
               limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(positions, scores) of the documents the query scores (only at `allowed` positions, distinct, when
        given), by score descending then position (then `allowed`'s order, when given): `rank`'s order before
        runs of equal scores are sorted by id. With `limit`, only those scoring at least the limit-th best
        score (ties at the boundary included)."""
        positions, scores = self.unordered(connection, query, allowed, limit)
        order = np.argsort(-scores, kind="stable")
        return positions[order], scores[order]

    def unordered(self, connection: Connection, query: str, allowed: np.ndarray | None = None,
                  limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """`scored`'s (positions, scores) before they are sorted by score: in ascending positions (in
        `allowed`'s order, when given)."""
        terms = unique_query_terms(query)
        nothing = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        if not terms or (allowed is not None and not len(allowed)):
            return nothing
        documents, total_length, postings = self._postings(connection, terms)
        held = [(idf(documents, count), term_postings) for count, term_postings in postings if len(term_postings)]
        if allowed is not None and held:
            held = _within(held, allowed)
        if not documents or not held:
            return nothing
        mean_length = average_length(total_length, documents)
        if len(held) == 1 and limit is not None and allowed is None:
            return _best_of_one(*held[0], mean_length, limit)
        places, totals = _summed(held, mean_length, self._zeroed)
        if limit is not None and allowed is None:
            slots = _best(totals, limit)
            return (slots if places is None else places[slots]), totals[slots]
        # Only allowed positions were scored: in ascending order (a filter's subset), theirs is the order of
        # the scored positions themselves, with no search for each allowed one.
        ascending = allowed is None or bool(np.all(allowed[1:] > allowed[:-1]))
        positions, scores = _scored_at(places, totals, None if ascending else allowed)
        if limit is not None and len(positions) > limit:
            positions, scores = _at_least_limit_th(positions, scores, limit)
        return positions, scores

    def _postings(self, connection: Connection,
                  terms: list[str]) -> tuple[int, int, list[tuple[int, Postings]]]:
        """(documents, total length, (document frequency, current postings) of each indexed query term in query
        order), the statistics and the terms read by one statement (a round trip on PostgreSQL)."""
        documents, total_length, _format, current = self._terms(connection, terms)
        return documents, total_length, [current[term] for term in terms if term in current]

    def name_positions(self, connection: Connection, groups: tuple[tuple[str, ...], ...]) -> np.ndarray | None:
        """The ascending positions of the candidates naming, for each group, one of its (normalized) names, from
        the names' terms (`documents.participant_term`); None when the index has no name terms (its format is
        `FORMAT_WITHOUT_NAME_TERMS`)."""
        names = list(dict.fromkeys(name for group in groups for name in group))
        _documents, _length, index_format, current = self._terms(connection, [participant_term(name) for name in names])
        if index_format != INDEX_FORMAT:
            return None
        found: np.ndarray | None = None
        for group in groups:
            held = [current[participant_term(name)][1].positions for name in group if participant_term(name) in current]
            members = (np.zeros(0, dtype=np.int64) if not held else held[0].astype(np.int64) if len(held) == 1
                       else np.unique(np.concatenate(held)).astype(np.int64))
            found = members if found is None else np.intersect1d(found, members, assume_unique=True)
        return np.zeros(0, dtype=np.int64) if found is None else found

    def _terms(self, connection: Connection,
               terms: list[str]) -> tuple[int, int, str, dict[str, tuple[int, Postings]]]:
        """(documents, total length, the index's format, the (document frequency, current postings) of each
        indexed term among `terms`), read by one statement."""
        kept_at, kept = self._kept_postings
        known = [term for term in terms if term in kept]
        blob = "t.postings"
        known_values: tuple = ()
        if known:  # their blobs are not read again at the revision they were kept at
            known_matching, known_values = one_of(connection, known)
            blob = f"CASE WHEN s.revision = ? AND t.term {known_matching} THEN NULL ELSE t.postings END"
            known_values = (kept_at, *known_values)
        matching, values = one_of(connection, terms)
        rows = driver_rows(connection, f"SELECT s.documents, s.total_length, s.revision, s.format, t.term, t.count, "
                                       f"t.pending, {blob} FROM search_index_state AS s LEFT JOIN search_terms "
                                       f"AS t ON t.namespace = s.namespace AND t.count > 0 AND t.term {matching} "
                                       f"WHERE s.namespace = ?", (*known_values, *values, self.namespace),
                           binary=True)
        documents, total_length, revision, index_format = rows[0][:4]
        if revision != kept_at:
            kept = {}
        settled = {term: (count, pending, postings) for _d, _l, _r, _f, term, count, pending, postings in rows
                   if term is not None}
        current = {term: kept[term] for term in settled if term in kept}
        # `pending` counts the change rows written since the blob was settled (at least): 0 means none.
        changed = [term for term, (_count, pending, _postings) in settled.items() if pending and term not in current]
        overlay: dict[str, list[Any]] = defaultdict(list)
        if changed:
            for term, position, frequency, length in driver_rows(
                    connection, f"SELECT term, position, frequency, length FROM search_term_changes "
                                f"WHERE namespace = ? AND term IN ({marks(len(changed))})",
                    (self.namespace, *changed)):
                overlay[term].append((position, frequency, length))
        for term, (count, _pending, postings) in settled.items():
            if term not in current:
                current[term] = (count, merge(bytes(postings), overlay.get(term, [])))
        self._keep(revision, kept, terms, current)
        return documents, total_length, index_format, current

    def _keep(self, revision: int, kept: dict[str, tuple[int, Postings]], terms: list[str],
              current: dict[str, tuple[int, Postings]]) -> None:
        """Keep the terms' postings for the revision, the most recently asked last, dropping the least recently
        asked beyond `KEPT_POSTINGS` postings."""
        with self._keeping:
            kept_at, held = self._kept_postings
            if kept_at != revision:
                held = {}
            for term in terms:
                if term in current and len(current[term][1]) <= KEPT_POSTINGS:
                    held.pop(term, None)
                    current[term][1].freeze()
                    held[term] = current[term]
            total = sum(len(postings) for _count, postings in held.values())
            while total > KEPT_POSTINGS:
                total -= len(held.pop(next(iter(held)))[1])
            self._kept_postings = (revision, held)

    def _zeroed(self, size: int) -> np.ndarray:
        """`size` zeros to sum scores in, in an array this thread's later queries use again: a fresh one as
        long as the memory (0.8 MB at 100k events) is faulted in page by page on every query, since the
        allocator gives blocks that large back to the kernel once they are freed. Its contents never leave
        the query (`_best` and `_scored_at` copy the scores they keep)."""
        held = getattr(self._scratch, "totals", None)
        if held is None or len(held) < size:
            held = self._scratch.totals = np.zeros(size, dtype=np.float64)
            return held
        totals = held[:size]
        totals.fill(0.0)
        return totals

    def ids(self, connection: Connection, positions: np.ndarray) -> list[str]:
        """The event ids at these positions, in the order given.

        One seek per position, from a joined list: with `position IN (...)` SQLite (no statistics) scans the
        namespace's whole covering happened index instead (15-20 ms at 100k events for 6 ids). A document's
        position is its event's, so beside the events the seek is into their (namespace, position, id) index,
        which holds the id: one small index instead of the primary key's and then the wide row's pages (a
        third less time for a filtered query's hundreds of names, most of them not yet in the page cache)."""
        if self._names_from_events is None:
            self._names_from_events = index_exists(connection, "events", "events_position_idx")
        table, column = ("events", "id") if self._names_from_events else ("search_events", "event_id")
        found: dict[int, str] = {}
        if connection.dialect.name == "postgresql":  # whose planner seeks each one from an array
            found.update(driver_rows(connection, f"SELECT position, {column} FROM {table} "
                                                 f"WHERE namespace = ? AND position = ANY(?)",
                                     (self.namespace, positions.tolist())))
        else:
            for chunk in chunks(positions.tolist()):
                found.update(driver_rows(connection, (
                    f"WITH wanted(position) AS (VALUES {', '.join(['(?)'] * len(chunk))}) "
                    f"SELECT e.position, e.{column} FROM wanted JOIN {table} AS e "
                    f"ON e.namespace = ? AND e.position = wanted.position"), (*chunk, self.namespace)))
        return [found[position] for position in positions.tolist()]


KEPT_POSTINGS = 1_000_000
"""Postings of the terms last asked that the index keeps for its revision (about 7 MB of packed columns and
positions): a repeated query, or another with a word in common, does not read and decode a word's blob again
(a word in nearly every card: 100k postings at 100k events)."""
SPARSE_BELOW = 1 / 16
"""Postings per document position under which the scores are summed over the postings' own positions."""
BOUND_BLOCKS = 1024
"""Blocks whose maxima bound the limit-th best score from below (`_best`)."""
REACH_SAMPLE = 1024
"""A lone term's first postings whose limit-th best score bounds the final one from below (`_reachable`), when
it has more than twice as many."""
REACH_FREQUENCIES = 1 << 16
"""The highest frequency for which `_reachable` tabulates the longest length reaching its bound."""
REACH_SLACK = 1e-9
"""Relative margin on that longest length for the rounding of the floats on either side (a few ulps)."""
SEARCHED_BEYOND = 8
"""Postings per allowed position beyond which `_within` searches the allowed positions in a term's postings
(cheaper from about 10 on: 0.30 against 0.65 ms for 95,000 postings and 6,600 allowed positions)."""
SCORED_AT_ONCE = 8192
"""Postings scored at a time. Their temporaries stay small: in the CPU cache, and reused from the allocator's
free lists rather than fresh pages the kernel must fault in and zero, which cost more than the arithmetic."""


def _scored_parts(term_idf: float, postings: Postings,
                  mean_length: float) -> Iterator[tuple[int, Postings, np.ndarray]]:
    """(start, the next postings from it, their contributions) for each `SCORED_AT_ONCE` postings of a term."""
    for start in range(0, len(postings), SCORED_AT_ONCE):
        part = postings.take(slice(start, start + SCORED_AT_ONCE))
        yield start, part, contributions(term_idf, part.frequencies, part.lengths, mean_length)


def _within(held: list[tuple[float, Postings]], allowed: np.ndarray) -> list[tuple[float, Postings]]:
    """The terms' (idf, postings) with only the postings at `allowed` positions, so that only they are scored.

    A term with many times more postings than `allowed` (a frequent word under a participants filter) has the
    allowed positions looked up in its own: a binary search per allowed position instead of a pass over every
    posting; otherwise each posting is looked up in a mask of the allowed positions."""
    size = 1 + max(int(postings.positions[-1]) for _idf, postings in held)
    ascending = bool(np.all(allowed[1:] > allowed[:-1]))
    inside: np.ndarray | None = None
    kept = []
    for term_idf, postings in held:
        if ascending and len(postings) > SEARCHED_BEYOND * len(allowed):
            slots = np.searchsorted(postings.positions, allowed.astype(postings.positions.dtype, copy=False))
            slots = slots[slots < len(postings)]  # ascending: only the last allowed positions can be past the end
            within = postings.take(slots[postings.positions[slots] == allowed[: len(slots)]])
        else:
            if inside is None:
                inside = np.zeros(size, dtype=bool)
                inside[allowed[allowed < size]] = True
            within = postings.take(inside[postings.positions])
        if len(within):
            kept.append((term_idf, within))
    return kept


def _summed(held: list[tuple[float, Postings]], mean_length: float,
            zeroed: Callable[[int], np.ndarray]) -> tuple[np.ndarray | None, np.ndarray]:
    """(places, totals): each document's BM25 score summed over the terms' (idf, postings) in query-term order,
    the same float additions either way. For one term, or rare words, only at the positions its postings hold
    (`places`, ascending), which then costs no pass over every position; for many postings of several terms
    (cheaper than sorting them) at every position up to the largest (`places` None: the position is the
    index, its totals from `zeroed`).

    A term's postings are in ascending, distinct positions (`merge`): its last position is its largest, a
    lone term's totals are its contributions as they are (0.0 + x is x), and its parts add to distinct
    totals."""
    if len(held) == 1:
        term_idf, postings = held[0]
        totals = np.empty(len(postings), dtype=np.float64)
        for start, part, scores in _scored_parts(term_idf, postings, mean_length):
            totals[start : start + len(part)] = scores
        return postings.positions, totals
    size = 1 + max(int(postings.positions[-1]) for _idf, postings in held)
    places = None
    if sum(len(postings) for _idf, postings in held) < size * SPARSE_BELOW:
        places = np.unique(np.concatenate([postings.positions for _idf, postings in held]))
    totals = zeroed(size) if places is None else np.zeros(len(places), dtype=np.float64)
    for term_idf, postings in held:
        for _start, part, scores in _scored_parts(term_idf, postings, mean_length):
            totals[part.positions if places is None else np.searchsorted(places, part.positions)] += scores
    return places, totals


def _best_of_one(term_idf: float, postings: Postings, mean_length: float,
                 limit: int) -> tuple[np.ndarray, np.ndarray]:
    """(positions, scores), ascending, of a lone term's postings scoring at least the limit-th best (ties
    included). Of many postings, only those that can reach it are scored (`_reachable`)."""
    if len(postings) > REACH_SAMPLE * 2 and term_idf > 0:
        postings = postings.take(_reachable(term_idf, postings, mean_length, limit))
    positions: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    bound, kept = 0.0, 0
    # A part keeps only what reaches the limit-th best of the postings kept so far, a lower bound of the
    # final one, so there is no array of every score.
    for _start, part, part_scores in _scored_parts(term_idf, postings, mean_length):
        keep = np.flatnonzero(part_scores >= bound if bound > 0 else part_scores)
        positions.append(part.positions[keep])
        scores.append(part_scores[keep])
        kept += len(keep)
        if kept > limit:
            best_positions, best_scores = _at_least_limit_th(np.concatenate(positions), np.concatenate(scores),
                                                             limit)
            positions, scores, kept = [best_positions], [best_scores], len(best_positions)
            bound = float(best_scores.min())
    return np.concatenate(positions), np.concatenate(scores)


def _reachable(term_idf: float, postings: Postings, mean_length: float, limit: int) -> np.ndarray:
    """The indices, ascending, of a lone term's postings whose contribution can reach the limit-th best of
    its first `REACH_SAMPLE` postings: a lower bound of the final limit-th best, so every posting that reaches
    that one (ties included) is among them. Found by integer comparisons, without scoring each posting.

    A contribution rises with the frequency and falls with the length, so for each frequency there is a
    longest length that reaches the bound: where the denominator `f + K1 * (1 - B + B * length / mean)`
    reaches `idf * f * (K1 + 1) / bound`. That longest length is solved for in floats, then widened by a
    relative `REACH_SLACK` and one more length, so that the rounding of either side never leaves out a
    posting: the postings kept are a superset, scored exactly afterwards."""
    sample = contributions(term_idf, postings.frequencies[:REACH_SAMPLE], postings.lengths[:REACH_SAMPLE],
                           mean_length)
    most = int(postings.frequencies.max())
    if len(sample) < limit or most > REACH_FREQUENCIES:
        return np.arange(len(postings))
    bound = float(np.partition(sample, len(sample) - limit)[len(sample) - limit])
    frequencies = np.arange(most + 1, dtype=np.float64)
    longest = ((term_idf * frequencies * (K1 + 1) / bound - frequencies) / K1 - (1 - B)) * mean_length / B
    longest += np.abs(longest) * REACH_SLACK + 1
    longest = np.floor(np.clip(longest, -1, np.iinfo(np.int64).max // 2)).astype(np.int64)
    # The longest length rises with the frequency: the frequencies below the first whose longest length
    # reaches the shortest posting cannot reach the bound, and are left out by one pass over the frequencies
    # (most of a frequent word's postings, without looking their frequency up).
    fewest = int(np.argmax(longest >= int(postings.lengths.min())))
    candidates = np.flatnonzero(postings.frequencies >= fewest)
    return candidates[postings.lengths[candidates] <= longest[postings.frequencies[candidates]]]


def _scored_at(places: np.ndarray | None, totals: np.ndarray,
               allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(positions, scores) of the non-zero totals (at `allowed` positions only, in their order, when given)."""
    if places is None:
        if allowed is None:
            positions = np.flatnonzero(totals)
        else:
            positions = allowed[allowed < len(totals)]
            positions = positions[totals[positions] != 0]
        return positions, totals[positions]
    if allowed is None:
        if totals.all():
            return places, totals
        slots = np.flatnonzero(totals)
    else:  # a binary search per allowed position
        slots = np.searchsorted(places, allowed)
        inside = slots < len(places)
        slots = slots[inside][places[slots[inside]] == allowed[inside]]
        slots = slots[totals[slots] != 0]
    return places[slots], totals[slots]


def _at_least_limit_th(positions: np.ndarray, scores: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The (positions, scores) scoring at least the limit-th best score (ties included), in their order."""
    keep = scores >= np.partition(scores, len(scores) - limit)[len(scores) - limit]
    return positions[keep], scores[keep]


def _best(totals: np.ndarray, limit: int) -> np.ndarray:
    """The indices, ascending, of the non-zero totals scoring at least the limit-th best of them (all of them
    when fewer), without a pass that materializes every non-zero one.

    The limit-th best maximum of `BOUND_BLOCKS` blocks is a lower bound of the limit-th best total: at least
    `limit` distinct totals (those maxima) reach it. When it is positive, the totals that reach it are the
    only candidates, and usually a few: the limit-th best among them is the limit-th best of all."""
    if len(totals) > limit * 2:
        maxima = np.maximum.reduceat(totals, np.arange(0, len(totals), -(-len(totals) // BOUND_BLOCKS)))
        if len(maxima) >= limit:
            bound = np.partition(maxima, len(maxima) - limit)[len(maxima) - limit]
            if bound > 0:
                slots = np.flatnonzero(totals >= bound)
                return _at_least_limit_th(slots, totals[slots], limit)[0] if len(slots) > limit else slots
    slots = np.flatnonzero(totals)
    return _at_least_limit_th(slots, totals[slots], limit)[0] if len(slots) > limit else slots
