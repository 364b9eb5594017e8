"""A receipt written by the memory tools keeps the agent's query: the Receipts browser replays exactly it."""

from __future__ import annotations

from pathlib import Path

import stratagate
from stratagate import rules
from stratagate.tools import MemoryTools
from stratagate_gui.forensics.receipts import ReceiptsBrowser
from stratagate_gui.shortcuts import select_row
from stratagate_gui.workers import DatabaseWorker

TURNS = [("We decided to deploy Atlas on Friday.", "Noted."), ("I prefer tea in the mornings.", "Tea."),
         ("Maria Lopez leads the Atlas project.", "Got it."), ("The Atlas deploy moved to Monday.", "Monday.")]


def test_the_receipts_browser_replays_the_query_the_agent_ran(qtbot, tmp_path: Path) -> None:
    database = tmp_path / "agent.sqlite"
    memory = stratagate.open(database, "agent", block_turn_size=1, **rules.engine_options())
    tools = MemoryTools(memory)
    for number, (user, assistant) in enumerate(TURNS, start=1):
        tools.call("memory_append_turn", {"user": user, "assistant": assistant, "receipt_id": f"t{number}",
                                          "defer_processing": False})
    tools.call("memory_resume_pending_work", {})
    found = tools.call("memory_search_events", {"query": "Atlas deploy", "limit": 2})
    tools.call("memory_assess", {"verdict": "sufficient", "evidence_refs": found["evidenceRefs"][:1], "fit": "",
                                 "missing": "", "next_strategy": "answer"})
    tools.call("memory_record_use", {"evidence_refs": found["evidenceRefs"][:1]})

    worker = DatabaseWorker()
    browser = ReceiptsBrowser(worker)
    qtbot.addWidget(browser)
    try:
        browser.set_memory(memory)
        qtbot.waitUntil(lambda: browser.table.rowCount() == 1)
        select_row(browser.table, 0)
        assert browser.query.text() == "Atlas deploy"
        with qtbot.waitSignal(browser.replayed) as signal:
            browser.replay_button.click()
        result = signal.args[0]
        assert result.spec.options == {"limit": 2}
        ranked_then = sorted((row for row in result.rows if row.rank_then), key=lambda row: row.rank_then)
        assert [row.id for row in ranked_then] == [hit["id"] for hit in found["results"]]
    finally:
        worker.call(memory.close)
        worker.shutdown()
