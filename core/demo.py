"""The demo memory: replay `resources/demo/conversation.json` into a SQLite file, deterministically.

A fixed clock (each turn at its scripted time) and counting id factories make every build byte-for-byte the
same memory. The rule-based summarizer, extractor and projector (`stratagate.rules`) derive blocks, events and
elements; then a few curation steps give the app something to show: one pinned event, one forgotten, one
block lifted by the user, one usage receipt.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from stratagate import rules
from stratagate.errors import InvalidInputError, StrataGateError
from stratagate.memory import StrataGate
from stratagate.memory import open as open_memory
from stratagate.timeutil import epoch_ms


def load_conversation() -> dict[str, Any]:
    source = resources.files("stratagate_resources") / "demo" / "conversation.json"
    return json.loads(source.read_text(encoding="utf-8"))


class _ScriptClock:
    """Reads the scripted time; the replay moves it to each turn, plus a minute per reading."""

    def __init__(self, start: str):
        self.moment = datetime.fromtimestamp(epoch_ms(start) / 1000, UTC)

    def set(self, when: str) -> None:
        self.moment = datetime.fromtimestamp(epoch_ms(when) / 1000, UTC)

    def __call__(self) -> datetime:
        self.moment += timedelta(seconds=1)
        return self.moment


def counter_ids() -> Callable[[str], str]:
    """`prefix_N` with one counter shared by all prefixes (as the reference fixture's generator did)."""
    count = 0

    def new_id(prefix: str) -> str:
        nonlocal count
        count += 1
        return f"{prefix}_{count}"
    return new_id


def _event_titled(memory: StrataGate, words: str) -> str:
    for event in memory.list_events():
        if words.lower() in event.title.lower():
            return event.id
    raise StrataGateError(f"demo conversation: no event title contains {words!r}")


def _remove(path: Path) -> None:
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        if candidate.exists():
            candidate.unlink()


def build_demo_database(path: str | os.PathLike[str], overwrite: bool = False) -> Path:
    """Write the demo memory to `path` (a new SQLite file); `overwrite` replaces an existing one."""
    target = Path(path)
    if target.exists():
        if not overwrite:
            raise InvalidInputError(f"{target}: file exists (pass overwrite=True to replace it)")
        _remove(target)
    script = load_conversation()
    clock = _ScriptClock(script["clockStart"])
    memory = open_memory(target, script["namespace"], block_turn_size=script["blockTurnSize"], now=clock,
                         id_factory=counter_ids(), element_id_factory=counter_ids(),
                         **rules.engine_options())
    try:
        for number, turn in enumerate(script["turns"], start=1):
            clock.set(turn["at"])
            memory.append_turn(turn["user"], turn["assistant"], created_at=turn["at"], thread_id=turn["thread"],
                               user_tool_calls=turn.get("userToolCalls"),
                               assistant_tool_calls=turn.get("assistantToolCalls"), receipt_id=f"demo:turn:{number}")
        memory.resume_pending_work()
        curation = script["curation"]
        memory.pin_event(_event_titled(memory, curation["pin"]))
        memory.forget_event(_event_titled(memory, curation["forget"]))
        lift = curation["lift"]
        block = memory.list_blocks(lift["thread"])[lift["block"] - 1]
        memory.expand_block(block.id, lift["level"], source=lift["source"])
        use = curation["use"]
        memory.record_memory_use([_event_titled(memory, words) for words in use["events"]], receipt_id=use["receipt"],
                                 audit=use["audit"])
    except BaseException:
        memory.close()
        _remove(target)
        raise
    memory.close()
    return target
