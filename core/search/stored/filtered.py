"""A query with words and hard filters: RRF of BM25 over the filtered candidates and their structured order,
reading only as much of either ranking as the first hits can come from.

The reference fuses both rankings in full; here its first `limit` hits are found from the heads of both:

- the structured order is the subset's positions sorted by their place in the order of all candidates
  (`StoredFacets.places`, read once per revision), so a rank there is a count in memory, not a read;
- BM25's order is its scores' order (`StoredEventIndex.scored`), each run of equal scores sorted by the
  ids' `localeCompare`; a rank there is known to lie within its run (counted in the sorted scores, the hits
  themselves are not sorted), and only the runs of the candidates that can still be among the first hits
  are named and sorted.

Exact: the first `limit` of the structured order score at least 1/(RRF_K + limit) each, so the limit-th best
score is at least that. A candidate outside the first `depth` = RRF_K + 2·limit of both rankings scores at
most 2/(RRF_K + 1 + depth), which is less, so the first hits are among those heads. A candidate whose best
possible score (its BM25 rank at the start of its run) is below the limit-th best of the candidates' worst
possible scores cannot be among them either. Floating-point sums are monotonic, so the bounds hold for the
scores as computed."""

from __future__ import annotations

from sqlalchemy import Connection

from stratagate.arrays import np
from stratagate.search.collation import locale_compare_key
from stratagate.search.rrf import RRF_K, FusedHit, sort_fused
from stratagate.search.stored.facets import StoredFacets, Subset
from stratagate.search.stored.ranking import StoredEventIndex


def _score(bm25_rank: int | None, structured_rank: int) -> float:
    """`fuse`'s score: the rankings' terms summed in ranking order (BM25 first)."""
    score = 0.0
    if bm25_rank is not None:
        score += 1 / (RRF_K + bm25_rank + 1)
    return score + 1 / (RRF_K + structured_rank + 1)


def fused_head(index: StoredEventIndex, facets: StoredFacets, query: str, subset: Subset,
               temporal_intent: object, turn: int, limit: int) -> list[tuple[str, float]] | None:
    """The first `limit` (id, score) of RRF over [BM25 of the subset, the subset's structured order], as
    `fuse` gives them; None when the subset is empty (the caller falls back to soft filters)."""
    depth = RRF_K + 2 * limit
    with index.connect() as connection:
        members = facets.positions(connection, subset)
        if not len(members):
            return None
        places = facets.places(connection, temporal_intent, turn)
        member_places = places[members]
        ordered_places = np.sort(member_places)
        # The first `depth` of the structured order, as a set: the members at the first `depth` places (places
        # are distinct).
        structured_head = (members if len(members) <= depth
                           else members[member_places <= ordered_places[depth - 1]])
        bm25 = _Bm25Order(*index.unordered(connection, query, members))
        candidates = np.array(sorted({*structured_head.tolist(), *bm25.head(depth).tolist()}), dtype=np.int64)
        structured = np.searchsorted(ordered_places, places[candidates]).tolist()
        runs = bm25.runs(candidates)
        # Each candidate's worst and best possible score: its BM25 rank at the end or the start of its run.
        worst = sorted((_score(None if run is None else run[1] - 1, at)
                        for run, at in zip(runs, structured, strict=True)), reverse=True)
        bar = worst[limit - 1] if len(worst) >= limit else -np.inf
        kept = [(position, run, at)
                for position, run, at in zip(candidates.tolist(), runs, structured, strict=True)
                if _score(None if run is None else run[0], at) >= bar]
        # Ids name the kept candidates and order the runs of equal BM25 scores they stand in.
        tied = {run for _position, run, _at in kept if run is not None and run[1] - run[0] > 1}
        names = _names(index, connection, [position for position, _run, _at in kept]
                       + [position for run in tied for position in bm25.run(run)])
    ordered = {run: sorted(bm25.run(run), key=lambda member: locale_compare_key(names[member]))
               for run in tied}
    hits = []
    for position, run, at in kept:
        found = None if run is None else run[0] + (ordered[run].index(position) if run in tied else 0)
        best = at if found is None else min(found, at)
        hits.append(FusedHit(names[position], _score(found, at), (found, at), best))
    return [(hit.id, hit.score) for hit in sort_fused(hits)[:limit]]


def _names(index: StoredEventIndex, connection: Connection, positions: list[int]) -> dict[int, str]:
    distinct = list(dict.fromkeys(positions))
    return dict(zip(distinct, index.ids(connection, np.asarray(distinct, dtype=np.int64)), strict=True))


class _Bm25Order:
    """BM25's hits, from their (positions, scores) in ascending positions, in the order of their scores
    descending then position: its order once each run of equal scores is sorted by `localeCompare` of the ids
    (stably: position breaks ties of equal keys). A slot in that order is a count of the scores above, so
    only the scores are sorted, not the hits."""

    def __init__(self, positions: np.ndarray, scores: np.ndarray):
        self._positions, self._scores = positions, scores
        self._ascending = np.sort(scores)
        self._slots: np.ndarray | None = None
        """The hits' indices in slot order, made for the first run asked for."""

    def head(self, depth: int) -> np.ndarray:
        """The hits in the runs that start among the first `depth` slots (the first `depth` ranks are)."""
        if not len(self._positions) or depth <= 0:
            return self._positions[:0]
        return self._positions[self._scores >= self._ascending[max(len(self._ascending) - depth, 0)]]

    def runs(self, positions: np.ndarray) -> list[tuple[int, int] | None]:
        """Each position's run of equal scores as its slots [start, end) (its rank lies within), None when
        the query does not score it."""
        if not len(self._positions):
            return [None] * len(positions)
        found = np.minimum(np.searchsorted(self._positions, positions), len(self._positions) - 1)
        hit = self._positions[found] == positions
        values = self._scores[found]
        count = len(self._ascending)
        starts = (count - np.searchsorted(self._ascending, values, side="right")).tolist()
        ends = (count - np.searchsorted(self._ascending, values, side="left")).tolist()
        return [(start, end) if is_hit else None
                for is_hit, start, end in zip(hit.tolist(), starts, ends, strict=True)]

    def run(self, run: tuple[int, int]) -> list[int]:
        """The run's positions in slot order (ascending: equal scores are in position order)."""
        if self._slots is None:
            self._slots = np.argsort(-self._scores, kind="stable")
        return self._positions[self._slots[run[0] : run[1]]].tolist()
