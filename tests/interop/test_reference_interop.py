"""The reference StrataGate (schema 5) opens v5 files this inspector curated and sees the curation.

Live tests run the local reference build (tests/differential/reference.py says where) through
`reference_agent.mjs` and are skipped, with the reason, where it is absent. What the reference answered is
kept in tests/fixtures/interop/, with the file it wrote, so CI checks the same curation against those answers
without Node: `STRATAGATE_RECORD_INTEROP=1` rewrites them from a live run.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

import stratagate
from stratagate import journal
from stratagate.errors import StorageConflictError
from stratagate.storage.upgrade import upgrade_file
from tests.conftest import FIXTURES, REFERENCE_DB, REFERENCE_NAMESPACE
from tests.differential import reference
from tests.storage.reference_rules import check_loadable, layout

AGENT = Path(__file__).parent / "reference_agent.mjs"
RECORDED = FIXTURES / "interop"
WRITTEN_DB = RECORDED / "reference-v5-written.sqlite"
WRITTEN_NAMESPACE = "agent:one"
live = pytest.mark.skipif(reference.missing_reason() is not None, reason=str(reference.missing_reason()))


def ask_reference(command: str, database: Path, namespace: str, *arguments: str) -> dict[str, Any]:
    build = reference.reference_build()
    return json.loads(reference.run_node(AGENT, str(build), command, str(database), namespace, *arguments))


def _record(name: str, answer: dict[str, Any]) -> None:
    if os.environ.get("STRATAGATE_RECORD_INTEROP"):
        RECORDED.mkdir(exist_ok=True)
        (RECORDED / name).write_text(json.dumps(answer, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _entry(action: str, ids: list[str]) -> dict[str, Any]:
    return journal.new_entry("reviewer", action, ids, None, None)


def curate_reference_fixture(path: Path) -> None:
    """Every curation kind on the reference's own file, each with its journal entry."""
    with stratagate.open(path, REFERENCE_NAMESPACE) as memory:
        memory.pin_event("evt_51", journal_entry=_entry("pin", ["evt_51"]))
        memory.unpin_event("evt_52", journal_entry=_entry("unpin", ["evt_52"]))
        memory.forget_event("evt_55", journal_entry=_entry("forget", ["evt_55"]))
        memory.archive_event("evt_87", journal_entry=_entry("archive", ["evt_87"]))
        memory.restore_event("evt_61", journal_entry=_entry("restore", ["evt_61"]))
        memory.supersede_event("evt_85", "evt_86", journal_entry=_entry("supersede", ["evt_85", "evt_86"]))
        memory.unsupersede_event("evt_53", journal_entry=_entry("unsupersede", ["evt_53"]))
        memory.lift_block("blk_50", 5, "user", journal_entry=_entry("lift", ["blk_50"]))


def curate_written_file(path: Path) -> None:
    with stratagate.open(path, WRITTEN_NAMESPACE) as memory:
        memory.pin_event("evt_6")
        memory.forget_event("evt_12")
        memory.supersede_event("evt_18", "evt_24")
        memory.lift_block("blk_11", 5, "user")


def _events(answer: dict[str, Any]) -> dict[str, tuple]:
    return {event["id"]: (event["status"], event["pinned"], event["supersededBy"]) for event in answer["events"]}


def _check_reference_fixture_answer(answer: dict[str, Any], revision_before: int) -> None:
    events = _events(answer)
    assert events["evt_51"] == ("active", True, None) and events["evt_52"] == ("active", False, None)
    assert events["evt_55"][0] == "forgotten" and events["evt_87"][0] == "archived"
    assert events["evt_61"][0] == "active" and events["evt_53"] == ("active", False, None)
    assert events["evt_85"] == ("superseded", False, "evt_86")
    weights = {event["id"]: event["weight"] for event in answer["events"]}
    assert weights["evt_51"] == 1 and weights["evt_55"] == 0 and weights["evt_87"] == 0
    blocks = {block["id"]: block for block in answer["blocks"]}
    assert (blocks["blk_50"]["anchorLevel"], blocks["blk_50"]["anchorTurn"], blocks["blk_50"]["level"]) == (5, 40, 5)
    assert blocks["blk_50"]["lastLiftedAt"] is not None
    assert answer["revision"] == revision_before + 8  # one revision per curation, as the reference counts them
    assert "evt_55" not in answer["searches"]["atlas"] and "evt_87" not in answer["searches"]["atlas"]


