"""LiveFollow notices another writer through the stored revision, describes it, and hands it to the window's
write path; the window's own writes are not reported; pausing is one click. ChangeFeed lists and links."""

from __future__ import annotations

from pathlib import Path

import pytest

import stratagate
from stratagate import rules
from stratagate_gui.follow import ChangeFeed, LiveFollow
from stratagate_gui.workers import DatabaseWorker


@pytest.fixture
def worker():
    worker = DatabaseWorker()
    yield worker
    worker.shutdown()


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "live.sqlite"
    with stratagate.open(path, "agent", block_turn_size=2, **rules.engine_options()) as memory:
        memory.append_turn("We decided to deploy Atlas on Friday.", "Noted.")
    return path


def agent_writes(database: Path, *users: str) -> None:
    with stratagate.open(database, "agent", **rules.engine_options()) as agent:
        for user in users:
            agent.append_turn(user, "Noted.")


def test_another_writer_is_reported_once_and_the_own_writes_never(qtbot, worker, database: Path) -> None:
    viewer = stratagate.open(database, "agent", **rules.engine_options())
    announced: list[str] = []
    follow = LiveFollow(worker, lambda label: worker.run(viewer.refresh, on_done=lambda _: announced.append(label)))
    feed = ChangeFeed(follow, lambda kind, identifier: jumps.append((kind, identifier)))
    qtbot.addWidget(feed)
    jumps: list[tuple[str, str]] = []
    follow.set_memory(viewer)
    qtbot.waitUntil(lambda: follow.census is not None)

    worker.call(lambda: viewer.append_turn("I prefer tea in the mornings.", "Tea."))  # the window's own write
    qtbot.waitUntil(lambda: follow.census.revision == viewer.revision)  # taken in silently
    assert announced == []
    agent_writes(database, "Maria Lopez leads the Atlas project.", "The Atlas deploy moved to Monday.")
    qtbot.waitUntil(lambda: bool(announced), timeout=5000)
    assert announced[0].startswith("since revision")
    assert "2 turns" in announced[0] and "1 block sealed" in announced[0]
    assert feed.tree.topLevelItemCount() == 1 and feed.new_count() == 1
    assert feed.windowTitle() == "Live changes (1 new)"
    qtbot.wait(800)
    assert len(announced) == 1  # nothing new: not reported again

    entry = feed.tree.topLevelItem(0)
    blocks = next(entry.child(i) for i in range(entry.childCount()) if "sealed" in entry.child(i).text(0))
    feed._open(blocks)
    assert jumps and jumps[0][0] == "block" and feed.new_count() == 0
    worker.call(viewer.close)


def test_pause_holds_reports_until_resumed(qtbot, worker, database: Path) -> None:
    viewer = stratagate.open(database, "agent")
    announced: list[str] = []
    follow = LiveFollow(worker, lambda label: worker.run(viewer.refresh, on_done=lambda _: announced.append(label)))
    feed = ChangeFeed(follow, lambda *_: None)
    qtbot.addWidget(feed)
    follow.set_memory(viewer)
    qtbot.waitUntil(lambda: follow.census is not None)
    feed.follow_button.click()  # pause: one click
    assert not follow.following and feed.follow_button.text() == "Paused"
    agent_writes(database, "Maria Lopez leads the Atlas project.")
    qtbot.wait(800)
    assert announced == []
    feed.follow_button.click()
    qtbot.waitUntil(lambda: bool(announced), timeout=5000)
    assert "1 turn" in announced[0]
    worker.call(viewer.close)
