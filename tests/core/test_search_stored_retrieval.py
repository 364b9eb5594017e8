"""Event search over a database's persistent index (filters and orders from its columns, hits fetched by id)
gives exactly the hits and scores, and with `explain=True` the explanations, of the in-memory path (an index
built from the loaded events), after any sequence of adds and curations, in the writing process and in a new
read-only one."""

from __future__ import annotations

import itertools
import math
from datetime import timedelta
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stratagate
from stratagate.retrieval import Retrieval
from stratagate.search.postings import contributions
from stratagate.search.stored import facets as stored_facets
from stratagate.search.stored import ranking as stored_ranking
from stratagate.search.stored.terms import Postings
from tests.core.helpers import Clock, WithoutStoredIndexes
from tests.core.test_search_event_cache import _apply, _hits, _operation, _query
from tests.postgres_server import fresh_database
from tests.property_budget import examples


@settings(max_examples=examples(60), deadline=None)
@given(operations=st.lists(_operation, max_size=20), queries=st.lists(_query, min_size=1, max_size=4))
def test_stored_event_search_equals_the_in_memory_search(tmp_path_factory: pytest.TempPathFactory, operations,
                                                         queries) -> None:
    _check_stored_search(str(tmp_path_factory.mktemp("stored") / "memory.sqlite"), "ns", operations, queries)


@settings(max_examples=examples(30), deadline=None)
@given(operations=st.lists(_operation, max_size=20), queries=st.lists(_query, min_size=1, max_size=4),
       sparse=st.booleans(), blocks=st.sampled_from([1, 2, 3, stored_ranking.BOUND_BLOCKS]),
       at_once=st.sampled_from([1, 2, 5, stored_ranking.SCORED_AT_ONCE]),
       sample=st.sampled_from([1, 2, 3, stored_ranking.REACH_SAMPLE]))
def test_bm25_sums_the_same_scores_over_the_postings_or_every_position(
        tmp_path_factory: pytest.TempPathFactory, operations, queries, sparse: bool, blocks: int,
        at_once: int, sample: int) -> None:
    # A rare word's scores are summed at its postings' positions only, a frequent one's over every position;
    # few bound blocks make the top-k's lower bound loose (blocks of many documents) on small memories,
    # scoring a few postings at a time makes a lone term's top-k and the filters go through many parts, and
    # a small sample makes a lone term of a small memory score only the postings that can reach its top-k.
    with (mock.patch.object(stored_ranking, "SPARSE_BELOW", math.inf if sparse else 0.0),
          mock.patch.object(stored_ranking, "BOUND_BLOCKS", blocks),
          mock.patch.object(stored_ranking, "SCORED_AT_ONCE", at_once),
          mock.patch.object(stored_ranking, "REACH_SAMPLE", sample)):
        _check_stored_search(str(tmp_path_factory.mktemp("stored") / "memory.sqlite"), "ns", operations, queries)


_totals = st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 1.0, 2.5, 3.0, 7.25]), max_size=300).map(
    lambda values: np.array(values, dtype=np.float64))


@settings(max_examples=examples(300), deadline=None)
@given(totals=_totals, limit=st.integers(1, 25), blocks=st.integers(1, 70))
def test_the_top_k_of_the_totals_is_the_exhaustive_one(totals: np.ndarray, limit: int, blocks: int) -> None:
    """`_best` gives the non-zero totals scoring at least the limit-th best, ties included, ascending: what
    selecting every non-zero total and cutting at the limit-th best gives, for any number of bound blocks."""
    present = np.flatnonzero(totals)
    expected = present
    if len(present) > limit:
        expected = present[totals[present] >= np.sort(totals[present])[::-1][limit - 1]]
    with mock.patch.object(stored_ranking, "BOUND_BLOCKS", blocks):
        assert stored_ranking._best(totals, limit).tolist() == expected.tolist()


@st.composite
def _lone_term(draw) -> Postings:
    """A term's postings: ascending distinct positions, few frequencies (many ties), lengths of either width."""
    count = draw(st.integers(1, 300))  # a term is ranked only with postings
    positions = np.cumsum(draw(st.lists(st.integers(1, 3), min_size=count, max_size=count)), dtype=np.int64)
    frequencies = draw(st.lists(st.integers(1, draw(st.sampled_from([1, 3, 40]))), min_size=count, max_size=count))
    lengths = draw(st.lists(st.integers(1, draw(st.sampled_from([5, 300]))), min_size=count, max_size=count))
    return Postings(positions.astype(np.int32), np.array(frequencies, dtype=np.uint8),
                    np.array(lengths, dtype=np.uint16))


