"""The model adapters against a real HTTP server on 127.0.0.1 speaking both wire formats, through the official
clients: target-first payloads, evidence narrowed to the target block, bounded retries, clear errors, usage."""

from __future__ import annotations

from pathlib import Path

import pytest

import stratagate
from stratagate.adapters import ModelAnswerError, ModelCallError, anthropic_adapters, openai_adapters
from stratagate.adapters.scripted_server import ModelRequest, Scripted, ScriptedModelServer
from stratagate.errors import StrataGateError

SUMMARY = {"l0Title": "Deploy plan", "l0Tags": ["deploy"], "l1Summary": "They planned the deploy.",
           "l2Keypoints": ["deploy on friday"], "shouldExtract": True}


def neighbour_citing_answer(request: ModelRequest) -> Scripted:
    """Well-formed answers; the extractor's first event also cites a message of the previous block, and its
    second cites only that neighbour's message."""
    if request.tool == "stratagate_summarize_block":
        return Scripted(arguments=SUMMARY)
    if request.tool == "stratagate_extract_event_cards":
        target_ids = request.payload["allowedSourceMessageIds"]
        previous = request.payload["neighbors"]["previous"]
        neighbour_id = f"msg_from_{previous['blockId']}" if previous else "msg_unknown"
        return Scripted(arguments={"shouldExtract": True, "reason": "a decision", "events": [
            {"title": "Deploy moved to Friday", "summary": "The deploy moves to Friday.",
             "sourceMessageIds": [target_ids[0], neighbour_id], "criticality": "preference"},
            {"title": "Only in a neighbour", "summary": "Never in the target.", "sourceMessageIds": [neighbour_id]},
        ]})
    events = request.payload["events"]
    return Scripted(arguments={"reason": "the deploy", "changes": [
        {"name": "Atlas", "type": "project", "key": "deploy day", "mode": "state", "operation": "set_state",
         "value": "Friday", "sourceEventIds": [events[0]["id"], "evt_not_in_job"]},
    ]})


def fill(memory, turns: int, first: int = 1) -> None:
    for number in range(first, first + turns):
        memory.append_turn(f"user says {number} about the deploy", f"assistant answers {number}",
                           receipt_id=f"turn:{number}")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_session_through_each_client_derives_blocks_events_and_elements(wire: str, tmp_path: Path) -> None:
    with ScriptedModelServer(neighbour_citing_answer) as server:
        adapters = (openai_adapters("scripted-gpt", base_url=server.openai_base_url, api_key="unused")
                    if wire == "openai" else
                    anthropic_adapters("scripted-claude", base_url=server.anthropic_base_url, api_key="unused"))
        memory = stratagate.open(tmp_path / "m.sqlite", "agent", block_turn_size=2, **adapters.engine_options())
        fill(memory, 6)  # three blocks: the middle one is extracted with both neighbours
        adapters.record_into(memory)
        memory.close()

    assert {request.wire for request in server.requests} == {wire}
    middle = [r for r in server.requests if r.tool == "stratagate_extract_event_cards"]
    payload = middle[-1].payload
    # Target-first: the target's raw messages and their ids; the neighbours' L2 key points only.
    assert [m["id"] for m in payload["target"]["l5Raw"]] == payload["allowedSourceMessageIds"]
    assert set(payload["neighbors"]["previous"]) == {"blockId", "startTurn", "endTurn", "l2Keypoints"}
    assert payload["neighbors"]["previous"]["l2Keypoints"] == ["deploy on friday"]

    memory = stratagate.open(tmp_path / "m.sqlite", "agent", read_only=True)
    blocks = sorted(memory.list_blocks(), key=lambda block: block.sequence)
    events = memory.list_events()
    # The event citing only a neighbour's message was dropped; the other kept only the target's message.
    assert [event.title for event in events] == ["Deploy moved to Friday"] * 2
    for event in events:
        target = memory.get_block(event.source_block_id)
        assert event.source_message_ids == [target.l5_raw[0].id]
    assert blocks[0].l0_title == "Deploy plan"
    (element,) = memory.list_elements()
    assert element.name == "Atlas"
    assert element.facts[0].source_event_ids[0] in {event.id for event in events}
    # Every successful call is in the history with the model, its token counts and its latency.
    responses = memory.list_successful_model_responses()
    assert responses
    for response in responses:
        usage = response.usage
        assert usage is not None and usage.model == adapters.transport.model
        assert usage.input_tokens > 0 and usage.output_tokens > 0 and usage.latency_ms >= 0
    memory.close()


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_malformed_answer_is_asked_again_then_fails_the_job_naming_model_and_block(wire: str) -> None:
    bad = "{not json" if wire == "openai" else {"shouldExtract": "yes"}

    def answer(request: ModelRequest) -> Scripted:
        if request.tool == "stratagate_extract_event_cards":
            return Scripted(arguments=bad)
        return neighbour_citing_answer(request)

    with ScriptedModelServer(answer) as server:
        adapters = (openai_adapters("scripted-gpt", base_url=server.openai_base_url, api_key="unused")
                    if wire == "openai" else
                    anthropic_adapters("scripted-claude", base_url=server.anthropic_base_url, api_key="unused"))
        memory = stratagate.in_memory(block_turn_size=2, **adapters.engine_options())
        fill(memory, 2)
        with pytest.raises(ModelAnswerError) as caught:
            fill(memory, 2, first=3)
    first = min(memory.list_blocks(), key=lambda block: block.sequence)
    message = str(caught.value)
    assert adapters.transport.model in message and first.id in message and "extractor" in message
    (job,) = memory.list_extraction_jobs()
    assert job.status == "failed" and first.id in job.last_error and "Answer:" in job.last_error
    # The raw turns are kept: both blocks are sealed and hold their messages.
    assert len(memory.list_blocks()) == 2 and all(len(block.l5_raw) == 4 for block in memory.list_blocks())
    # Asked twice, the second time with the firmer instruction.
    asks = [r for r in server.requests if r.tool == "stratagate_extract_event_cards"]
    assert len(asks) == 2 and "Call that tool exactly once now" in asks[1].system


