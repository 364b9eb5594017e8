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


def _census_plan(database: Path) -> str:
    import sqlite3

    statement = ("SELECT id, status FROM events WHERE namespace = 'agent' "
                 "AND status IN ('superseded', 'forgotten') AND status != 'active' ORDER BY position, id")
    with sqlite3.connect(database) as connection:
        return " ".join(row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {statement}"))


def _has_inactive_index(database: Path) -> bool:
    import sqlite3

    with sqlite3.connect(database) as connection:
        found = connection.execute("SELECT count(*) FROM sqlite_master WHERE name = 'events_inactive_idx'")
        return found.fetchone()[0] == 1


def test_the_census_reads_the_events_that_are_not_active_from_their_partial_index(tmp_path: Path) -> None:
    import sqlite3

    database = tmp_path / "m.sqlite"
    with stratagate.open(database, "agent", block_turn_size=1) as memory:
        memory.append_turn("hello", "hi")
        (block,) = memory.list_blocks()
        events = [memory.add_event(f"Event {number}", source_block_id=block.id) for number in range(4)]
        memory.forget_event(events[1].id)
        memory.add_event("Event 0, corrected", source_block_id=block.id, supersedes=[events[0].id])
    assert _has_inactive_index(database) and "COVERING INDEX events_inactive_idx" in _census_plan(database)
    expected = {events[0].id: "superseded", events[1].id: "forgotten"}

    # A v7 file written before the index existed: a read-only open lists the same events without it (and
    # never writes), a writable open creates it at its first census.
    with sqlite3.connect(database) as connection:
        connection.execute("DROP INDEX events_inactive_idx")
    with stratagate.open(database, "agent", read_only=True) as reader:
        assert take_census(reader.backend, "agent").events == expected
    assert not _has_inactive_index(database)
    with stratagate.open(database, "agent") as memory:
        assert take_census(memory.backend, "agent").events == expected
    assert _has_inactive_index(database)
    with stratagate.open(database, "agent") as memory:  # the index is one the writable open expects
        memory.forget_event(events[2].id)
        assert take_census(memory.backend, "agent").events == {**expected, events[2].id: "forgotten"}