@settings(max_examples=examples(100), deadline=None)
@given(postings=_lone_term(), limit=st.integers(1, 25), sample=st.integers(1, 60),
       term_idf=st.floats(0.01, 12.0), mean_length=st.floats(0.5, 400.0))
def test_a_lone_term_s_top_k_is_the_exhaustive_one(postings: Postings, limit: int, sample: int, term_idf: float,
                                                   mean_length: float) -> None:
    """`_best_of_one` gives the postings scoring at least the limit-th best, ties included, ascending, with
    their scores: what scoring every posting and cutting at the limit-th best gives, whichever first postings
    bound the scores it skips."""
    scores = contributions(term_idf, postings.frequencies, postings.lengths, mean_length)
    keep = np.ones(len(scores), dtype=bool)
    if len(scores) > limit:
        keep = scores >= np.sort(scores)[::-1][limit - 1]
    with mock.patch.object(stored_ranking, "REACH_SAMPLE", sample):
        positions, found = stored_ranking._best_of_one(term_idf, postings, mean_length, limit)
    assert positions.tolist() == postings.positions[keep].tolist()
    assert found.tolist() == scores[keep].tolist()


@pytest.mark.postgres
@settings(max_examples=examples(15), deadline=None)
@given(operations=st.lists(_operation, max_size=20), queries=st.lists(_query, min_size=1, max_size=4))
def test_stored_event_search_on_postgresql_equals_the_in_memory_search(postgres_url: str, operations,
                                                                       queries) -> None:
    _check_stored_search(postgres_url, f"ns-{next(_namespaces)}", operations, queries)


_namespaces = itertools.count()


def _check_stored_search(location: str, namespace: str, operations: list, queries: list) -> None:
    """After the operations, every query through the stored index (writing process, then a new read-only
    one) gives the hits and scores of the in-memory path."""
    clock = Clock("2026-03-02T01:00:00Z", step=timedelta(0))
    memory = stratagate.open(location, namespace, block_turn_size=1, now=clock)
    try:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        memory.search_events("", event_type="meeting")  # the index exists before the writes, which keep it
        for operation in operations:
            _apply(memory, operation, block_id, clock)
            query, options = queries[0]
            memory.search_events(query, **options)
        for query, options in queries:
            oracle = Retrieval(WithoutStoredIndexes(memory)).search_events(query, explain=True, **options)
            expected = _hits_with_events(oracle)
            assert _hits_with_events(memory.search_events(query, **options)) == expected
            assert _explained(memory.search_events(query, explain=True, **options)) == _explained(oracle)
            with stratagate.open(location, namespace, read_only=True) as reader:
                assert _hits_with_events(reader.search_events(query, **options)) == expected
                assert _explained(reader.search_events(query, explain=True, **options)) == _explained(oracle)
    finally:
        memory.close()


def _hits_with_events(hits) -> list[tuple]:
    """Ids, scores and the events' contents (a query without words hands out copies of events it keeps)."""
    return [(hit.id, hit.score, hit.event) for hit in hits]


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_a_kept_query_without_words_hands_out_copies_and_follows_commits(tmp_path: Path, backend: str,
                                                                         request: pytest.FixtureRequest) -> None:
    # On PostgreSQL a kept answer's revision read ends its transaction: a moved index is read in a new one.
    path = (str(tmp_path / "memory.sqlite") if backend == "sqlite"
            else fresh_database(request.getfixturevalue("postgres_server")))
    with stratagate.open(path, "ns", block_turn_size=1) as memory:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        for number in range(4):
            memory.add_event(f"card {number}", source_block_id=block_id,
                             temporal={"participants": ["Alice"], "extraKey": {"nested": [number]}})
        with stratagate.open(path, "ns", read_only=True) as reader:
            first = reader.search_events("")
            expected = [hit.event for hit in memory.search_events("")]
            assert [hit.event for hit in first] == expected
            for hit in first:  # a caller changing its hits changes nothing the next search returns
                hit.event.tags.append("changed")
                hit.event.temporal.participants.append("Mallory")
                hit.event.temporal.extra["extraKey"]["nested"].append(99)
                hit.event.weight.pinned = True
            assert [hit.event for hit in reader.search_events("")] == expected
        memory.search_events("")
        memory.pin_event(expected[-1].id)
        after = [hit.event for hit in memory.search_events("")]
        assert after[0].id == expected[-1].id and after[0].weight.pinned
        assert after == [hit.event for hit in Retrieval(WithoutStoredIndexes(memory)).search_events("")]


