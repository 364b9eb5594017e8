"""Hypothesis properties the other suites did not already state (docs/reliability.md lists those that exist):
export/import round trip through SQLite, undo/redo through the app's undo stack, and `expand_element(at)`
against the history of facts that produced the element."""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stratagate
from stratagate.callbacks import ProjectionRequest, ProjectionResult
from stratagate.rules import engine_options
from stratagate.storage.sql import open_backend
from stratagate_gui.curation.actions import Action
from tests.conftest import REFERENCE_DB
from tests.gui.test_curation import Harness, dump_rows
from tests.property_budget import examples

words = st.sampled_from(["Alice", "Bob", "Atlas", "Postgres", "decided", "prefers", "tea", "May 3, 2026", "Berlin",
                         "移行", "café", "plan", "ship", "demo", "!"])
sentences = st.lists(words, min_size=1, max_size=8).map(" ".join)


# Export, import, export: the same snapshot --------------------------------------------------------------------
memory_scripts = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), sentences),
        st.tuples(st.just("card"), sentences),
        st.tuples(st.sampled_from(["pin", "forget", "archive", "restore"]), st.integers(0, 50)),
    ),
    min_size=1, max_size=25,
)


def _run(memory: stratagate.StrataGate, script: list[tuple[str, object]]) -> None:
    for step, (operation, argument) in enumerate(script):
        blocks, events = memory.list_blocks(), memory.list_events()
        if operation == "turn":
            memory.append_turn(f"{argument} (turn {step})", "Noted.")
        elif operation == "card" and blocks:
            memory.add_event(str(argument), str(argument), source_block_id=blocks[-1].id, id=f"card-{step}")
        elif operation in ("pin", "forget", "archive", "restore") and events:
            event_id = events[int(argument) % len(events)].id
            getattr(memory, f"{operation}_event")(event_id)


@settings(max_examples=examples(25), deadline=None)
@given(memory_scripts)
def test_export_import_export_gives_the_same_snapshot(script) -> None:
    folder = Path(tempfile.mkdtemp(prefix="sg-roundtrip-"))
    try:
        with stratagate.open(folder / "original.sqlite", "prop", block_turn_size=2, **engine_options()) as memory:
            _run(memory, script)
        with open_backend(folder / "original.sqlite", read_only=True) as backend:
            exported = backend.export_namespace("prop")
        with open_backend(folder / "copy.sqlite") as backend:
            backend.import_namespace("prop", exported["snapshot"], exported["revision"])
        with open_backend(folder / "copy.sqlite", read_only=True) as backend:
            again = backend.export_namespace("prop")
    finally:
        shutil.rmtree(folder)
    assert again == exported


# Undo everything, redo everything: the rows as they were -----------------------------------------------------
REFERENCE_EVENTS = ["evt_51", "evt_52", "evt_53", "evt_54", "evt_55", "evt_61", "evt_83", "evt_87"]
curation_scripts = st.lists(
    st.tuples(
        st.sampled_from([Action.PIN, Action.UNPIN, Action.FORGET, Action.ARCHIVE, Action.RESTORE, Action.SUPERSEDE]),
        st.lists(st.sampled_from(REFERENCE_EVENTS), min_size=1, max_size=3, unique=True),
        st.sampled_from(REFERENCE_EVENTS),
    ),
    min_size=1, max_size=6,
)


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=curation_scripts)
def test_undoing_all_then_redoing_all_restores_each_state_exactly(qtbot, tmp_path: Path, script) -> None:
    database = Path(tempfile.mkdtemp(dir=tmp_path)) / "memory.sqlite"
    shutil.copyfile(REFERENCE_DB, database)
    harness = Harness(qtbot, database)
    try:
        harness.idle()
        start = dump_rows(database)
        for action, ids, replacement in script:
            if action is Action.SUPERSEDE and replacement in ids:
                continue
            harness.request(action, ids, replacement if action is Action.SUPERSEDE else None)
        done = dump_rows(database)
        while harness.stack.can_undo():
            harness.stack.undo()
            harness.idle()
        assert dump_rows(database) == start
        while harness.stack.can_redo():
            harness.stack.redo()
            harness.idle()
        assert dump_rows(database) == done
    finally:
        harness.close()


# expand_element(at) gives, at every instant, the value the fact history had then ------------------------------
START = datetime(2026, 1, 1, tzinfo=UTC)
histories = st.lists(st.tuples(st.integers(0, 60), st.sampled_from(["SQLite", "Postgres", "DuckDB", "MySQL"])),
                     min_size=1, max_size=8, unique_by=lambda change: change[0]).map(sorted)


def _day(offset: int) -> str:
    return (START + timedelta(days=offset)).strftime("%Y-%m-%d")


def _projector(request: ProjectionRequest) -> ProjectionResult:
    """Each card `day|value` sets the project's database from that day on."""
    changes = []
    for event in request.events:
        day, value = event.title.split("|")
        changes.append({"name": "Atlas", "type": "project", "key": "database", "mode": "state",
                        "operation": "set_state", "value": value, "validFrom": day, "sourceEventIds": [event.id]})
    return ProjectionResult(changes)


@settings(max_examples=examples(40), deadline=None)
@given(histories)
def test_expand_element_at_any_instant_shows_the_value_then_in_force(history) -> None:
    memory = stratagate.in_memory(namespace="facts", block_turn_size=1, projector=_projector)
    block = memory.append_turn("Atlas database history.", "Noted.").sealed_block
    for number, (offset, value) in enumerate(history):
        memory.add_event(f"{_day(offset)}|{value}", "Atlas database change.", id=f"change-{number}",
                         source_block_id=block.id)
        memory.resume_pending_work()
    (element,) = memory.list_elements()
    assert memory.expand_element(element.id).facts == element.facts  # no instant: the element as it is

    for offset in range(-1, 62):
        at = (START + timedelta(days=offset, hours=12)).isoformat().replace("+00:00", "Z")  # between changes
        in_force = [value for day, value in history if day <= offset]
        facts = [fact for fact in memory.expand_element(element.id, at).facts if fact.key == "database"]
        assert [fact.value for fact in facts] == in_force[-1:], at
