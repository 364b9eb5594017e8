"""End to end: while the main window is open on a memory, another process writes turns and events into it
through the memory tools; the window shows them without a reload, keeps its selection, and the undo stack of
an earlier pin still undoes it. On a SQLite file and on PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import stratagate
from stratagate import rules
from stratagate_gui.curation.actions import Action
from tests.postgres_server import fresh_database

NAMESPACE = "agent"
FIRST = [("We decided to deploy Atlas on Friday.", "Noted."), ("Maria Lopez leads the Atlas project.", "Got it.")]
AGENT = [("I prefer tea in the mornings.", "Tea."), ("The Atlas deploy moved to Monday.", "Monday then."),
         ("We decided to use PostgreSQL for Atlas.", "PostgreSQL it is."), ("Thanks.", "Welcome.")]

AGENT_SCRIPT = textwrap.dedent("""
    import json, sys
    import stratagate
    from stratagate import rules
    from stratagate.tools import MemoryTools

    location, namespace, turns = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    with stratagate.open(location, namespace, **rules.engine_options()) as memory:
        tools = MemoryTools(memory)
        for number, (user, assistant) in enumerate(turns, start=1):
            tools.call("memory_append_turn", {"user": user, "assistant": assistant,
                                              "receipt_id": f"agent:{number}", "defer_processing": False})
""")


def run_agent(location: str) -> None:
    import json

    subprocess.run([sys.executable, "-c", AGENT_SCRIPT, location, NAMESPACE, json.dumps(AGENT)], check=True)


def seed(location: str) -> None:
    with stratagate.open(location, NAMESPACE, block_turn_size=2, **rules.engine_options()) as memory:
        for user, assistant in FIRST:
            memory.append_turn(user, assistant)
        memory.append_turn("Filler to seal the next block.", "Ok.")
        memory.append_turn("Another filler.", "Ok.")


def follow_an_agent(window, qtbot, location: str) -> None:
    window.open_location(location, NAMESPACE)
    assert window.wait_idle()
    events, timeline = window.events, window.timeline
    before_events, before_blocks = events.model.total, len(timeline.plot.bars)
    pinned = window.memory.list_events()[0].id
    window.curation.controller.preview = False
    window.curation.controller.request(Action.PIN, [pinned])
    assert window.wait_idle()
    assert window.history.undo_text() == f"Pin {pinned}"
    events.select_event(pinned)
    assert window.wait_idle()
    qtbot.waitUntil(lambda: window.follow.census is not None and window.follow.census.revision
                    == window.memory.revision)

    run_agent(location)  # another process, through the memory tools

    qtbot.waitUntil(lambda: events.model.total > before_events, timeout=10_000)
    qtbot.waitUntil(lambda: len(timeline.plot.bars) == before_blocks + 2, timeout=10_000)
    with stratagate.open(location, NAMESPACE, read_only=True) as stored:
        revision, turn = stored.revision, stored.current_turn
    qtbot.waitUntil(lambda: window._revision_label.text() == f"revision {revision}", timeout=10_000)
    assert window._turn_label.text() == f"turn {turn}"
    feed = window.change_feed
    assert feed.tree.topLevelItemCount() == 1 and feed.new_count() == 1
    assert "4 turns, 2 blocks sealed" in feed.tree.topLevelItem(0).text(0)
    # The selection and the undo stack survived the re-read: undoing the earlier pin still works.
    assert events.selected_ids() == [pinned]
    assert window.history.index() == 1 and window.history.undo_text() == f"Pin {pinned}"
    window.history.undo()
    assert window.wait_idle()
    memory = window.memory
    assert not window.worker.call(lambda: memory.get_event(pinned).weight.pinned)
    assert window.history.index() == 0


def test_the_window_follows_an_agent_writing_a_sqlite_file(make_window, qtbot, tmp_path: Path) -> None:
    location = str(tmp_path / "agent.sqlite")
    seed(location)
    follow_an_agent(make_window(), qtbot, location)


@pytest.mark.postgres
def test_the_window_follows_an_agent_writing_postgresql(make_window, qtbot, postgres_server) -> None:
    location = fresh_database(postgres_server, "follow")
    seed(location)
    follow_an_agent(make_window(), qtbot, location)


def test_a_read_only_open_follows_through_a_fresh_open(make_window, qtbot, tmp_path: Path) -> None:
    location = str(tmp_path / "agent.sqlite")
    seed(location)
    window = make_window()
    window.open_location(location, NAMESPACE, read_only=True)
    assert window.wait_idle()
    assert window.memory.read_only
    before_events, revision = window.events.model.total, window.memory.revision
    qtbot.waitUntil(lambda: window.follow.census is not None)

    run_agent(location)

    qtbot.waitUntil(lambda: window.memory is not None and window.memory.revision > revision, timeout=10_000)
    assert window.memory.read_only
    qtbot.waitUntil(lambda: window.events.model.total > before_events, timeout=10_000)
    qtbot.waitUntil(lambda: window.change_feed.tree.topLevelItemCount() == 1, timeout=10_000)
    assert f"since revision {revision}: 4 turns, 2 blocks sealed" in window.change_feed.tree.topLevelItem(0).text(0)
