"""The live demo's scripted agent: through the memory tools and the model adapters (a scripted server on
127.0.0.1), it writes turns, blocks, events, elements, receipts and model calls into the demo memory."""

from __future__ import annotations

from pathlib import Path

import stratagate
from stratagate.demo import build_demo_database, load_conversation
from stratagate.live_demo import ScriptedAgent, load_live_script


def test_the_scripted_agent_writes_a_session_into_the_demo_memory(tmp_path: Path) -> None:
    database = build_demo_database(tmp_path / "demo.sqlite")
    namespace = load_conversation()["namespace"]
    with stratagate.open(database, namespace, read_only=True) as before:
        turn, blocks, events = before.current_turn, len(before.list_blocks()), len(before.list_events())
        receipts = len(before.list_usage_receipts())
    script = load_live_script()
    agent = ScriptedAgent(str(database), namespace, pace=0).start()
    agent.join(120)
    assert agent.error is None and agent.steps_done == len(script["turns"])
    with stratagate.open(database, namespace, read_only=True) as memory:
        assert memory.current_turn == turn + len(script["turns"])
        assert len(memory.list_blocks()) > blocks and len(memory.list_events()) > events
        recalls = sum(1 for step in script["turns"] if step.get("recall"))
        agent_receipts = [r for r in memory.list_usage_receipts() if r.id.startswith("live-demo:")]
        assert len(memory.list_usage_receipts()) == receipts + recalls == receipts + len(agent_receipts)
        assert all(r.event_ids and r.audit["retrieval"]["queries"][0]["kind"] == "events" for r in agent_receipts)
        kinds = {response.kind for response in memory.list_successful_model_responses()}
        assert kinds == {"summarizer", "extractor", "projector"}
        assert all(response.usage.model == script["model"] for response in memory.list_successful_model_responses())


def test_finish_stops_the_session_between_steps(tmp_path: Path) -> None:
    database = build_demo_database(tmp_path / "demo.sqlite")
    agent = ScriptedAgent(str(database), load_conversation()["namespace"], pace=30).start()
    agent.finish()
    assert not agent.running and agent.error is None and agent.steps_done == 0
