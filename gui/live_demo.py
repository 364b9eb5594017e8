"""`stratagate-inspector --demo --live` and File ▸ Watch a live agent (demo): a scripted agent writes into a
fresh copy of the demo memory while the window follows it.

The agent (`stratagate.live_demo.ScriptedAgent`) runs in a thread of its own with its own connection, so to
the window it is another writer like an agent process: what it writes arrives through live follow and the
change feed, not through this module. The copy keeps the cached demo untouched.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from stratagate import __version__
from stratagate.demo import load_conversation
from stratagate_gui.application import demo_database_path, ensure_demo_database

if TYPE_CHECKING:
    from stratagate.memory import StrataGate
    from stratagate_gui.inspector import InspectorWindow

DEFAULT_PACE = 1.5
"""Seconds between the agent's steps: slow enough to watch each one arrive."""


def live_database_path() -> Path:
    return demo_database_path().with_name(f"demo-live-{__version__}.sqlite")


def prepare_live_copy() -> Path:
    """A fresh copy of the demo memory for the agent to write into (the previous session's is replaced)."""
    source = ensure_demo_database()
    target = live_database_path()
    for leftover in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        leftover.unlink(missing_ok=True)
    shutil.copyfile(source, target)
    return target


def start_live_demo(window: InspectorWindow, pace: float | None = None) -> None:
    """Open a fresh copy of the demo, then start the scripted agent on it once the window shows it."""
    try:
        from stratagate.live_demo import ScriptedAgent
    except ImportError as error:  # the agent talks through the model adapters: the `adapters` extra
        window.writes.show_error("Cannot start the live demo",
                                 f"The live demo needs the model adapters: pip install 'stratagate[adapters]'\n\n{error}")
        return
    pace = DEFAULT_PACE if pace is None else pace
    namespace = load_conversation()["namespace"]

    def opened(memory: StrataGate | None) -> None:
        if memory is None or window.opened is None or window.opened.location != str(live_database_path()):
            return
        window.memory_changed.disconnect(opened)
        stop_live_demo(window)
        window.live_agent = ScriptedAgent(str(live_database_path()), namespace, pace=pace).start()
        window.statusBar().showMessage("A scripted agent is writing into this memory: watch Live changes", 10_000)
        window.change_feed.show()

    def copied(path: Path) -> None:
        window.memory_changed.connect(opened)
        window.open_location(str(path), namespace)

    stop_live_demo(window)
    window.worker.run(prepare_live_copy, on_done=copied, description="copy the demo memory for the live demo")


def stop_live_demo(window: InspectorWindow) -> None:
    """Stop the scripted agent, if one runs (it finishes its current step and closes its memory)."""
    if window.live_agent is not None:
        window.live_agent.finish()
        window.live_agent = None
