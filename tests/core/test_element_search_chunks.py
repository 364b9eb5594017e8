"""Element search reads elements a chunk at a time (never the whole section): its answers must be those of a
memory that holds the section loaded, and a text query's order the reference's BM25 over every fact."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stratagate
from stratagate import retrieval
from stratagate.search.bm25 import bm25_rank
from stratagate.search.documents import element_fact_search_fields, field_tokens
from stratagate.storage.sql import open_backend
from tests.property_budget import examples

NAMESPACE = "ns"
WORDS = ["atlas", "berlin", "Bob", "sqlite", "postgres", "café", "中文", "demo", "alice", "v0"]
TYPES = ["person", "project", "place"]
STAMP = "2026-03-01T00:00:00.000+08:00"

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
elements = st.lists(st.tuples(words, st.sampled_from(TYPES), st.lists(words, max_size=2),
                              st.lists(st.tuples(words, words), min_size=1, max_size=3),
                              st.integers(1, 9)), min_size=1, max_size=8)
options = st.fixed_dictionaries({}, optional={"name": st.sampled_from(WORDS + ["zz"]), "type": st.sampled_from(TYPES),
                                              "limit": st.sampled_from([1, 3, 12]), "explain": st.booleans()})


def _records(generated) -> list[dict]:
    records = []
    for number, (name, kind, aliases, facts, day) in enumerate(generated):
        records.append({
            "id": f"elem_{number}", "name": name, "type": kind, "aliases": aliases, "currentState": "",
            "sourceEventIds": [], "sourceMessageIds": [], "createdAt": STAMP,
            "updatedAt": f"2026-03-0{day}T00:00:00.000+08:00",
            "weight": {"mentionCount": 1, "lastAdoptedTurn": 0, "lastRetrievedAt": None, "pinned": False,
                       "floorWeight": 0.0, "forcedCap": None},
            "facts": [{"id": f"fact_{number}_{position}", "key": key, "mode": "state", "value": value,
                       "validFrom": "2026-03-01", "sourceEventIds": [], "status": "active", "createdAt": STAMP,
                       "updatedAt": STAMP} for position, (key, value) in enumerate(facts)],
        })
    return records


def _write(path: Path, records: list[dict]) -> None:
    with open_backend(path) as backend, backend.write_transaction(NAMESPACE) as connection:
        backend.start_namespace(connection, NAMESPACE, {"currentTurn": 1, "blockTurnSize": 6,
                                                        "blockDecayLambda": 0.3}, 1, replace=False)
        backend.write_records(connection, NAMESPACE, "elements", records)
        backend.finish_namespace(connection, NAMESPACE)


def _answer(hits) -> tuple:
    explanation = getattr(hits, "explanation", None)
    return ([(hit.element.id, hit.fact.id, hit.score, None if hit.explanation is None else
              (hit.explanation.ranks, hit.explanation.bm25)) for hit in hits],
            None if explanation is None else (explanation.mode, explanation.rankings, explanation.excluded))


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(generated=elements, query=st.sampled_from(["", "atlas", "bob berlin", "中文 café", "zz"]), chosen=options)
def test_chunked_element_search_answers_as_the_loaded_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              generated, query, chosen):
    monkeypatch.setattr(retrieval, "ELEMENTS_PER_READ", 2)  # chunk boundaries inside every memory
    path = tmp_path / f"elements-{abs(hash(repr(generated)))}.sqlite"
    path.unlink(missing_ok=True)
    records = _records(generated)
    _write(path, records)
    with stratagate.open(path, NAMESPACE, read_only=True) as cold, \
            stratagate.open(path, NAMESPACE, read_only=True) as loaded:
        loaded.list_elements()  # the section held whole, as before
        assert _answer(cold.search_elements(query, **chosen)) == _answer(loaded.search_elements(query, **chosen))
        if query and set(chosen) <= {"limit"}:
            facts = [(element, fact) for element in records for fact in element["facts"]]
            oracle = bm25_rank(facts, query, lambda pair: field_tokens(element_fact_search_fields(*pair)),
                               lambda pair: pair[1]["id"])
            expected = [fact["id"] for (_element, fact), _score in oracle][: chosen.get("limit", 8)]
            assert [hit.fact.id for hit in cold.search_elements(query, **chosen)] == expected