def _revision(path: Path) -> int:
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT revision FROM memory_spaces").fetchone()[0]


# -- with the reference itself ----------------------------------------------------------------------------


@live
def test_the_reference_loads_its_fixture_curated_here_and_sees_the_curation(reference_db_copy: Path) -> None:
    reference_layout = layout(reference_db_copy)
    revision = _revision(reference_db_copy)
    curate_reference_fixture(reference_db_copy)
    check_loadable(reference_db_copy, 5, reference_layout)
    read_only_answer = ask_reference("report-read-only", reference_db_copy, REFERENCE_NAMESPACE)
    answer = ask_reference("report", reference_db_copy, REFERENCE_NAMESPACE, "atlas")
    _record("reference-v5-basic.curated.report.json", answer)
    _check_reference_fixture_answer(answer, revision)
    assert read_only_answer == {key: value for key, value in answer.items() if key != "searches"}


@live
def test_the_reference_loads_a_file_it_wrote_after_curation_here(tmp_path: Path) -> None:
    path = tmp_path / "agent.sqlite"
    written = ask_reference("write", path, WRITTEN_NAMESPACE, "8")
    if os.environ.get("STRATAGATE_RECORD_INTEROP"):
        RECORDED.mkdir(exist_ok=True)
        with closing(sqlite3.connect(path)) as source, closing(sqlite3.connect(WRITTEN_DB)) as target:
            source.backup(target)  # one file, its WAL included
    reference_layout = layout(path)
    assert [event["id"] for event in written["events"]] == ["evt_6", "evt_12", "evt_18", "evt_24"]
    curate_written_file(path)
    check_loadable(path, 5, reference_layout)
    answer = ask_reference("report", path, WRITTEN_NAMESPACE, "Decision")
    _record("reference-v5-written.curated.report.json", answer)
    events = _events(answer)
    assert events["evt_6"] == ("active", True, None) and events["evt_12"][0] == "forgotten"
    assert events["evt_18"] == ("superseded", False, "evt_24")
    assert "evt_12" not in answer["searches"]["Decision"]
    lifted = next(block for block in answer["blocks"] if block["id"] == "blk_11")
    assert (lifted["anchorLevel"], lifted["anchorTurn"], lifted["level"]) == (5, 8, 5)


@live
def test_the_reference_writing_turns_and_the_inspector_pinning_lose_nothing(reference_db_copy: Path) -> None:
    """Two processes on one v5 file: the reference appends turns (reopening on its conflict error), the
    inspector pins every event (catching up on ours). Every turn and every pin is there afterwards."""
    turns = 40
    command = [str(reference.node_binary()), "--no-warnings", str(AGENT), str(reference.reference_build()),
               "append", str(reference_db_copy), REFERENCE_NAMESPACE, str(turns), "agent"]
    agent = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "TZ": "UTC"})
    ours = {"conflicts": 0}

    def pin_everything() -> None:
        # Pin, unpin, pin every event, a little apart, so the two writers overlap for the agent's whole run.
        with stratagate.open(reference_db_copy, REFERENCE_NAMESPACE) as memory:
            for pinned in (True, False, True):
                for event_id in [event.id for event in memory.list_events()]:
                    while True:
                        try:
                            memory.pin_event(event_id, pinned)
                            break
                        except StorageConflictError:  # the agent committed first; we caught up, so retry
                            ours["conflicts"] += 1
                    time.sleep(0.02)

    pinner = threading.Thread(target=pin_everything)
    pinner.start()
    out, err = agent.communicate(timeout=600)
    pinner.join(timeout=600)
    assert agent.returncode == 0, err
    appended = json.loads(out)
    answer = ask_reference("report", reference_db_copy, REFERENCE_NAMESPACE)
    assert answer["turn"] == 40 + turns
    assert all(event["pinned"] for event in answer["events"]), _events(answer)
    with closing(sqlite3.connect(reference_db_copy)) as connection:
        stored = connection.execute("SELECT COUNT(*) FROM messages WHERE content LIKE 'agent question %'").fetchone()[0]
    assert stored == turns
    _record("two-writers.json", {"turns": turns, "pin_changes": 3 * len(answer["events"]),
                                 "reference_conflicts": appended["conflicts"], "inspector_conflicts": ours["conflicts"]})


