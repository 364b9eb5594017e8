"""`stratagate mcp` driven by the official SDK's client, over stdio and streamable HTTP: a session ingests turns,
searches, assesses and records use; then the rows, the receipt and its audit, and the journal are checked."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

import stratagate
from stratagate.journal import backend_entries

STRATAGATE = str(Path(sys.executable).with_name("stratagate"))
TURNS = [("We decided to deploy Atlas on Friday.", "Noted: Atlas deploys Friday."),
         ("I prefer tea over coffee in the mornings.", "Tea it is."),
         ("Maria Lopez leads the Atlas project now.", "Got it, Maria leads Atlas."),
         ("The database migration is planned for March 3.", "Migration on March 3."),
         ("Remind me what we decided about the deploy?", "Let me check."),
         ("Thanks.", "Welcome.")]
READ_TOOLS = {"memory_search_events", "memory_search_elements", "memory_search_raw", "memory_get_blocks",
              "memory_expand_event", "memory_expand_element", "memory_assess"}
WRITE_TOOLS = {"memory_expand_block", "memory_record_use", "memory_append_turn", "memory_resume_pending_work"}


def server_arguments(database: Path, *extra: str) -> list[str]:
    return ["mcp", str(database), "--namespace", "agent", "--adapter", "rules", "--block-turn-size", "2", *extra]


async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def agent_session(client: Client) -> dict[str, Any]:
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert names == READ_TOOLS | WRITE_TOOLS
    for number, (user, assistant) in enumerate(TURNS, start=1):
        stored = await call(client, "memory_append_turn",
                            {"user": user, "assistant": assistant, "receipt_id": f"host:turn:{number}"})
        assert stored["turn"] == number and stored["sealedBlockId"] is None  # deferred
    repeat = await call(client, "memory_append_turn",
                        {"user": "x", "assistant": "y", "receipt_id": "host:turn:1"})
    assert repeat["duplicate"] is True
    work = await call(client, "memory_resume_pending_work", {})
    assert len(work["sealedBlockIds"]) == 3 and work["eventIds"]
    found = await call(client, "memory_search_events", {"query": "deploy Atlas", "limit": 3})
    refused = await client.call_tool("memory_record_use", {"evidence_refs": found["evidenceRefs"][:1]})
    assert refused.is_error and "sufficient assessment" in refused.content[0].text
    verdict = await call(client, "memory_assess", {
        "verdict": "sufficient", "evidence_refs": [found["evidenceRefs"][0], "event:invented"],
        "fit": "the deploy day", "missing": "", "next_strategy": "answer"})
    assert verdict["verdict"] == "sufficient" and verdict["evidenceRefs"] == found["evidenceRefs"][:1]
    used = await call(client, "memory_record_use", {"evidence_refs": found["evidenceRefs"][:1]})
    again = await call(client, "memory_record_use", {"evidence_refs": found["evidenceRefs"][:1]})
    assert again == used  # idempotent: the same receipt, counted once
    return {"found": found, "used": used}


def check_memory(database: Path, session: dict[str, Any]) -> None:
    found, used = session["found"], session["used"]
    with stratagate.open(database, "agent", read_only=True) as memory:
        assert memory.current_turn == len(TURNS) and len(memory.list_blocks()) == 3
        adopted = found["results"][0]["id"]
        assert used["eventIds"] == [adopted]
        # Counted once though recorded twice (cards start at 1, like the one ranked second and not adopted).
        second = found["results"][1]["id"]
        assert memory.get_event(adopted).weight.mention_count == memory.get_event(second).weight.mention_count + 1
        (receipt,) = memory.list_usage_receipts()
        assert receipt.id == used["receiptId"] and receipt.event_ids == [adopted]
        (query,) = receipt.audit["retrieval"]["queries"]
        assert query["kind"] == "events" and query["query"] == "deploy Atlas" and query["options"] == {"limit": 3}
        assert [hit["eventId"] for hit in query["hits"]] == [hit["id"] for hit in found["results"]]
        assert [hit["rank"] for hit in query["hits"]] == list(range(1, len(found["results"]) + 1))
        assert isinstance(query["revision"], int)
        assert receipt.audit["verdict"] == "sufficient" and receipt.audit["evidenceRefs"] == [f"event:{adopted}"]
        (entry,) = [entry for entry in backend_entries(memory.backend, "agent") if entry.action == "record use"]
        assert entry.actor.startswith("agent:") and entry.ids == [adopted]
        assert entry.after["receiptId"] == receipt.id


def test_an_agent_session_over_stdio(tmp_path: Path) -> None:
    database = tmp_path / "agent.sqlite"

    async def run() -> dict[str, Any]:
        async with Client(StdioServerParameters(command=STRATAGATE, args=server_arguments(database))) as client:
            return await agent_session(client)

    check_memory(database, anyio.run(run))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read().decode()
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"the MCP server never listened on {port}")


def test_an_agent_session_over_streamable_http(tmp_path: Path) -> None:
    database = tmp_path / "agent.sqlite"
    port = free_port()
    process = subprocess.Popen([STRATAGATE, *server_arguments(database, "--http", str(port))],
                               stderr=subprocess.PIPE)
    try:
        wait_for_port(port, process)

        async def run() -> dict[str, Any]:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                return await agent_session(client)

        session = anyio.run(run)
    finally:
        process.terminate()
        process.wait(timeout=30)
    check_memory(database, session)


def test_a_read_only_memory_serves_only_the_read_tools(tmp_path: Path) -> None:
    database = tmp_path / "agent.sqlite"
    with stratagate.open(database, "agent", block_turn_size=1) as memory:
        memory.append_turn("We decided to deploy Atlas on Friday.", "Noted.")
    before = database.read_bytes()

    async def run() -> None:
        parameters = StdioServerParameters(command=STRATAGATE, args=["mcp", str(database), "--namespace", "agent",
                                                                     "--read-only"])
        async with Client(parameters) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == READ_TOOLS
            refused = await client.call_tool("memory_append_turn",
                                             {"user": "a", "assistant": "b", "receipt_id": "r"})
            assert refused.is_error and "unknown tool" in refused.content[0].text
            found = await call(client, "memory_search_raw", {"query": "deploy"})
            assert found["results"][0]["message"]["content"] == "We decided to deploy Atlas on Friday."

    anyio.run(run)
    assert database.read_bytes() == before


def test_bad_arguments_name_the_field() -> None:
    from stratagate.tools import MemoryTools, ToolError

    tools = MemoryTools(stratagate.in_memory())
    with pytest.raises(ToolError, match="limit"):
        tools.call("memory_search_events", {"query": "x", "limit": "many"})
    with pytest.raises(ToolError, match="no retrieval batch"):
        tools.call("memory_assess", {"verdict": "partial", "evidence_refs": [], "fit": "", "missing": "",
                                     "next_strategy": "search_events"})


def test_the_cli_refuses_a_model_adapter_without_a_model_or_key(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from stratagate.cli.main import cli

    database = str(tmp_path / "agent.sqlite")
    refused = CliRunner().invoke(cli, ["mcp", database, "--namespace", "agent", "--adapter", "openai"])
    assert refused.exit_code == 2 and "--adapter openai needs --model" in refused.output
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    refused = CliRunner().invoke(cli, ["mcp", database, "--namespace", "agent", "--adapter", "anthropic",
                                       "--model", "claude"])
    assert refused.exit_code == 2 and "ANTHROPIC_API_KEY" in refused.output
    assert not Path(database).exists()  # nothing was created
