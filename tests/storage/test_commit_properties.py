"""Property: any sequence of commits leaves a section as an ordered-dict model says, and as the in-memory
backend (`MemoryBackend`, the engine's other store) leaves it."""

from __future__ import annotations

import copy
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stratagate.storage.backend import ChangeSet
from stratagate.storage.memory_backend import MemoryBackend
from stratagate.storage.sql import SqlBackend

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


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
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