@live
def test_a_namespace_created_here_in_a_v5_file_is_one_the_reference_writes_on(reference_db_copy: Path) -> None:
    stratagate.open(reference_db_copy, "agent:two").close()
    appended = ask_reference("append", reference_db_copy, "agent:two", "3", "second")
    assert appended["conflicts"] == 0
    with stratagate.open(reference_db_copy, "agent:two", read_only=True) as memory:
        assert memory.current_turn == 3 and len(memory.list_open_tail()) == 6


@live
def test_turns_the_engine_appends_to_a_v5_file_load_in_the_reference(reference_db_copy: Path) -> None:
    with stratagate.open(reference_db_copy, REFERENCE_NAMESPACE) as memory:
        for turn in range(13):  # the 13th seals a block of 12
            memory.append_turn(f"question {turn} about the atlas", f"answer {turn}")
        sealed = memory.list_blocks()[-1]
    answer = ask_reference("report", reference_db_copy, REFERENCE_NAMESPACE)
    assert answer["turn"] == 53
    block = next(block for block in answer["blocks"] if block["id"] == sealed.id)
    assert (block["anchorLevel"], block["anchorTurn"], block["level"]) == (5, sealed.end_turn, 5)  # as it seals


@live
def test_after_an_explicit_upgrade_the_reference_refuses_the_file(reference_db_copy: Path) -> None:
    upgrade_file(reference_db_copy)
    with pytest.raises(RuntimeError, match="SQLite schema 7 is newer than supported schema 5"):
        ask_reference("report", reference_db_copy, REFERENCE_NAMESPACE)


# -- against the recorded answers (no Node needed) -------------------------------------------------------


def test_the_fixture_curated_here_matches_what_the_reference_answered(reference_db_copy: Path) -> None:
    recorded = json.loads((RECORDED / "reference-v5-basic.curated.report.json").read_text())
    revision = _revision(reference_db_copy)
    curate_reference_fixture(reference_db_copy)
    _check_reference_fixture_answer(recorded, revision)  # the recorded answer is the one this file gets
    with closing(sqlite3.connect(reference_db_copy)) as connection:
        stored = {row[0]: (row[1], bool(row[2]), row[3]) for row in
                  connection.execute("SELECT id, status, pinned, superseded_by FROM events")}
        anchors = dict(connection.execute("SELECT id, pointer_anchor_turn FROM blocks"))
        assert connection.execute("SELECT revision FROM memory_spaces").fetchone()[0] == recorded["revision"]
    assert stored == _events(recorded)
    assert anchors == {block["id"]: block["anchorTurn"] for block in recorded["blocks"]}
    assert REFERENCE_DB.exists()


def test_a_reference_written_file_curated_here_matches_what_the_reference_answered(tmp_path: Path) -> None:
    path = tmp_path / "agent.sqlite"
    shutil.copyfile(WRITTEN_DB, path)
    reference_layout = layout(path)
    curate_written_file(path)
    check_loadable(path, 5, reference_layout)
    recorded = json.loads((RECORDED / "reference-v5-written.curated.report.json").read_text())
    with closing(sqlite3.connect(path)) as connection:
        stored = {row[0]: (row[1], bool(row[2]), row[3]) for row in
                  connection.execute("SELECT id, status, pinned, superseded_by FROM events")}
        anchors = dict(connection.execute("SELECT id, pointer_anchor_turn FROM blocks"))
    assert stored == _events(recorded)
    assert anchors == {block["id"]: block["anchorTurn"] for block in recorded["blocks"]}
