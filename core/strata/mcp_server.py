"""`stratagate strata mcp`: the reference's Strata MCP server (name `strata-memory`, its six tools, the
same arguments and result texts) on the official MCP SDK, over stdio.

Differences on purpose (B-15): protocol handling is the SDK's, so notifications get no reply and `ping`
works; the store's `strata.json` is honoured (the reference's server ignored it). A tool error is a tool
result with `isError` and the text `Error: <message>`, as the reference answered.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

from stratagate import __version__
from stratagate.strata.agent_tools import SPECS, StrataTools
from stratagate.strata.errors import StrataError

SERVER_NAME = "strata-memory"


def build_server(tools: StrataTools) -> Server[Any]:
    lock = anyio.Lock()

    async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec.name,
                    description=spec.description,
                    input_schema=spec.input_schema,
                    annotations=types.ToolAnnotations(read_only_hint=not spec.writes),
                )
                for spec in SPECS
            ]
        )

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        async with lock:  # one store operation at a time; the store lock serialises other processes
            try:
                result = tools.call(params.name, params.arguments or {})
            except (StrataError, OSError) as error:
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=f"Error: {error}")], is_error=True
                )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result, indent=2, ensure_ascii=False))]
        )

    return Server(SERVER_NAME, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


def serve_stdio(tools: StrataTools) -> None:
    server = build_server(tools)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)
