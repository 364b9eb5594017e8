"""BM25 and RRF: the reference's parity tests S1 and S2 (spec §9), and the rules of spec §6.2-6.3."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.search.bm25 import bm25_rank
from stratagate.search.collation import locale_compare, locale_compare_key
from stratagate.search.rrf import fuse, rrf_rank
from stratagate.search.tokenize import search_tokens, weighted_search_tokens
from tests.property_budget import examples

DOCUMENTS = [
    {"id": "alpha", "title": "PostgreSQL migration", "body": "Move the project database to PostgreSQL."},
    {"id": "beta", "title": "Design review", "body": "Review the application layout."},
]


def _weighted(doc: dict) -> list[str]:
    return weighted_search_tokens([(doc["title"], 3), (doc["body"], 1)])


def _key(doc: dict) -> str:
    return doc["id"]


def test_s1_bm25_ranks_lexical_matches_and_nothing_on_a_real_zero_match() -> None:
    ranked = bm25_rank(DOCUMENTS, "PostgreSQL database", _weighted, _key)
    assert [doc["id"] for doc, _score in ranked] == ["alpha"]
    assert bm25_rank(DOCUMENTS, "watermelon", lambda d: search_tokens(f"{d['title']} {d['body']}"), _key) == []


def test_s2_rrf_breaks_score_ties_by_best_rank_then_id() -> None:
    fused = rrf_rank([["alpha", "beta"], ["beta", "alpha"]])
    assert [item_id for item_id, _score in fused] == ["alpha", "beta"]
    assert fused[0][1] > 0


def test_bm25_score_is_the_spec_formula_with_deduplicated_query_terms() -> None:
    ranked = bm25_rank(DOCUMENTS, "postgresql PostgreSQL", _weighted, _key)
    alpha = _weighted(DOCUMENTS[0])
    average = (len(alpha) + len(_weighted(DOCUMENTS[1]))) / 2
    tf, df, n = alpha.count("word:postgresql"), 1, 2
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    expected = idf * ((tf * (1.2 + 1)) / (tf + 1.2 * (1 - 0.75 + 0.75 * len(alpha) / average)))
    assert ranked == [(DOCUMENTS[0], expected)]


def test_bm25_without_terms_or_items_is_empty() -> None:
    assert bm25_rank(DOCUMENTS, "  ...  ", _weighted, _key) == []
    assert bm25_rank([], "postgresql", _weighted, _key) == []


def test_bm25_equal_scores_sort_by_locale_compare_not_code_points() -> None:
    docs = [{"id": i, "title": "same words", "body": ""} for i in ["b", "B", "a", "_x", "10", "9"]]
    ranked = bm25_rank(docs, "words", _weighted, _key)
    assert [doc["id"] for doc, _ in ranked] == ["_x", "10", "9", "a", "b", "B"]


def test_rrf_scores_sum_reciprocal_ranks_and_report_ranks() -> None:
    hits = fuse([["x", "y"], ["y"], []])
    assert [(hit.id, hit.ranks, hit.best_rank) for hit in hits] == [("y", (1, 0, None), 0), ("x", (0, None, None), 0)]
    assert hits[0].score == 1 / 62 + 1 / 61
    assert hits[1].score == 1 / 61
    assert rrf_rank([]) == []
    # A duplicate counts twice, as in the reference.
    assert rrf_rank([["a", "b", "a"]]) == [("a", 1 / 61 + 1 / 63), ("b", 1 / 62)]


rankings_strategy = st.lists(
    st.lists(st.sampled_from(["a", "B", "b", "c", "evt_9", "evt_10", "x\u200b", "x", "y", "z"]), unique=True), max_size=4
)


@settings(max_examples=examples(400), deadline=None)
@given(rankings_strategy, st.integers(min_value=1, max_value=8))
def test_rrf_with_a_limit_is_the_head_of_the_full_fusion(rankings: list[list[str]], limit: int) -> None:
    assert fuse(rankings, limit) == fuse(rankings)[:limit]
    assert rrf_rank(rankings, limit) == rrf_rank(rankings)[:limit]


def test_rrf_fuse_of_a_long_ranking_with_a_limit_stops_early_and_is_exact() -> None:
    long = [f"evt_{i}" for i in range(5000)]
    other = long[::-1]
    assert fuse([long, other, long[:10]], 6) == fuse([long, other, long[:10]])[:6]


def test_locale_compare_orders_like_icu_root_collation() -> None:
    assert locale_compare("a", "B") < 0 < locale_compare("B", "b")
    assert locale_compare("evt_9", "evt_10") > 0
    assert locale_compare("résumé", "resume") > 0
    assert locale_compare("x", "x") == 0
    assert sorted(["b", "A", "a", "B"], key=locale_compare_key) == ["a", "A", "b", "B"]
