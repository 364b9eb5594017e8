"""`--demo --live`: a scripted agent writes into a fresh copy of the demo while the window follows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagate.live_demo import load_live_script
from stratagate_gui.app import parse_arguments
from stratagate_gui.application import demo_database_path, open_from_arguments
from stratagate_gui.live_demo import live_database_path, stop_live_demo


def test_demo_live_opens_a_copy_and_shows_the_agent_writing(make_window, qtbot, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("stratagate_gui.live_demo.DEFAULT_PACE", 0.1)
    window = make_window()
    try:
        open_from_arguments(window, parse_arguments(["--demo", "--live"]))
        qtbot.waitUntil(lambda: window.live_agent is not None, timeout=60_000)
        assert window.opened.location == str(live_database_path())
        agent = window.live_agent
        demo_bytes = demo_database_path().read_bytes()
        qtbot.waitUntil(lambda: not agent.running, timeout=60_000)
        assert agent.error is None and agent.steps_done == len(load_live_script()["turns"])
        qtbot.waitUntil(lambda: window._revision_label.text() == f"revision {window.follow.census.revision}"
                        and window.memory.revision == window.follow.census.revision, timeout=10_000)
        assert window.change_feed.tree.topLevelItemCount() >= 1 and window.change_feed.new_count() >= 1
        qtbot.waitUntil(lambda: window.model_calls.table.rowCount() > 0, timeout=10_000)
        assert demo_database_path().read_bytes() == demo_bytes  # the cached demo is never written
    finally:
        stop_live_demo(window)
