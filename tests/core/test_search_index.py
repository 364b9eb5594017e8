"""The inverted index ranks exactly like the reference BM25 (`bm25_rank`): same keys, order and float scores."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stratagate.errors import DuplicateIdError, UnknownIdError
from stratagate.search.bm25 import bm25_rank
from stratagate.search.documents import (
    SearchField,
    element_fact_search_fields,
    event_search_fields,
    field_tokens,
)
from stratagate.search.index import ExplainedHit, InvertedIndex
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_ORACLE, REFERENCE_SNAPSHOT
from tests.property_budget import examples


def _oracle_calls(kind: str) -> list[dict]:
    oracle = json.loads(REFERENCE_ORACLE.read_text())["namespaces"][REFERENCE_NAMESPACE]["oracle"]
    # Without filters the reference fuses the BM25 ranking alone, so its order is the BM25 order.
    return [call for call in oracle if call["kind"] == kind and call["query"] and not _has_filter(call)]


def _has_filter(call: dict) -> bool:
    options = call.get("options") or {}
    return any(options.get(name) for name in ("participants", "eventType", "happenedFrom", "happenedTo", "name", "type"))


def _snapshot() -> dict:
    return json.loads(REFERENCE_SNAPSHOT.read_text())[REFERENCE_NAMESPACE]["snapshot"]


@pytest.mark.parametrize("call", _oracle_calls("searchEvents"), ids=lambda call: call["query"])
def test_event_ranking_matches_the_reference_oracle(call: dict) -> None:
    index = InvertedIndex()
    for event in _snapshot()["events"]:
        if event["status"] in ("active", "superseded"):
            index.add(event["id"], event_search_fields(event))
    limit = (call.get("options") or {}).get("limit", 6)
    assert [key for key, _score in index.rank(call["query"], limit=limit)] == [hit["id"] for hit in call["result"]]


@pytest.mark.parametrize("call", _oracle_calls("searchElements"), ids=lambda call: call["query"])
def test_element_fact_ranking_matches_the_reference_oracle(call: dict) -> None:
    index = InvertedIndex()
    for element in _snapshot()["elements"]:
        for fact in element["facts"]:
            index.add(fact["id"], element_fact_search_fields(element, fact))
    limit = (call.get("options") or {}).get("limit", 8)
    assert [key for key, _score in index.rank(call["query"], limit=limit)] == [hit["factId"] for hit in call["result"]]


# Small vocabularies, so documents share terms and scores tie; keys that differ in case, digits and an
# ignorable character (equal under localeCompare) exercise every tie-break.
WORDS = ["alpha", "beta", "Gamma", "delta", "v2.0", "don't", "2026-03-09", "你好", "世界", "中", "x"]
KEYS = ["a", "A", "b", "B", "evt_9", "evt_10", "k\u200b", "k", "_z", "10", *(f"e{i}" for i in range(30))]
FIELD_NAMES = ["title", "summary", "tags"]

texts = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
weights = st.sampled_from([0.5, 1, 1.9, 2, 3, 5])
field_lists = st.lists(st.tuples(texts, weights), min_size=1, max_size=3).map(
    lambda pairs: [(FIELD_NAMES[i], text, weight) for i, (text, weight) in enumerate(pairs)]
)
queries = st.lists(st.sampled_from([*WORDS, "missing"]), min_size=1, max_size=3).map(" ".join)
# "rank" runs a top-2 query in between writes, so later writes meet postings arrays already built.
operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "add", "replace", "remove", "rank", "compact"]), st.sampled_from(KEYS), field_lists, queries
    ),
    max_size=60,
)


def _apply(operations: list[tuple[str, str, list[SearchField], str]]) -> tuple[InvertedIndex, dict[str, list[SearchField]]]:
    """Run the operations on an index and on a plain dict (in the reference's list order) side by side.

    Blocks of two postings and settling after two changes make top-k queries stop early after a few
    documents and postings move between pending changes and arrays, as they do at scale.
    """
    index = InvertedIndex(block_size=2, settle_after=2)
    documents: dict[str, list[SearchField]] = {}
    for operation, key, fields, query in operations:
        if operation == "rank":
            assert index.rank(query, limit=2) == _reference(documents, query)[:2]
        elif operation == "compact":
            index.compact()
        if operation == "add" and key not in documents:
            index.add(key, fields)
            documents[key] = fields
        elif operation == "replace":
            index.replace(key, fields)
            documents[key] = fields  # an existing key keeps its place, a new one goes last
        elif operation == "remove" and key in documents:
            index.remove(key)
            del documents[key]
    return index, documents


def _reference(documents: dict[str, list[SearchField]], query: str) -> list[tuple[str, float]]:
    ranked = bm25_rank(list(documents.items()), query, lambda item: field_tokens(item[1]), lambda item: item[0])
    return [(key, score) for (key, _fields), score in ranked]


@settings(max_examples=examples(300), deadline=None)
@given(operations, queries)
def test_rank_equals_reference_bm25_after_any_adds_replaces_and_removes(operations, query: str) -> None:
    index, documents = _apply(operations)
    assert index.rank(query) == _reference(documents, query)
    assert len(index) == len(documents)
    assert index.total_length == sum(len(field_tokens(fields)) for fields in documents.values())


@settings(max_examples=examples(150), deadline=None)
@given(operations, queries, st.sets(st.sampled_from(KEYS)), st.integers(min_value=1, max_value=6))
def test_restrict_and_limit_keep_whole_index_statistics(operations, query: str, allowed: set[str], limit: int) -> None:
    index, documents = _apply(operations)
    full = _reference(documents, query)
    assert index.rank(query, restrict_to=allowed) == [(key, score) for key, score in full if key in allowed]
    assert index.rank(query, limit=limit) == full[:limit]


@settings(max_examples=examples(150), deadline=None)
@given(operations, queries)
def test_explain_splits_each_term_score_over_its_fields(operations, query: str) -> None:
    index, documents = _apply(operations)
    explained = index.rank(query, explain=True)
    assert [(hit.key, hit.score) for hit in explained] == index.rank(query)
    for hit in explained:
        assert isinstance(hit, ExplainedHit)
        assert math.isclose(sum(part.score for part in hit.contributions), hit.score, rel_tol=1e-12)
        tokens = field_tokens(documents[hit.key])
        assert hit.length == len(tokens)
        for term in hit.term_idf:
            assert sum(part.frequency for part in hit.contributions if part.term == term) == tokens.count(term)


@settings(max_examples=examples(50), deadline=None)
@given(st.lists(field_lists, min_size=1, max_size=40), queries)
def test_bulk_add_then_rank_equals_reference(fields: list[list[SearchField]], query: str) -> None:
    documents = {f"evt_{number}": document for number, document in enumerate(fields)}
    index = InvertedIndex(block_size=2, settle_after=2)
    index.add_many(documents.items())
    assert index.rank(query) == _reference(documents, query)
    assert index.rank(query, limit=3) == _reference(documents, query)[:3]


def test_adding_an_indexed_key_or_removing_an_unknown_one_is_an_error_and_changes_nothing() -> None:
    index = InvertedIndex()
    index.add("evt_1", [("title", "alpha beta", 4)])
    with pytest.raises(DuplicateIdError, match="evt_1"):
        index.add("evt_1", [("title", "gamma", 4)])
    with pytest.raises(UnknownIdError, match="evt_2"):
        index.remove("evt_2")
    assert [key for key, _score in index.rank("alpha")] == ["evt_1"] and index.rank("gamma") == []
    assert index.document_frequency("word:alpha") == 1 and index.total_length == 8


def test_top_k_ties_that_collate_equal_keep_insertion_order_across_passes() -> None:
    """'k\\u200b' and 'k' collate equal; the one indexed first ranks first, even when a rewrite makes the
    later one scored in an earlier pass of an early-stopping query."""
    index = InvertedIndex(block_size=1, settle_after=100)
    documents: dict[str, list[SearchField]] = {}

    def add(key: str, text: str) -> None:
        documents[key] = [("title", text, 1)]
        index.add(key, documents[key])

    add("k\u200b", "alpha beta")
    for number in range(6):
        add(f"filler{number}", "alpha alpha")
    add("k", "alpha beta")
    index.compact()
    index.replace("k", [("title", "alpha beta", 1)])
    assert index.rank("alpha", limit=8) == _reference(documents, "alpha")[:8]