def _explained(hits) -> tuple:
    return ([(hit.id, hit.score, hit.explanation) for hit in hits], hits.explanation)


def test_a_read_only_search_loads_no_event_it_does_not_return(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    with stratagate.open(path, "ns", block_turn_size=1) as memory:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        for number in range(30):
            memory.add_event(f"card {number} budget" if number % 3 else f"card {number} launch",
                             source_block_id=block_id, temporal={"participants": ["Alice"]})
        expected = memory.search_events("launch", participants=["alice"], limit=3, explain=True)
    with stratagate.open(path, "ns", read_only=True) as reader:
        hits = reader.search_events("launch", participants=["alice"], limit=3)
        assert [hit.event for hit in hits] == [hit.event for hit in expected]
        assert all("launch" in hit.event.title for hit in hits)
        explained = reader.search_events("launch", participants=["alice"], limit=3, explain=True)
        assert _explained(explained) == _explained(expected)
        assert not reader._state.is_loaded("events")


def test_a_read_only_search_works_when_the_cache_cannot_be_written(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "memory.sqlite"
    with stratagate.open(path, "ns", block_turn_size=1) as memory:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        memory.add_event("launch budget", source_block_id=block_id, temporal={"participants": ["Alice"]})
        memory.search_events("launch")  # the index exists in the file
    not_a_directory = tmp_path / "cache"
    not_a_directory.write_text("a file where the cache directory would be")
    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(not_a_directory))
    with stratagate.open(path, "ns", read_only=True) as reader:
        assert [hit.event.title for hit in reader.search_events("", participants=["alice"])] == ["launch budget"]


@pytest.mark.parametrize("classes_in_one_case", [2000, 0], ids=["sorted by the database", "sorted in Python"])
def test_the_weight_order_head_is_exact_across_weight_classes_and_ties(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      classes_in_one_case: int) -> None:
    """The empty query's head reads only the weight classes that can reach it: every limit must give the head
    of the full order, with classes of equal weight (pinned, fresh) and ties broken by updatedAt then position;
    a query with words and a filter fuses the filtered set's weight order (and a soft filter's full order is
    sorted both ways)."""
    monkeypatch.setattr(stored_facets, "_CLASSES_IN_ONE_CASE", classes_in_one_case)
    path = tmp_path / "memory.sqlite"
    clock = Clock("2026-03-02T01:00:00Z", step=timedelta(0))
    with stratagate.open(path, "ns", block_turn_size=1, now=clock) as memory:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        for number in range(36):
            if number % 5 == 0:
                clock.advance(minutes=1)  # runs of equal updatedAt
            if number % 7 == 0:
                memory.append_turn("another turn", "reply")
            event = memory.add_event(f"card {number}", "summary", source_block_id=block_id,
                                     criticality=["routine", "preference", "identity"][number % 3],
                                     temporal={"participants": ["Alice"]})
            if number % 4 == 0:
                memory.record_memory_use(event_ids=[event.id], receipt_id=f"use {number}")
            if number % 9 == 0:
                memory.pin_event(event.id)
        memory.append_turn("a later turn", "reply")
        for limit in range(1, 21):
            expected = _hits(memory.search_events("", limit=limit, explain=True))
            assert _hits(memory.search_events("", limit=limit)) == expected
            for query in ("", "card"):
                assert _hits(memory.search_events(query, participants=["alice"], limit=limit)) == _hits(
                    memory.search_events(query, participants=["alice"], limit=limit, explain=True))


def test_a_filtered_query_fuses_only_the_rankings_heads_exactly(tmp_path: Path) -> None:
    """With more filtered candidates than the fusion reads of either ranking (RRF_K + 2·limit), many BM25
    scores tied (the same text in documents of the same length), weights in several classes (pinned and
    fresh ones equal) and equal chronology, every limit and structured order gives the hits and scores of
    the full fusion, in the writing process and in a read-only one."""
    path = tmp_path / "memory.sqlite"
    clock = Clock("2026-03-02T01:00:00Z", step=timedelta(0))
    texts = ["launch budget", "budget launch", "launch", "launch launch trip", "trip meeting", "meeting"]
    queries = [("launch", {"participants": ["alice"]}), ("launch trip", {"participants": ["alice"]}),
               ("budget", {"happened_from": "2025-01-05", "happened_to": "2025-02-20"}),
               ("meeting launch", {"participants": ["alice"], "temporal_intent": "latest"}),
               ("launch", {"happened_from": "2025-01-01", "happened_to": "2025-03-01", "temporal_intent": "first"})]
    with stratagate.open(path, "ns", block_turn_size=1, now=clock) as memory:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        for number in range(220):
            if number % 11 == 0:
                clock.advance(minutes=1)
            if number % 40 == 0:
                memory.append_turn("another turn", "reply")
            day = f"2025-{1 + number % 3:02d}-{1 + number % 28:02d}"
            event = memory.add_event(texts[number % len(texts)], "summary", source_block_id=block_id,
                                     temporal={"participants": ["Alice"] if number % 5 else ["Bob"],
                                               "happenedStart": day, "happenedEnd": day})
            if number % 6 == 0:
                memory.record_memory_use(event_ids=[event.id], receipt_id=f"use {number}")
            if number % 13 == 0:
                memory.pin_event(event.id)
        memory.append_turn("a later turn", "reply")
        expected = {(number, limit): _hits(memory.search_events(query, limit=limit, explain=True, **options))
                    for number, (query, options) in enumerate(queries) for limit in (1, 6, 20)}
        for (number, limit), hits in expected.items():
            query, options = queries[number]
            assert _hits(memory.search_events(query, limit=limit, **options)) == hits
    with stratagate.open(path, "ns", read_only=True) as reader:
        for (number, limit), hits in expected.items():
            query, options = queries[number]
            assert _hits(reader.search_events(query, limit=limit, **options)) == hits


def test_a_long_lived_reader_keeps_a_bounded_number_of_filter_subsets(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stored_facets, "KEPT_SUBSETS", 2)
    path = tmp_path / "memory.sqlite"
    with stratagate.open(path, "ns", block_turn_size=1) as memory:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        names = ["Alice", "Bruno", "Chen", "Dana"]
        for name in names:
            memory.add_event(f"{name}'s card", "summary", source_block_id=block_id,
                             temporal={"participants": [name]})
    with stratagate.open(path, "ns", read_only=True) as reader:
        for _round in range(2):
            for name in names:
                hits = reader.search_events("", participants=[name.lower()])
                assert [hit.event.title for hit in hits] == [f"{name}'s card"]
        assert len(reader._retrieval._facets._classes) == 2
        assert len(reader._retrieval._facets._weighted) == 2


def test_a_long_lived_reader_keeps_a_bounded_number_of_filter_position_sets(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stored_facets, "KEPT_POSITION_SETS", 2)
    path = tmp_path / "memory.sqlite"
    names = ["Alice", "Bruno", "Chen"]
    with stratagate.open(path, "ns", block_turn_size=1) as memory:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        for name in names:
            for number in range(3):
                memory.add_event(f"{name}'s card {number}", "shared words", source_block_id=block_id,
                                 temporal={"participants": [name]})
    with stratagate.open(path, "ns", read_only=True) as reader:
        first = {name: _hits(reader.search_events("shared", participants=[name])) for name in names}
        for name in [*names, names[0], *reversed(names)]:
            assert _hits(reader.search_events("shared", participants=[name])) == first[name]
            assert {hit.event.title.split("'")[0] for hit in reader.search_events("shared", participants=[name])} \
                == {name}
        kept = reader._retrieval._facets._kept[("positions",)]
        assert len(kept) == 2
        assert all(not positions.flags.writeable for positions in kept.values())


def test_kept_postings_follow_the_commits(tmp_path: Path) -> None:
    """The postings the index keeps for a repeated word are those of the revision it reads: after a commit
    that changes them, the next answer is the new one (that of an index that keeps nothing)."""
    path = tmp_path / "memory.sqlite"
    with stratagate.open(path, "ns", block_turn_size=1) as memory:
        memory.append_turn("first turn", "reply")
        block_id = memory.list_blocks()[0].id
        for number in range(5):
            memory.add_event(f"card {number} budget", source_block_id=block_id)
        before = [hit.id for hit in memory.search_events("budget")]
        assert [hit.id for hit in memory.search_events("budget")] == before
        added = memory.add_event("budget budget", source_block_id=block_id)
        after = memory.search_events("budget")
        assert added.id in [hit.id for hit in after] and added.id not in before
        with mock.patch.object(stored_ranking, "KEPT_POSTINGS", 0):
            assert _hits(memory.search_events("budget")) == _hits(after)