def test_a_malformed_answer_then_a_valid_one_succeeds() -> None:
    script = [Scripted(arguments="{\"l0Title\": "), Scripted(arguments=SUMMARY)]
    with ScriptedModelServer(script) as server:
        adapters = openai_adapters("scripted-gpt", base_url=server.openai_base_url, api_key="unused")
        memory = stratagate.in_memory(block_turn_size=1, summarizer=adapters.summarizer)
        result = memory.append_turn("hello", "hi")
    assert result.sealed_block is not None and result.sealed_block.l0_title == "Deploy plan"
    assert server.remaining() == 0


def test_a_429_is_retried_with_backoff_then_succeeds() -> None:
    script = [Scripted(status=429), Scripted(arguments=SUMMARY)]
    with ScriptedModelServer(script) as server:
        adapters = anthropic_adapters("scripted-claude", base_url=server.anthropic_base_url, api_key="unused",
                                      max_retries=2)
        memory = stratagate.in_memory(block_turn_size=1, summarizer=adapters.summarizer)
        result = memory.append_turn("hello", "hi")
    assert result.sealed_block is not None
    assert len(server.requests) == 2
    (response,) = adapters.take_responses()
    assert response.usage is not None and response.usage.model == "scripted-claude"


def test_a_timeout_without_retries_left_names_the_model_and_keeps_the_turn() -> None:
    script = [Scripted(arguments=SUMMARY, delay=2.0)]
    with ScriptedModelServer(script) as server:
        adapters = openai_adapters("slow-model", base_url=server.openai_base_url, api_key="unused",
                                   timeout=0.2, max_retries=0)
        memory = stratagate.in_memory(block_turn_size=1, summarizer=adapters.summarizer)
        with pytest.raises(ModelCallError) as caught:
            memory.append_turn("hello", "hi")
    tail = memory.list_open_tail()
    assert "slow-model" in str(caught.value) and tail[0].id in str(caught.value)
    assert [message.content for message in tail] == ["hello", "hi"] and memory.list_blocks() == []


def test_a_timeout_is_retried_by_the_client() -> None:
    script = [Scripted(arguments=SUMMARY, delay=2.0), Scripted(arguments=SUMMARY)]
    with ScriptedModelServer(script) as server:
        adapters = openai_adapters("slow-model", base_url=server.openai_base_url, api_key="unused",
                                   timeout=0.2, max_retries=1)
        memory = stratagate.in_memory(block_turn_size=1, summarizer=adapters.summarizer)
        assert memory.append_turn("hello", "hi").sealed_block is not None


def test_a_prompt_file_overrides_the_packaged_one(tmp_path: Path) -> None:
    (tmp_path / "summarizer.md").write_text("Summarize like a pirate.\n")
    with ScriptedModelServer([Scripted(arguments=SUMMARY)]) as server:
        adapters = openai_adapters("scripted-gpt", base_url=server.openai_base_url, api_key="unused",
                                   prompt_dir=str(tmp_path))
        stratagate.in_memory(block_turn_size=1, summarizer=adapters.summarizer).append_turn("hello", "hi")
    assert server.requests[0].system == "Summarize like a pirate."
    assert "stratagate_extract_event_cards" in adapters._prompts["extractor"]


def test_a_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(StrataGateError, match="OPENAI_API_KEY"):
        openai_adapters("any", base_url="http://127.0.0.1:9/v1")


def test_a_response_without_a_usage_header_has_no_usage() -> None:
    from stratagate.model import ModelResponse

    assert ModelResponse("r1", "summarizer", "plain text from the reference", "2026-01-01T08:00:00+08:00").usage is None
    assert ModelResponse("r2", "summarizer", "#usage {broken\n{}", "2026-01-01T08:00:00+08:00").usage is None
