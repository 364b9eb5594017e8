"""`stratagate strata mcp` through the official MCP SDK's own client: the reference's server name, six tools,
their arguments and result texts; errors are tool results, and paths cannot leave the store (B-9, B-15)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from stratagate.strata import StrataStore

TOOLS = {
    "strata_read_active",
    "strata_write_active",
    "strata_list_active",
    "strata_query",
    "strata_forget",
    "strata_rehydrate",
}


def run_session(base: Path, work) -> dict:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "stratagate.cli.main", "strata", "--data-dir", str(base), "mcp"],
    )

    async def main() -> dict:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            initialized = await session.initialize()
            return await work(session, initialized)

    return anyio.run(main)


async def call(session: ClientSession, name: str, **arguments) -> tuple[bool, str]:
    result = await session.call_tool(name, arguments)
    return bool(result.is_error), result.content[0].text


def test_the_six_tools_answer_as_the_reference_over_the_sdk_client(tmp_path: Path):
    base = tmp_path / "strata_data"
    outside = tmp_path / "outside.md"
    outside.write_text("not Strata's")

    async def work(session: ClientSession, initialized) -> dict:
        answers: dict = {"server": initialized.server_info.name}
        await session.send_ping()
        listed = (await session.list_tools()).tools
        answers["tools"] = {tool.name: tool.input_schema for tool in listed}
        answers["write"] = await call(
            session, "strata_write_active", path="projects/k.md", content="# Kynd\nstripe"
        )
        answers["read"] = await call(session, "strata_read_active", path="projects/k.md")
        answers["list"] = await call(session, "strata_list_active", path="projects")
        answers["query"] = await call(session, "strata_query", query="stripe", top_k=3)
        (base / "cooled/old").mkdir(parents=True)
        (base / "cooled/old/n.md").write_text("# Old\nquokka")
        answers["forget"] = await call(session, "strata_forget", path="old/n.md")
        answers["rehydrate"] = await call(
            session, "strata_rehydrate", shadow_id="old/n.md", target_tier="cooled"
        )
        answers["missing"] = await call(session, "strata_read_active", path="nope.md")
        answers["unknown"] = await call(session, "no_such_tool")
        answers["no_argument"] = await call(session, "strata_write_active", path="x.md")
        answers["escape"] = await call(session, "strata_forget", path="../outside.md")
        return answers

    answers = run_session(base, work)

    assert answers["server"] == "strata-memory"
    assert set(answers["tools"]) == TOOLS
    assert answers["tools"]["strata_query"]["required"] == ["query"]
    assert set(answers["tools"]["strata_query"]["properties"]) == {"query", "tags", "top_k"}
    assert answers["tools"]["strata_rehydrate"]["properties"]["target_tier"]["enum"] == ["active", "cooled"]

    error, text = answers["write"]
    assert not error and json.loads(text) == {"path": str(base / "active/projects/k.md"), "status": "written"}
    assert json.loads(answers["read"][1]) == {"content": "# Kynd\nstripe"}
    [entry] = json.loads(answers["list"][1])["entries"]
    assert (entry["name"], entry["path"], entry["type"]) == ("k.md", "projects/k.md", "file")
    [hit] = json.loads(answers["query"][1])["results"]
    assert (hit["tier"], hit["source"]) == ("stratum_1", "projects/k.md")
    forgotten = json.loads(answers["forget"][1])
    assert (forgotten["path"], forgotten["status"]) == ("old/n.md", "archived")
    assert json.loads(answers["rehydrate"][1]) == {
        "original_path": "old/n.md",
        "target_tier": "cooled",
        "status": "rehydrated",
    }
    assert (base / "cooled/old/n.md").read_text() == "# Old\nquokka"

    for name in ("missing", "unknown", "no_argument", "escape"):
        error, text = answers[name]
        assert error and text.startswith("Error: "), (name, text)
    assert "Unknown tool: no_such_tool" in answers["unknown"][1]
    assert "'content'" in answers["no_argument"][1]
    assert outside.read_text() == "not Strata's"
    assert StrataStore(base).counts()["archived"] == 0
