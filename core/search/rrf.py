"""Reciprocal-rank fusion (spec §6.3): score(id) = Σ 1/(60 + rank + 1) over the rankings that hold it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stratagate.search.collation import locale_compare_key

RRF_K = 60


@dataclass(frozen=True)
class FusedHit:
    id: str
    score: float
    # 0-based rank of the id in each input ranking, None where it is absent (for "why this result").
    ranks: tuple[int | None, ...]

    @property
    def best_rank(self) -> int:
        return min(rank for rank in self.ranks if rank is not None)


def fuse(rankings: Sequence[Sequence[str]]) -> list[FusedHit]:
    """Fused hits best first: score descending, then best rank, then `localeCompare` of the id.

    Scores are summed in ranking order, as the reference does. An id listed twice in one ranking counts
    twice (the reference does the same) and its rank there is the first one.
    """
    scores: dict[str, float] = {}
    ranks: dict[str, list[int | None]] = {}
    for which, ranking in enumerate(rankings):
        for rank, item_id in enumerate(ranking):
            scores[item_id] = scores.get(item_id, 0.0) + 1 / (RRF_K + rank + 1)
            item_ranks = ranks.setdefault(item_id, [None] * len(rankings))
            if item_ranks[which] is None:
                item_ranks[which] = rank
    hits = [FusedHit(item_id, scores[item_id], tuple(ranks[item_id])) for item_id in scores]
    hits.sort(key=lambda hit: (-hit.score, hit.best_rank, locale_compare_key(hit.id)))
    return hits


def rrf_rank(rankings: Sequence[Sequence[str]]) -> list[tuple[str, float]]:
    """`(id, score)` best first; `fuse` gives the per-ranking ranks too."""
    return [(hit.id, hit.score) for hit in fuse(rankings)]
