"""Following a memory: the stored revision read from storage, and what changed between two censuses."""

from __future__ import annotations

from pathlib import Path

import stratagate
from stratagate import rules
from stratagate.follow import describe_changes, stored_revision, take_census


def test_a_second_writer_is_seen_and_described(tmp_path: Path) -> None:
    database = tmp_path / "m.sqlite"
    viewer = stratagate.open(database, "agent", block_turn_size=2, **rules.engine_options())
    viewer.append_turn("We decided to deploy Atlas on Friday.", "Noted.")
    before = take_census(viewer.backend, "agent")
    assert stored_revision(viewer.backend, "agent") == viewer.revision == before.revision

    with stratagate.open(database, "agent", **rules.engine_options()) as agent:
        for user in ("Maria Lopez leads the Atlas project.", "The Atlas deploy moved to Monday.",
                     "I prefer tea in the mornings.", "Thanks."):
            agent.append_turn(user, "Noted.")
        first = agent.list_events()[0].id
        agent.forget_event(first)

    assert stored_revision(viewer.backend, "agent") > viewer.revision  # the viewer's memory has not re-read
    after = take_census(viewer.backend, "agent", since=before)
    summary = describe_changes(before, after)
    texts = {item.kind: item.text for item in summary.items}
    assert summary.since_revision == before.revision and summary.revision == after.revision
    assert texts["turns"] == "4 turns" and texts["blocks"] == "2 blocks sealed"
    assert texts["forgotten"] == "1 event forgotten"
    events = next(item for item in summary.items if item.kind == "events")
    assert first in events.ids and summary.text().startswith(f"since revision {before.revision}: 4 turns, ")
    viewer.close()


def project_deploy_day(memory, day: str) -> None:
    claim = memory.claim_next_element_projection()
    memory.complete_element_projection(claim.job_id, {"changes": [
        {"name": "Atlas", "type": "project", "key": "deploy day", "mode": "state", "operation": "set_state",
         "value": day, "sourceEventIds": [event.id for event in claim.events]}]})


def test_a_superseded_fact_and_event_are_counted() -> None:
    memory = stratagate.in_memory(block_turn_size=1)
    memory.append_turn("hello", "hi")
    (block,) = memory.list_blocks()
    old = memory.add_event("Deploy on Friday", source_block_id=block.id)
    project_deploy_day(memory, "Friday")
    before = take_census(memory.backend, memory.namespace)
    memory.add_event("Deploy on Monday", source_block_id=block.id, supersedes=[old.id])
    project_deploy_day(memory, "Monday")
    summary = describe_changes(before, take_census(memory.backend, memory.namespace, since=before))
    assert [item.text for item in summary.items] == ["1 event", "1 event superseded", "1 fact superseded"]
    (element,) = memory.list_elements()
    assert summary.items[2].ids == (element.id,)
