"""L3/L4 renderings and tool summaries (spec §2.4, §2.6), including the reference's quirks."""

from __future__ import annotations

import json

from stratagate.blocks import default_summary, render_block
from stratagate.condense import (
    condense_transcript,
    format_readable_transcript,
    js_number_string,
    result_summary,
    tool_json_summary,
)
from stratagate.model import Block, Message, ToolTrace


def msg(role: str, content: str, calls: list[ToolTrace] | None = None) -> Message:
    return Message(f"m{abs(hash(content)) % 1000}", role, content, "t", tool_calls=calls)


def test_fillers_go_greetings_stay_and_sentence_splits_become_lines():
    l3 = condense_transcript([msg("user", "Hello! How are you? Thanks."), msg("system", "secret prompt")])
    assert l3 == "User: Hello!\nHow are you?"


def test_tool_json_messages_become_one_line():
    payload = json.dumps({"tool_calls": [{"function": {"name": "search", "arguments": "{}"}}], "result": {"hits": [1, 2]}})
    assert tool_json_summary(f"```json\n{payload}\n```") == "Tool call: search (hits: 2)"
    assert tool_json_summary('{"tool_call": broken') == "Tool call (raw arguments omitted)"
    # A plain sentence mentioning tool_call is replaced whole (kept quirk).
    assert condense_transcript([msg("user", "why did tool_call fail")]) == "User: Tool call (raw arguments omitted)"


def test_result_summaries():
    assert result_summary({"error": "no  such table"}) == "failed: no such table"
    assert result_summary({"summary": "Read 120 lines"}) == "Read 120 lines"
    assert result_summary({"results": [1, 2, 3], "arguments": [1]}) == "results: 3"
    assert result_summary({"ok": True}) == "completed"
    assert result_summary('{"ok": false}') == "not completed"
    assert result_summary({"x": 1}) == "structured result returned"
    assert result_summary(None) == "" and result_summary(2.0) == "2" and result_summary(True) == "true"
    assert js_number_string(1e21) == "1e+21" and js_number_string(0.1) == "0.1"


def test_code_pastes_are_deduplicated_across_messages():
    code = "```\nconst a = 1;\n```"
    l3 = condense_transcript([msg("user", code), msg("assistant", code.upper())])
    assert l3.count("const a = 1;") == 1 and "[repeated paste omitted; original remains in L5]" in l3


def test_l4_keeps_text_and_tool_lines_without_arguments():
    messages = [msg("user", "Run it"), msg("assistant", "Done.", [ToolTrace("run_sql", {"sql": "select"}, {"ok": True})]),
                msg("tool", '{"tool": "run_sql", "result": {"rows": [1]}}')]
    assert format_readable_transcript(messages) == (
        "User: Run it\n\nAssistant: Done.\n\nTool call: run_sql (completed)\n\nTool: Tool call: run_sql (rows: 1)")


def test_levels_render_like_the_reference():
    raw = [Message("m1", "user", "We chose SQLite.", "t"), Message("m2", "assistant", "Noted.", "t")]
    summary = default_summary(raw)
    assert (summary.title, summary.should_extract) == ("We chose SQLite.", False)
    block = Block("b", 1, 1, 1, "t", False, summary.title, [], summary.summary, summary.keypoints, "l3", "l4", raw)
    assert render_block(block, 0) == "We chose SQLite.\nTags: none"
    assert render_block(block, 1) == "We chose SQLite. Noted."
    assert render_block(block, 2) == "- We chose SQLite.\n- Noted."
    assert render_block(block, 5) == "user: We chose SQLite.\n\nassistant: Noted."
