"""The demo memory builds from resources/demo, deterministically, with something of every kind to show."""

from __future__ import annotations

from pathlib import Path

import pytest

import stratagate
from stratagate.demo import build_demo_database, load_conversation
from stratagate.errors import InvalidInputError


def test_demo_builds_with_blocks_events_elements_and_curation(tmp_path: Path):
    path = build_demo_database(tmp_path / "demo.sqlite")
    script = load_conversation()
    memory = stratagate.open(path, script["namespace"], read_only=True)
    assert len(script["turns"]) == 60 and memory.current_turn == 60
    assert memory.thread_ids() == ["nimbus-dev", "nimbus-ops"]
    assert len(memory.list_blocks()) == 10 and memory.list_open_tail() == []
    events = memory.list_events()
    assert len(events) >= 15
    assert any(event.weight.pinned for event in events)
    assert [event.status for event in events].count("forgotten") == 1
    superseded = [event for event in events if event.status == "superseded"]
    assert any("SQLite" in event.title for event in superseded)
    assert any(event.temporal.happened_start and event.temporal.happened_start != event.temporal.mentioned_at[:10]
               for event in events)
    project = next(element for element in memory.list_elements() if element.type == "project")
    assert "storage: PostgreSQL" in project.current_state
    assert [fact.status for fact in project.facts if fact.key == "storage"] == ["superseded", "active"]
    assert [block.lift_source for block in memory.list_blocks()].count("user") == 1
    assert len(memory.list_usage_receipts()) == 1
    assert all(job.status == "succeeded" for job in memory.list_extraction_jobs())
    memory.close()


def test_demo_is_deterministic_and_does_not_overwrite_by_default(tmp_path: Path):
    script = load_conversation()
    snapshots = []
    for name in ("one.sqlite", "two.sqlite"):
        memory = stratagate.open(build_demo_database(tmp_path / name), script["namespace"], read_only=True)
        snapshots.append(memory.export_snapshot())
        memory.close()
    assert snapshots[0] == snapshots[1]
    with pytest.raises(InvalidInputError, match="file exists"):
        build_demo_database(tmp_path / "one.sqlite")
    build_demo_database(tmp_path / "one.sqlite", overwrite=True)
