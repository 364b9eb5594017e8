"""`stratagate mcp DATABASE --namespace NS`: serve the memory tools over MCP (stdio, or streamable HTTP)."""

from __future__ import annotations

from typing import Any

import click

from stratagate.errors import InvalidInputError
from stratagate.memory import open as open_memory

ADAPTERS = ("none", "rules", "openai", "anthropic")


def _adapters(kind: str, model: str | None, base_url: str | None) -> Any:
    """The model callbacks the memory derives blocks, events and elements with (None: the defaults)."""
    if kind in ("openai", "anthropic") and not model:
        raise InvalidInputError(f"--adapter {kind} needs --model")
    if kind == "openai":
        from stratagate.adapters import openai_adapters

        return openai_adapters(model or "", base_url=base_url)
    if kind == "anthropic":
        from stratagate.adapters import anthropic_adapters

        return anthropic_adapters(model or "", base_url=base_url)
    return None


@click.command("mcp")
@click.argument("database")
@click.option("--namespace", required=True, help="The memory namespace the tools read and write.")
@click.option("--read-only", is_flag=True, help="Serve only the read tools; the database is never written.")
@click.option("--http", "port", type=click.IntRange(0, 65535), default=None,
              help="Serve streamable HTTP on this local port (path /mcp) instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address --http listens on.")
@click.option("--adapter", type=click.Choice(ADAPTERS), default="none", show_default=True,
              help="What derives blocks, events and elements: the defaults, the rule-based callbacks, or a model.")
@click.option("--model", help="The model for --adapter openai/anthropic.")
@click.option("--base-url", help="An OpenAI- or Anthropic-compatible endpoint (keys from the environment).")
@click.option("--block-turn-size", type=click.IntRange(1, 1000), default=None, help="Turns per block.")
def command(database: str, namespace: str, read_only: bool, port: int | None, host: str, adapter: str,
            model: str | None, base_url: str | None, block_turn_size: int | None) -> None:
    """Serve the memory tools of DATABASE (an SQLite file or a PostgreSQL URL) over MCP: search, expand,
    assess and record use, append turns and resume pending work. Read-only serves the read tools only."""
    from stratagate import rules
    from stratagate.tools.mcp_server import serve_http, serve_stdio
    from stratagate.tools.memory_tools import MemoryTools

    adapters = _adapters(adapter, model, base_url)
    options = (rules.engine_options() if adapter == "rules" else adapters.engine_options() if adapters else {})
    if block_turn_size is not None:
        options["block_turn_size"] = block_turn_size
    memory = open_memory(database, namespace, read_only=read_only, **({} if read_only else options))
    try:
        tools = MemoryTools(memory, after_write=(lambda: adapters.record_into(memory)) if adapters else None)
        if port is None:
            serve_stdio(tools)
        else:
            click.echo(f"stratagate mcp: serving {namespace} at http://{host}:{port}/mcp", err=True)
            serve_http(tools, port, host)
    finally:
        memory.close()
