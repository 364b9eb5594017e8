"""Property: any sequence of commits leaves a section as an ordered-dict model says, and as the in-memory
backend (`MemoryBackend`, the engine's other store) leaves it; the same for fact-level element commits."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate.storage.backend import ChangeSet, nest_facts
from stratagate.storage.memory_backend import MemoryBackend
from stratagate.storage.sql import SqlBackend
from tests.property_budget import examples

EVENT_IDS = [f"evt_{n}" for n in range(6)]
STAMP = "2026-03-02T09:00:00.000+08:00"
BLOCK = {
    "id": "blk_1", "sequence": 1, "startTurn": 1, "endTurn": 12, "createdAt": STAMP, "shouldExtract": True,
    "l0Title": "t", "l0Tags": [], "l1Summary": "s", "l2Keypoints": [], "l3Condensed": "c", "l4Readable": "r",
    "l5Raw": [{"id": f"msg_{n}", "role": "user", "content": f"m{n}", "createdAt": STAMP} for n in range(3)],
    "pointerCurrentLevel": 5, "pointerAnchorLevel": 5, "pointerAnchorBlockPosition": 1, "lastLiftedAt": None,
    "lastLiftedBy": None,
}


def _event(event_id: str, version: int) -> dict[str, Any]:
    return {
        "id": event_id, "title": f"{event_id} v{version}", "summary": "s", "narrative": "n", "tags": [],
        "quotes": [], "sourceMessageIds": [f"msg_{n}" for n in range(version % 3 + 1)], "sourceBlockId": "blk_1",
        "temporal": {"mentionedAt": STAMP}, "scope": "user", "criticality": "routine", "confidence": 0.5,
        "status": "active", "supersededBy": None,
        "weight": {"mentionCount": version, "lastAdoptedTurn": 1, "lastRetrievedAt": None, "pinned": False,
                   "floorWeight": 0, "forcedCap": None},
        "createdAt": STAMP, "updatedAt": STAMP,
    }


mutations = st.lists(
    st.tuples(
        st.lists(st.tuples(st.sampled_from(EVENT_IDS), st.integers(0, 50)), max_size=4, unique_by=lambda u: u[0]),
        st.lists(st.sampled_from(EVENT_IDS), max_size=3, unique=True),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=mutations)
def test_commits_match_an_ordered_model(backend: SqlBackend, steps) -> None:
    namespace = f"prop-{uuid.uuid4().hex[:8]}"  # one backend per test, one namespace per example
    revision = backend.create_space(namespace, {})
    setup = ChangeSet()
    setup.upsert("blocks", BLOCK)
    revision = backend.commit(namespace, setup, revision)
    memory = MemoryBackend()
    memory.create_space(namespace, {})
    memory.commit(namespace, setup, 1)
    model: dict[str, dict[str, Any]] = {}
    for upserts, deletes in steps:
        changes = ChangeSet()
        for event_id in deletes:  # a change reads "delete, then upsert"
            changes.delete("events", event_id)
            model.pop(event_id, None)
        for event_id, version in upserts:
            record = _event(event_id, version)
            changes.upsert("events", record)
            model[event_id] = copy.deepcopy(record)  # replacing keeps the place; a new or re-added id goes last
        revision = backend.commit(namespace, changes, revision)
        memory.commit(namespace, changes, revision - 1)
    assert backend.load_section(namespace, "events") == list(model.values())
    assert backend.query_keys(namespace, "events") == list(model) == memory.query_keys(namespace, "events")
    assert memory.load_section(namespace, "events") == list(model.values())
    assert backend.load_space(namespace)["revision"] == revision == 2 + len(steps)


ELEMENT_IDS = ["elem_a", "elem_b"]
FACT_IDS = [f"fact_{n}" for n in range(5)]


def _fact(fact_id: str, version: int) -> dict[str, Any]:
    return {"id": fact_id, "key": f"k{version % 2}", "mode": "state", "value": f"v{version}",
            "sourceEventIds": EVENT_IDS[: version % 3 + 1], "status": "active", "createdAt": STAMP,
            "updatedAt": STAMP}


def _element(element_id: str, version: int, sources: list[str]) -> dict[str, Any]:
    """An element's own fields; sourceMessageIds is what SQL derives from the source events (msg_0 each)."""
    return {"id": element_id, "name": f"{element_id} v{version}", "type": "project", "aliases": [],
            "currentState": f"state {version}", "sourceEventIds": sources,
            "sourceMessageIds": ["msg_0"] if sources else [],
            "weight": {"mentionCount": version, "lastAdoptedTurn": 1, "lastRetrievedAt": None, "pinned": False,
                       "floorWeight": 0, "forcedCap": None},
            "createdAt": STAMP, "updatedAt": STAMP}


