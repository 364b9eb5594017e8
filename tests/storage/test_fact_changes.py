"""Fact-level commits: a projection that adds one fact to an element with a long history writes that fact only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event

import stratagate
from stratagate.demo import counter_ids
from stratagate.memory import StrataGate
from stratagate.storage.sql import SqlBackend
from tests.core.helpers import Clock

FACTS = 40


def _member_projector(request: Any) -> dict[str, Any]:
    """Each event adds its title's last word to Atlas's members: one new `set` fact per event, none superseded."""
    return {"changes": [{"name": "Atlas", "type": "project", "key": "members", "mode": "set",
                         "operation": "add_set_item", "value": [event.title.split()[-1]],
                         "sourceEventIds": [event.id]} for event in request.events]}


def _add_member(memory: StrataGate, block_id: str, name: str) -> None:
    memory.add_event(f"Joined {name}", source_block_id=block_id)
    memory.resume_pending_work()


def _row_writes(backend: SqlBackend, action) -> dict[tuple[str, str], int]:
    """(verb, table) -> rows handed to INSERT/UPDATE/DELETE statements while `action` ran (executemany counts
    each parameter set)."""
    writes: dict[tuple[str, str], int] = {}

    def record(_conn, _cursor, statement: str, parameters: Any, _context, executemany: bool) -> None:
        words = statement.split()
        verb = words[0].upper()
        if verb in ("INSERT", "UPDATE", "DELETE"):
            table = words[{"INSERT": 2, "UPDATE": 1, "DELETE": 2}[verb]].strip('"')
            rows = len(parameters) if executemany else 1
            writes[(verb, table)] = writes.get((verb, table), 0) + rows

    event.listen(backend.engine, "before_cursor_execute", record)
    try:
        action()
    finally:
        event.remove(backend.engine, "before_cursor_execute", record)
    return writes


def test_adding_one_fact_to_a_long_history_writes_one_fact_row(tmp_path: Path) -> None:
    memory = stratagate.open(tmp_path / "memory.sqlite", "ns", block_turn_size=1, projector=_member_projector)
    block = memory.append_turn("Atlas kickoff", "ok").sealed_block
    for index in range(FACTS):
        _add_member(memory, block.id, f"person{index}")
    before = memory.export_snapshot()["elements"][0]
    assert len(before["facts"]) == FACTS

    writes = _row_writes(memory.backend, lambda: _add_member(memory, block.id, "Zoe"))

    assert writes[("INSERT", "element_facts")] == 1
    assert writes[("INSERT", "element_fact_sources")] == 1
    assert writes[("INSERT", "element_sources")] == 1  # the new source event, appended
    assert ("DELETE", "element_facts") not in writes and ("DELETE", "element_sources") not in writes
    after = memory.export_snapshot()["elements"][0]
    assert after["facts"][:-1] == before["facts"]
    assert after["facts"][-1]["value"] == ["Zoe"]
    assert after["sourceEventIds"][:-1] == before["sourceEventIds"]
    memory.close()
    reopened = stratagate.open(tmp_path / "memory.sqlite", "ns")
    assert reopened.export_snapshot()["elements"][0] == after
    assert reopened.list_elements()[0].current_state.endswith("Zoe")
    reopened.close()


def test_fact_level_commits_leave_sqlite_and_memory_alike(tmp_path: Path) -> None:
    """The same projections (superseding state facts, adding set facts) on both backends give the same elements."""
    def projector(request: Any) -> dict[str, Any]:
        changes = []
        for card in request.events:
            word = card.title.split()[-1]
            changes.append({"name": "Atlas", "type": "project", "key": "storage", "mode": "state",
                            "operation": "set_state", "value": word, "sourceEventIds": [card.id]})
            changes.append({"name": "Atlas", "type": "project", "key": "members", "mode": "set",
                            "operation": "add_set_item", "value": [word, "Ann"], "sourceEventIds": [card.id]})
        return {"changes": changes}

    def run(memory: StrataGate) -> list[dict[str, Any]]:
        block = memory.append_turn("Atlas kickoff", "ok").sealed_block
        for word in ("SQLite", "PostgreSQL", "Redis", "SQLite"):
            _add_member(memory, block.id, word)
        return memory.export_snapshot()["elements"]

    def options() -> dict[str, Any]:
        return {"block_turn_size": 1, "projector": projector, "now": Clock(), "id_factory": counter_ids(),
                "element_id_factory": counter_ids()}

    on_file = stratagate.open(tmp_path / "memory.sqlite", "ns", **options())
    elements = run(on_file)
    on_file.close()
    assert run(stratagate.in_memory(namespace="ns", **options())) == elements
    assert [fact["status"] for fact in elements[0]["facts"] if fact["key"] == "storage"] == [
        "superseded", "superseded", "superseded", "active"]
    assert [fact["value"] for fact in elements[0]["facts"] if fact["key"] == "members"] == [
        ["SQLite", "Ann"], ["PostgreSQL"], ["Redis"]]
