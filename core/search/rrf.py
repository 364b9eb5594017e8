"""Reciprocal-rank fusion (spec §6.3): score(id) = Σ 1/(60 + rank + 1) over the rankings that hold it."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from stratagate.search.collation import locale_compare_key

RRF_K = 60


@dataclass(frozen=True, slots=True)
class FusedHit:
    id: str
    score: float
    # 0-based rank of the id in each input ranking, None where it is absent (for "why this result").
    ranks: tuple[int | None, ...]
    best_rank: int


def fuse(rankings: Sequence[Sequence[str]], limit: int | None = None) -> list[FusedHit]:
    """Fused hits best first: score descending, then best rank, then `localeCompare` of the id.

    Scores are summed in ranking order, as the reference does. An id listed twice in one ranking counts
    twice (as in the reference) and its rank there is the first one.

    With `limit`, only the first `limit` hits are returned, found without scoring every id (each ranking
    must then list an id at most once, as the engine's rankings do): the scan stops at the depth where an
    id not seen yet can no longer reach the limit-th best score.
    """
    if limit is not None:
        return _fuse_top(rankings, limit)
    if len(rankings) == 1 and len(set(rankings[0])) == len(rankings[0]):
        # One ranking of distinct ids: its order is the fused order, scores strictly decreasing.
        return [FusedHit(item_id, 1 / (RRF_K + rank + 1), (rank,), rank) for rank, item_id in enumerate(rankings[0])]
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item_id in enumerate(ranking):
            scores[item_id] = scores.get(item_id, 0.0) + 1 / (RRF_K + rank + 1)
    positions = [_first_positions(ranking) for ranking in rankings]
    return sort_fused([_hit(item_id, score, positions) for item_id, score in scores.items()])


def rrf_rank(rankings: Sequence[Sequence[str]], limit: int | None = None) -> list[tuple[str, float]]:
    """`(id, score)` best first; `fuse` gives the per-ranking ranks too."""
    return [(hit.id, hit.score) for hit in fuse(rankings, limit)]


def _first_positions(ranking: Sequence[str]) -> dict[str, int]:
    positions: dict[str, int] = {}
    for rank, item_id in enumerate(ranking):
        positions.setdefault(item_id, rank)
    return positions


def _hit(item_id: str, score: float, positions: list[dict[str, int]]) -> FusedHit:
    ranks = tuple(position.get(item_id) for position in positions)
    return FusedHit(item_id, score, ranks, min(rank for rank in ranks if rank is not None))


def sort_fused(hits: list[FusedHit]) -> list[FusedHit]:
    """The fused order: score descending, then best rank, then `localeCompare` of the id. Sort by score and
    best rank; only hits tied on both need the (costlier) collation key."""
    hits.sort(key=lambda hit: (-hit.score, hit.best_rank))
    ordered: list[FusedHit] = []
    for _tie, group in itertools.groupby(hits, key=lambda hit: (hit.score, hit.best_rank)):
        tied = list(group)
        if len(tied) > 1:
            tied.sort(key=lambda hit: locale_compare_key(hit.id))
        ordered.extend(tied)
    return ordered


def _fuse_top(rankings: Sequence[Sequence[str]], limit: int) -> list[FusedHit]:
    """The first `limit` fused hits by the threshold algorithm: read all rankings depth by depth; an id first
    met at depth d is scored exactly from its position in every ranking; an id not met by depth d scores at
    most Σ 1/(61 + d) over the rankings longer than d, so stop once that is below the limit-th best score."""
    if limit <= 0:
        return []
    if len(rankings) == 1:
        return [FusedHit(item_id, 1 / (RRF_K + rank + 1), (rank,), rank) for rank, item_id in enumerate(rankings[0][:limit])]
    positions: list[dict[str, int]] = [_first_positions(ranking) for ranking in rankings]
    seen: dict[str, FusedHit] = {}
    deepest = max((len(ranking) for ranking in rankings), default=0)
    check_at = limit
    for depth in range(deepest):
        for ranking in rankings:
            if depth < len(ranking) and ranking[depth] not in seen:
                item_id = ranking[depth]
                score = 0.0
                for position in positions:
                    rank = position.get(item_id)
                    if rank is not None:
                        score += 1 / (RRF_K + rank + 1)
                seen[item_id] = _hit(item_id, score, positions)
        if len(seen) >= check_at:
            check_at = len(seen) * 2
            bound = 0.0
            for ranking in rankings:
                if depth + 1 < len(ranking):
                    bound += 1 / (RRF_K + depth + 1 + 1)
            kth_best = sorted((hit.score for hit in seen.values()), reverse=True)[limit - 1]
            if bound < kth_best:
                break
    return sort_fused(list(seen.values()))[:limit]