fact_steps = st.lists(
    st.one_of(
        st.tuples(st.just("fact"), st.sampled_from(FACT_IDS), st.sampled_from(ELEMENT_IDS), st.integers(0, 9)),
        st.tuples(st.just("drop fact"), st.sampled_from(FACT_IDS)),
        st.tuples(st.just("element"), st.sampled_from(ELEMENT_IDS), st.integers(0, 9)),
        st.tuples(st.just("source"), st.sampled_from(ELEMENT_IDS), st.sampled_from(EVENT_IDS)),
        st.tuples(st.just("whole"), st.sampled_from(ELEMENT_IDS), st.lists(st.sampled_from(FACT_IDS), max_size=3,
                                                                          unique=True)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=fact_steps)
def test_fact_level_commits_match_a_model(backend: SqlBackend, steps) -> None:
    """`elementFacts` upserts and deletes, facts-less element upserts and appended sources, one commit each,
    leave elements (facts nested) as a model says, on SQL and in memory alike."""
    namespace = f"facts-{uuid.uuid4().hex[:8]}"
    revision = backend.create_space(namespace, {})
    memory = MemoryBackend()
    memory.create_space(namespace, {})
    setup = ChangeSet()
    setup.upsert("blocks", BLOCK)
    for event_id in EVENT_IDS:
        setup.upsert("events", {**_event(event_id, 0), "sourceMessageIds": ["msg_0"]})
    elements: dict[str, dict[str, Any]] = {}
    facts: dict[str, dict[str, dict[str, Any]]] = {}
    for element_id in ELEMENT_IDS:
        elements[element_id], facts[element_id] = _element(element_id, 0, []), {}
        setup.upsert("elements", {**elements[element_id], "facts": []})
    revision = backend.commit(namespace, setup, revision)
    memory.commit(namespace, setup, 1)

    for step in steps:
        changes = ChangeSet()
        kind = step[0]
        if kind == "fact":  # replaced in place where it is; appended when new or moved to another element
            _kind, fact_id, element_id, version = step
            record = _fact(fact_id, version)
            changes.upsert("elementFacts", {**record, "elementId": element_id})
            owner = next((owner for owner, held in facts.items() if fact_id in held), None)
            if owner is not None and owner != element_id:
                del facts[owner][fact_id]
            facts[element_id][fact_id] = record
        elif kind == "drop fact":
            changes.delete("elementFacts", step[1])
            for held in facts.values():
                held.pop(step[1], None)
        elif kind == "element":  # own fields only: facts stay
            _kind, element_id, version = step
            elements[element_id] = _element(element_id, version, elements[element_id]["sourceEventIds"])
            changes.upsert("elements", elements[element_id])
        elif kind == "source":
            _kind, element_id, event_id = step
            current = elements[element_id]
            if event_id in current["sourceEventIds"]:
                continue
            added_messages = [] if current["sourceEventIds"] else ["msg_0"]
            change = {key: value for key, value in current.items() if not key.startswith("source")}
            changes.upsert("elements", {**change, "addedSourceEventIds": [event_id],
                                        "addedSourceMessageIds": added_messages})
            elements[element_id] = _element(element_id, current["weight"]["mentionCount"],
                                            [*current["sourceEventIds"], event_id])
            elements[element_id].update(name=current["name"], currentState=current["currentState"])
        else:  # the whole element: its facts become exactly these
            _kind, element_id, fact_ids = step
            whole = [_fact(fact_id, 7) for fact_id in fact_ids]
            changes.upsert("elements", {**elements[element_id], "facts": whole})
            for held in facts.values():
                for fact_id in fact_ids:
                    held.pop(fact_id, None)
            facts[element_id] = {fact["id"]: fact for fact in whole}
        revision = backend.commit(namespace, changes, revision)
        memory.commit(namespace, changes, revision - 1)

    expected = [nest_facts(elements[key], list(facts[key].values())) for key in ELEMENT_IDS]
    assert backend.load_section(namespace, "elements") == expected
    assert memory.load_section(namespace, "elements") == expected
    assert backend.fetch(namespace, "elements", ["elem_b"]) == expected[1:] == memory.fetch(namespace, "elements",
                                                                                            ["elem_b"])
