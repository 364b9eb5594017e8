"""The memory tools over MCP, on the official SDK's low-level server (our own JSON schemas, not ones derived
from Python signatures). `stratagate mcp DATABASE --namespace NS` runs it on stdio or, with `--http PORT`,
as streamable HTTP on 127.0.0.1.

One server is one agent session: its latest retrieval batch and assessment are shared by whoever connects.
Every tool runs on the server's event loop, one at a time, so calls to the memory never interleave.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

from stratagate import __version__
from stratagate.errors import StrataGateError
from stratagate.tools.memory_tools import MemoryTools

INSTRUCTIONS = ("Agent memory (StrataGate). Search or expand, then memory_assess the batch, then "
                "memory_record_use with the refs your answer used (or none). Store each finished turn with "
                "memory_append_turn.")


def build_server(tools: MemoryTools) -> Server[Any]:
    lock = anyio.Lock()

    async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema,
                       annotations=types.ToolAnnotations(read_only_hint=not spec.writes))
            for spec in tools.specs()])

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        async with lock:
            try:
                result = tools.call(params.name, params.arguments or {})
            except StrataGateError as error:
                # The model gets the message and can correct its call; the server keeps serving.
                return types.CallToolResult(content=[types.TextContent(type="text", text=str(error))],
                                            is_error=True)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result)

    return Server("stratagate-memory", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def serve_stdio(tools: MemoryTools) -> None:
    server = build_server(tools)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)


def serve_http(tools: MemoryTools, port: int, host: str = "127.0.0.1") -> None:
    """Streamable HTTP at http://HOST:PORT/mcp until interrupted."""
    import uvicorn

    app = build_server(tools).streamable_http_app(host=host)
    uvicorn.run(app, host=host, port=port, log_level="warning")
