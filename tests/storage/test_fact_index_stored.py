"""Element search over the stored element index gives exactly the hits, scores, order and explanations of the
in-memory index a new process builds (`Retrieval` over the same memory without stored indexes), after any
sequence of element and fact commits (whole elements, element fields only, single facts, deletes), in a
writable and a read-only open, on SQLite and PostgreSQL; a file without the index gets it built once."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

import stratagate
from stratagate.retrieval import Retrieval
from stratagate.storage import fact_search_tables
from stratagate.storage.backend import ChangeSet
from stratagate.storage.sql import open_backend
from tests.core.helpers import WithoutStoredIndexes
from tests.property_budget import examples

WORDS = ["atlas", "Berlin", "bob", "sqlite", "café", "中文", "demo", "v0", "Atlas-2"]
TYPES = ["person", "project", "place"]
DAYS = ["2026-03-01", "2026-03-02", "2026-03-03"]

words = st.lists(st.sampled_from(WORDS), min_size=0, max_size=3).map(" ".join)
labels = st.tuples(words, st.sampled_from(TYPES), st.lists(words, max_size=2), st.sampled_from(DAYS))
fact = st.tuples(st.integers(0, 5), words, st.one_of(words, st.lists(words, max_size=2)))
operation = st.one_of(
    st.tuples(st.just("put"), st.integers(0, 5), labels, st.lists(fact, max_size=4)),
    st.tuples(st.just("fields"), st.integers(0, 5), labels),
    st.tuples(st.just("fact"), st.integers(0, 5), fact),
    st.tuples(st.just("drop"), st.integers(0, 5)),
    st.tuples(st.just("drop fact"), st.integers(0, 5), st.integers(0, 5)),
)
query = st.tuples(
    st.sampled_from(["", "atlas", "bob berlin", "中文 café", "zz", "atlas 2"]),
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.sampled_from(["atlas", "BOB", "zz", " "]),
            "type": st.sampled_from(TYPES + [""]),
            "limit": st.sampled_from([1, 3, 12]),
            "explain": st.booleans(),
        },
    ),
)


def _element(number: int, chosen: tuple, facts: list[tuple] | None) -> dict[str, Any]:
    name, kind, aliases, day = chosen
    record = {
        "id": f"elem_{number}",
        "name": name,
        "type": kind,
        "aliases": aliases,
        "currentState": "",
        "sourceEventIds": [],
        "sourceMessageIds": [],
        "createdAt": f"{DAYS[0]}T00:00:00.000+08:00",
        "updatedAt": f"{day}T00:00:00.000+08:00",
        "weight": {
            "mentionCount": 1,
            "lastAdoptedTurn": 0,
            "lastRetrievedAt": None,
            "pinned": False,
            "floorWeight": 0.0,
            "forcedCap": None,
        },
    }
    if facts is not None:
        record["facts"] = [_fact(number, *item) for item in {item[0]: item for item in facts}.values()]
    return record


def _fact(element: int, number: int, key: str, value: Any) -> dict[str, Any]:
    return {
        "id": f"fact_{element}_{number}",
        "key": key,
        "mode": "state",
        "value": value,
        "sourceEventIds": [],
        "status": "active",
        "createdAt": f"{DAYS[0]}T00:00:00.000+08:00",
        "updatedAt": f"{DAYS[0]}T00:00:00.000+08:00",
    }


def _answer(hits) -> tuple:
    explanation = hits.explanation
    return (
        [(hit.element.id, hit.fact.id, hit.score, hit.explanation) for hit in hits],
        None if explanation is None else (explanation.mode, explanation.rankings, explanation.excluded),
    )


def _commit(location: str, namespace: str, operations: list[tuple]) -> None:
    with open_backend(location) as backend:
        for action, number, *rest in operations:
            existing = {element["id"] for element in backend.load_section(namespace, "elements")}
            changes = ChangeSet()
            if action == "put":
                changes.upsert("elements", _element(number, rest[0], rest[1]))
            elif f"elem_{number}" not in existing:
                continue
            elif action == "fields":
                changes.upsert("elements", _element(number, rest[0], None))
            elif action == "fact":
                changes.upsert("elementFacts", {**_fact(number, *rest[0]), "elementId": f"elem_{number}"})
            elif action == "drop":
                changes.deletes["elements"] = [f"elem_{number}"]
            else:
                changes.deletes["elementFacts"] = [f"fact_{number}_{rest[0]}"]
            backend.commit(namespace, changes, backend.load_space(namespace)["revision"])


def _check(
    location: str, namespace: str, initial: list[tuple], operations: list[tuple], queries: list
) -> None:
    with open_backend(location) as backend, backend.write_transaction(namespace) as connection:
        backend.start_namespace(
            connection,
            namespace,
            {"currentTurn": 1, "blockTurnSize": 6, "blockDecayLambda": 0.3},
            1,
            replace=True,
        )
        backend.write_records(
            connection,
            namespace,
            "elements",
            [_element(number, chosen, facts) for number, (chosen, facts) in enumerate(initial)],
        )
        backend.finish_namespace(connection, namespace)
    _commit(location, namespace, operations)
    for read_only in (False, True):
        with stratagate.open(location, namespace, read_only=read_only) as memory:
            oracle = Retrieval(WithoutStoredIndexes(memory))
            for words_asked, options in queries:
                assert _answer(memory.search_elements(words_asked, **options)) == _answer(
                    oracle.search_elements(words_asked, **options)
                )
            if not read_only:
                assert memory.backend.element_search_index(
                    namespace, progress=lambda *_: pytest.fail("rebuilt")
                )


initial_elements = st.lists(st.tuples(labels, st.lists(fact, min_size=1, max_size=4)), max_size=5)


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    initial=initial_elements,
    operations=st.lists(operation, max_size=12),
    queries=st.lists(query, min_size=1, max_size=4),
)
def test_stored_element_search_equals_the_in_memory_search(
    tmp_path_factory: pytest.TempPathFactory, initial, operations, queries
) -> None:
    _check(str(tmp_path_factory.mktemp("facts") / "memory.sqlite"), "ns", initial, operations, queries)


_namespaces = itertools.count()


@pytest.mark.postgres
@settings(max_examples=examples(10), deadline=None)
@given(
    initial=initial_elements,
    operations=st.lists(operation, max_size=12),
    queries=st.lists(query, min_size=1, max_size=4),
)
def test_stored_element_search_on_postgresql_equals_the_in_memory_search(
    postgres_url: str, initial, operations, queries
) -> None:
    _check(postgres_url, f"facts-{next(_namespaces)}", initial, operations, queries)


def test_a_file_without_the_element_index_gets_it_built_once_outside(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("STRATAGATE_CACHE_DIR", str(tmp_path / "cache"))
    path = str(tmp_path / "memory.sqlite")
    chosen = ("Atlas", "project", ["atlas-2"], DAYS[1])
    _check(path, "ns", [(chosen, [(0, "storage", "sqlite"), (1, "owner", "bob")])], [], [("atlas", {})])
    with open_backend(path) as backend, backend.engine.begin() as connection:
        for table in fact_search_tables.FACT_SEARCH_TABLES:  # as a file written before the index existed
            connection.execute(text(f"DROP TABLE {table.name}"))
    progress: list[tuple[int, int]] = []
    with stratagate.open(path, "ns", read_only=True) as reader:
        reader.element_search_index(lambda done, total: progress.append((done, total)))
        assert [hit.fact.id for hit in reader.search_elements("sqlite")] == ["fact_0_0"]
    assert progress[-1] == (2, 2)
    with stratagate.open(path, "ns", read_only=True) as reader:
        reader.element_search_index(lambda *_: pytest.fail("rebuilt a cached index"))
        # A type filter fuses BM25 with the structured order of the element's facts: the match leads.
        assert [hit.fact.id for hit in reader.search_elements("bob", type="project")] == [
            "fact_0_1",
            "fact_0_0",
        ]
