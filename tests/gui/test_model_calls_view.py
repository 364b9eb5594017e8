"""The Model calls tab shows the memory's model-response history with the usage an adapter recorded."""

from __future__ import annotations

from pathlib import Path

import stratagate
from stratagate.adapters import openai_adapters
from stratagate.adapters.scripted_server import Scripted, ScriptedModelServer
from stratagate.model import ModelResponse

SUMMARY = {"l0Title": "Hello", "l0Tags": [], "l1Summary": "A greeting.", "l2Keypoints": [], "shouldExtract": False}


def _memory_with_one_model_call(path: Path) -> ModelResponse:
    """A memory whose one turn was summarized by a scripted model through the openai adapter."""
    with ScriptedModelServer([Scripted(arguments=SUMMARY)]) as server:
        adapters = openai_adapters("scripted-gpt", base_url=server.openai_base_url, api_key="unused")
        with stratagate.open(path, "agent", block_turn_size=1, summarizer=adapters.summarizer) as memory:
            memory.append_turn("hello", "hi")
            adapters.record_into(memory)
            (response,) = memory.list_successful_model_responses()
    return response


def test_the_model_calls_tab_lists_model_tokens_and_latency(make_window, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "agent.sqlite"
    response = _memory_with_one_model_call(path)
    window = make_window()
    window.open_location(str(path), "agent", read_only=True)
    qtbot.waitUntil(lambda: window.model_calls.table.rowCount() == 1, timeout=10_000)
    table = window.model_calls.table
    cells = [table.item(0, column).text() for column in range(table.columnCount())]
    usage = response.usage
    assert cells[1:] == ["summarizer", "scripted-gpt", str(usage.input_tokens), str(usage.output_tokens),
                         str(usage.latency_ms)]
    assert '"l0Title": "Hello"' in window.model_calls.answer.toPlainText()


def test_a_refresh_keeps_the_selected_call_and_its_answer(make_window, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "agent.sqlite"
    _memory_with_one_model_call(path)
    window = make_window()
    window.open_location(str(path), "agent", read_only=True)
    view = window.model_calls
    qtbot.waitUntil(lambda: view.table.rowCount() == 1, timeout=10_000)
    view.table.selectRow(0)
    view._show(list(view.responses))  # what a refresh delivers: the same calls, freshly read
    assert view.table.selectionModel().selectedRows()[0].row() == 0
    assert '"l0Title": "Hello"' in view.answer.toPlainText()
