"""The persistent event index ranks exactly like the in-memory one (and so like the reference's BM25) after
any sequence of commits, on SQLite and PostgreSQL; files that cannot hold it get it in the outside cache."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select, update

from stratagate.search import stored
from stratagate.search.documents import event_search_fields
from stratagate.search.index import InvertedIndex
from stratagate.search.stored import tables as stored_tables
from stratagate.search.stored import terms as stored_terms
from stratagate.search.stored import writes as stored_writes
from stratagate.storage import search_tables
from stratagate.storage.backend import ChangeSet
from stratagate.storage.sql import SqlBackend, open_backend
from tests.conftest import REFERENCE_NAMESPACE, REFERENCE_ORACLE
from tests.property_budget import examples

NS = REFERENCE_NAMESPACE
WORDS = ["alpha", "beta", "Gamma", "delta", "v2.0", "don't", "你好", "世界", "中", "x"]
KEYS = ["a", "A", "b", "B", "evt_9", "evt_10", "k\u200b", "k", *(f"e{i}" for i in range(12))]
QUERIES = ["alpha", "beta delta", "你好 世界", "x Gamma", "missing", "中 alpha v2.0"]


def _oracle_event_calls() -> list[dict]:
    oracle = json.loads(REFERENCE_ORACLE.read_text())["namespaces"][NS]["oracle"]
    return [call for call in oracle if call["kind"] == "searchEvents" and call["query"]
            and not any((call.get("options") or {}).get(name)
                        for name in ("participants", "eventType", "happenedFrom", "happenedTo"))]


def _memory_index(records: list[dict[str, Any]]) -> InvertedIndex:
    index = InvertedIndex()
    for record in records:
        if record["status"] in stored.CANDIDATE_STATUSES:
            index.add(record["id"], event_search_fields(record))
    return index


@pytest.mark.parametrize("call", _oracle_event_calls(), ids=lambda call: call["query"])
def test_stored_ranking_matches_the_reference_oracle(backend: SqlBackend, reference_v7, call: dict) -> None:
    backend.import_namespace(NS, reference_v7["snapshot"], reference_v7["revision"])
    limit = (call.get("options") or {}).get("limit", 6)
    ranked = backend.event_search_index(NS).rank(call["query"], limit=limit)
    assert [key for key, _score in ranked] == [hit["id"] for hit in call["result"]]
    assert ranked == _memory_index(reference_v7["snapshot"]["events"]).rank(call["query"], limit=limit)


texts = st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join)
operations = st.lists(
    st.tuples(st.sampled_from(["write", "write", "forget", "delete"]), st.sampled_from(KEYS), texts, texts,
              st.sampled_from(["active", "superseded"])),
    max_size=40,
)


def _event(template: dict[str, Any], key: str, title: str, summary: str, status: str) -> dict[str, Any]:
    record = copy.deepcopy(template)
    record.update(id=key, title=title, summary=summary, narrative="", quotes=[], tags=[], status=status,
                  sourceMessageIds=[])
    record["temporal"] = {"participants": [], "eventType": title[:5] or None}
    return record


def _forget_or_delete(changes: ChangeSet, events: dict[str, dict[str, Any]], operation: str, key: str) -> None:
    """A forget (status forgotten) or delete of a written event, staged in `changes`; other operations, or a key
    never written, change nothing."""
    if operation == "forget" and key in events:
        events[key] = {**events[key], "status": "forgotten"}
        changes.upsert("events", events[key])
    elif operation == "delete" and key in events:
        del events[key]
        changes.delete("events", key)


@settings(max_examples=examples(60), deadline=None)
@given(operations, st.booleans())
def test_stored_ranking_equals_the_memory_index_after_any_commits(
        tmp_path_factory: pytest.TempPathFactory, reference_v7, operations, settle_at_once: bool) -> None:
    """Writes, re-writes, forgets and deletes in single commits; with `settle_at_once` every change is
    folded into the blobs right away, else changes pile up beside them, so both read paths are checked."""
    path = tmp_path_factory.mktemp("stored") / "memory.sqlite"
    snapshot = copy.deepcopy(reference_v7["snapshot"])
    template = snapshot["events"][0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stored_writes, "SETTLE_AFTER", -1 if settle_at_once else 10_000)
        backend = open_backend(path)
        try:
            backend.import_namespace(NS, {**snapshot, "events": [], "elements": [], "elementProjectionJobs": []}, 1)
            revision = 1
            events: dict[str, dict[str, Any]] = {}
            for operation, key, title, summary, status in operations:
                changes = ChangeSet()
                if operation == "write":
                    events[key] = _event(template, key, title, summary, status)
                    changes.upsert("events", events[key])
                else:
                    _forget_or_delete(changes, events, operation, key)
                if not changes.is_empty():
                    revision = backend.commit(NS, changes, revision)
            in_order = backend.load_section(NS, "events")
            index = backend.event_search_index(NS)
            memory = _memory_index(in_order)
            for query in QUERIES:
                assert index.rank(query) == memory.rank(query)
                assert index.rank(query, limit=2) == memory.rank(query, limit=2)
            # A build from the stored events, in batches of three (so later batches append to the blobs).
            patch.setattr(stored_writes, "BUILD_BATCH", 3)
            with backend.engine.begin() as connection:
                connection.execute(search_tables.search_index_state.delete())
            rebuilt = backend.event_search_index(NS)
            for query in QUERIES:
                assert rebuilt.rank(query) == memory.rank(query)
            # Blobs of int32 triples, as earlier versions of this package wrote them, read the same.
            _unpack_blobs(backend)
            for query in QUERIES:
                assert rebuilt.rank(query) == memory.rank(query)
                assert rebuilt.rank(query, limit=2) == memory.rank(query, limit=2)
        finally:
            backend.close()


def _unpack_blobs(backend: SqlBackend) -> None:
    terms = search_tables.search_terms
    with backend.engine.begin() as connection:
        for term, blob in connection.execute(select(terms.c.term, terms.c.postings)).all():
            connection.execute(update(terms).where(terms.c.term == term).values(
                postings=stored_terms.unpack(bytes(blob)).triples().tobytes()))


postings_rows = st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(1, 2**31 - 1),
                                   st.integers(0, 2**31 - 1)), max_size=40)


@settings(max_examples=examples(200), deadline=None)
@given(postings_rows, st.sampled_from([1, 2, 4]))
def test_packed_postings_read_back_as_written(rows: list[tuple[int, int, int]], scale: int) -> None:
    # Every width of every column (small values, and any int32 one), in ascending distinct positions.
    by_position = {position // scale: (frequency // scale or 1, length // scale) for position, frequency, length
                   in rows}
    triples = np.array(sorted((position, *rest) for position, rest in by_position.items()),
                       dtype=stored_terms.TRIPLE).reshape(-1, 3)
    unpacked = stored_terms.unpack(triples.tobytes())
    for read in (unpacked, stored_terms.unpack(stored_terms.pack(unpacked))):
        assert read.triples().tolist() == triples.tolist()


def test_a_read_only_open_of_a_file_without_the_index_builds_it_outside_once(
        tmp_path: Path, reference_v7, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "memory.sqlite"
    with open_backend(path) as backend:
        backend.import_namespace(NS, reference_v7["snapshot"], reference_v7["revision"])
        with backend.engine.begin() as connection:
            for table in search_tables.SEARCH_TABLES:  # as a file written before the index existed
                connection.execute(table.delete())
    before = path.read_bytes()
    progress: list[tuple[int, int]] = []
    with open_backend(path, read_only=True) as forensic:
        ranked = forensic.event_search_index(NS, progress=lambda done, total: progress.append((done, total))).rank(
            "Atlas kickoff", limit=3)
    assert ranked == _memory_index(reference_v7["snapshot"]["events"]).rank("Atlas kickoff", limit=3)
    assert progress and progress[-1][0] == progress[-1][1] > 0
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["cache", "memory.sqlite"]
    cached = list((tmp_path / "cache" / "search-index").glob("*.sqlite"))
    assert len(cached) == 1
    # A second open reuses it without building.
    with open_backend(path, read_only=True) as forensic:
        forensic.event_search_index(NS, progress=lambda *_: pytest.fail("rebuilt a cached index"))


def test_a_changed_file_never_meets_its_stale_cached_index(
        tmp_path: Path, reference_v7, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "cache"))
    reference = Path(__file__).parents[1] / "fixtures" / "reference-v5-basic.sqlite"
    path = tmp_path / "reference.sqlite"
    shutil.copyfile(reference, path)
    with open_backend(path, read_only=True) as forensic:  # a v5 file: its index can only live outside
        first = forensic.event_search_index(NS).rank("Atlas", limit=1)
    assert first and first[0][0].startswith("evt_")
    with open_backend(path) as writable:  # upgraded to v7 in place; the new title only matches this query
        record = writable.fetch(NS, "events", [first[0][0]])[0]
        revision = writable.load_space(NS)["revision"]
        writable.commit(NS, _retitled(record, "Zeppelin"), revision)
    with open_backend(path, read_only=True) as forensic:
        assert [key for key, _ in forensic.event_search_index(NS).rank("Zeppelin")] == [first[0][0]]


def _retitled(record: dict[str, Any], title: str) -> ChangeSet:
    changes = ChangeSet()
    changes.upsert("events", {**record, "title": title})
    return changes


def test_an_index_left_behind_by_a_writer_that_does_not_keep_it_is_rebuilt(tmp_path: Path, reference_v7) -> None:
    """A writer that knows nothing of the index (an older version of this package, a repair tool) moves the
    revision without it: the index is then stale and is rebuilt, never read."""
    path = tmp_path / "memory.sqlite"
    with open_backend(path) as backend:
        backend.import_namespace(NS, reference_v7["snapshot"], reference_v7["revision"])
        [(event_id, _score)] = backend.event_search_index(NS).rank("Atlas", limit=1)
        with backend.engine.begin() as connection:
            connection.exec_driver_sql("UPDATE events SET title = 'Zeppelin' WHERE id = ?", (event_id,))
            connection.exec_driver_sql("UPDATE memory_spaces SET revision = revision + 1")
    with open_backend(path) as backend:
        assert [key for key, _ in backend.event_search_index(NS).rank("Zeppelin")] == [event_id]
    with open_backend(path, read_only=True) as forensic:
        assert [key for key, _ in forensic.event_search_index(NS).rank("Zeppelin")] == [event_id]


NAMES = ["Alice", "bob", "Carol", "张伟"]
named_operations = st.lists(
    st.tuples(st.sampled_from(["write", "write", "retitle", "forget", "delete"]), st.sampled_from(KEYS[:8]),
              st.lists(st.sampled_from(NAMES), max_size=3), texts),
    max_size=30,
)


def _name_groups_positions(backend: SqlBackend) -> dict[tuple[tuple[str, ...], ...], Any]:
    """For single names and pairs: the positions from the name terms, and from `search_participants`."""
    index = backend.event_search_index(NS)
    normalized = ["alice", "bob", "carol", "张伟"]
    groups = [((name,),) for name in normalized] + [(("alice", "bob"),), (("alice",), ("carol", "bob"))]
    found = {}
    with index.connect() as connection:
        for group in groups:
            from_sql = None
            for names in group:
                direct = (f"SELECT position FROM search_participants WHERE namespace = ? "
                          f"AND name IN ({', '.join('?' * len(names))})")
                part = set(stored_tables.position_set(connection, direct, (NS, *names)).tolist())
                from_sql = part if from_sql is None else from_sql & part
            terms = index.name_positions(connection, group)
            found[group] = (None if terms is None else terms.tolist(), sorted(from_sql))
    return found


@settings(max_examples=examples(40), deadline=None)
@given(named_operations, st.booleans())
def test_participants_name_terms_hold_the_participants_positions_after_any_commits(
        tmp_path_factory: pytest.TempPathFactory, reference_v7, operations, settle_at_once: bool) -> None:
    """A participants filter's positions from its names' terms are `search_participants`' after any commits
    (participants changed with or without the words, forgets, deletes); an index of the format before name
    terms is read without them and gets them at its next writable open."""
    path = tmp_path_factory.mktemp("names") / "memory.sqlite"
    snapshot = copy.deepcopy(reference_v7["snapshot"])
    template = snapshot["events"][0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stored_writes, "SETTLE_AFTER", -1 if settle_at_once else 10_000)
        with open_backend(path) as backend:
            backend.import_namespace(NS, {**snapshot, "events": [], "elements": [], "elementProjectionJobs": []}, 1)
            revision = 1
            events: dict[str, dict[str, Any]] = {}
            for operation, key, names, title in operations:
                changes = ChangeSet()
                if operation == "write" or (operation == "retitle" and key not in events):
                    events[key] = _event(template, key, title, "summary", "active")
                    events[key]["temporal"]["participants"] = names
                    changes.upsert("events", events[key])
                elif operation == "retitle":  # the same words, other participants
                    events[key] = copy.deepcopy(events[key])
                    events[key]["temporal"]["participants"] = names
                    changes.upsert("events", events[key])
                else:
                    _forget_or_delete(changes, events, operation, key)
                if not changes.is_empty():
                    revision = backend.commit(NS, changes, revision)
            for from_terms, from_sql in _name_groups_positions(backend).values():
                assert from_terms == from_sql
            # As the format before name terms left it: read without them, then given them by a writable open.
            state, terms = search_tables.search_index_state, search_tables.search_terms
            with backend.engine.begin() as connection:
                connection.execute(terms.delete().where(terms.c.term.like("participant:%")))
                connection.execute(update(state).values(format=stored_tables.FORMAT_WITHOUT_NAME_TERMS))
        with open_backend(path, read_only=True) as reader:
            assert all(from_terms is None for from_terms, _sql in _name_groups_positions(reader).values())
        with open_backend(path) as backend:
            for from_terms, from_sql in _name_groups_positions(backend).values():
                assert from_terms == from_sql
