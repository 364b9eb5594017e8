#!/usr/bin/env python3
"""The agent side: model adapter round trips, and turn ingestion through MCP against the engine directly.

Adapter round trip: one summarizer call (a block of 6 turns) through `openai_adapters` and
`anthropic_adapters` against `ScriptedModelServer` on 127.0.0.1, which answers at once: what the adapter, the
official client and the local HTTP round trip cost on top of a model. A plain `urllib` POST of the same
request to the same server is the floor. Cold is the first call of a fresh process (client import and
construction included), warm the median of the following calls.

Ingest throughput: N turns (deferred processing, a receipt each) into a new SQLite file, by the engine in
process (`StrataGate.append_turn`), through `MemoryTools` (the tool layer alone), and through the `stratagate
mcp` server driven by the official MCP client over stdio and over streamable HTTP.

    .venv/bin/python bench/agent.py [--turns 300] [--calls 60] [--quick]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import markdown_table, write_section

STRATAGATE = str(Path(sys.executable).with_name("stratagate"))
SUMMARY = {"l0Title": "Deploy plan", "l0Tags": ["deploy"], "l1Summary": "They planned the deploy.",
           "l2Keypoints": ["deploy on friday"], "shouldExtract": False}


def messages(count: int = 12) -> list:
    from stratagate.model import Message

    return [Message(f"msg_{n}", "user" if n % 2 == 0 else "assistant", f"turn {n // 2}: the deploy moves to Friday",
                    "2026-03-02T09:00:00+08:00") for n in range(count)]


def adapter_round_trip(wire: str, calls: int) -> tuple[float, float]:
    """(cold ms, warm median ms) of summarizer calls in a fresh process."""
    code = f"""
import json, statistics, sys, time
started = time.perf_counter()
from stratagate.adapters import anthropic_adapters, openai_adapters
from stratagate.adapters.scripted_server import Scripted, ScriptedModelServer
sys.path.insert(0, {str(Path(__file__).parent)!r})
from agent import SUMMARY, messages
with ScriptedModelServer(lambda request: Scripted(arguments=SUMMARY)) as server:
    started = time.perf_counter()
    if {wire!r} == "openai":
        adapters = openai_adapters("bench", base_url=server.openai_base_url, api_key="x")
    else:
        adapters = anthropic_adapters("bench", base_url=server.anthropic_base_url, api_key="x")
    block = messages()
    adapters.summarizer(block)
    cold = (time.perf_counter() - started) * 1000
    samples = []
    for _ in range({calls}):
        started = time.perf_counter()
        adapters.summarizer(block)
        samples.append((time.perf_counter() - started) * 1000)
print(json.dumps([cold, statistics.median(samples)]))
"""
    output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    cold, warm = json.loads(output)
    return cold, warm


def raw_round_trip(calls: int) -> float:
    """Median ms of a plain urllib POST of a chat-completions request carrying the same payload."""
    from stratagate.adapters.scripted_server import Scripted, ScriptedModelServer
    from stratagate.adapters.structured import SUMMARIZER_TOOL, summarizer_payload

    body = json.dumps({"model": "bench", "messages": [
        {"role": "system", "content": "x"}, {"role": "user", "content": json.dumps(summarizer_payload(messages()))}],
        "tools": [{"type": "function", "function": {"name": SUMMARIZER_TOOL.name,
                                                    "parameters": SUMMARIZER_TOOL.parameters}}],
        "tool_choice": {"type": "function", "function": {"name": SUMMARIZER_TOOL.name}}}).encode()
    with ScriptedModelServer(lambda request: Scripted(arguments=SUMMARY)) as server:
        samples = []
        for _ in range(calls + 1):
            started = time.perf_counter()
            request = urllib.request.Request(f"{server.openai_base_url}/chat/completions", body,
                                             {"Content-Type": "application/json"})
            with urllib.request.urlopen(request) as response:
                json.loads(response.read())
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples[1:])


ROUNDS = 5
TURN = ("We decided to deploy Atlas on Friday, turn {n}.", "Noted for turn {n}.")


def ingest_engine(path: Path, turns: int) -> float:
    import stratagate

    with stratagate.open(path, "bench") as memory:
        started = time.perf_counter()
        for n in range(turns):
            memory.append_turn(TURN[0].format(n=n), TURN[1].format(n=n), receipt_id=f"t{n}", defer_processing=True)
        return turns / (time.perf_counter() - started)


def ingest_tools(path: Path, turns: int) -> float:
    import stratagate
    from stratagate.tools import MemoryTools

    with stratagate.open(path, "bench") as memory:
        tools = MemoryTools(memory)
        started = time.perf_counter()
        for n in range(turns):
            tools.call("memory_append_turn", {"user": TURN[0].format(n=n), "assistant": TURN[1].format(n=n),
                                              "receipt_id": f"t{n}"})
        return turns / (time.perf_counter() - started)


async def _send_turns(client, turns: int) -> float:
    await client.list_tools()
    started = time.perf_counter()
    for n in range(turns):
        result = await client.call_tool("memory_append_turn", {
            "user": TURN[0].format(n=n), "assistant": TURN[1].format(n=n), "receipt_id": f"t{n}"})
        assert not result.is_error, result.content[0].text
    return turns / (time.perf_counter() - started)


def ingest_mcp_stdio(path: Path, turns: int) -> float:
    import anyio
    from mcp import Client, StdioServerParameters

    async def run() -> float:
        parameters = StdioServerParameters(command=STRATAGATE, args=["mcp", str(path), "--namespace", "bench"])
        async with Client(parameters) as client:
            return await _send_turns(client, turns)

    return anyio.run(run)


def ingest_mcp_http(path: Path, turns: int) -> float:
    import anyio
    from mcp import Client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([STRATAGATE, "mcp", str(path), "--namespace", "bench", "--http", str(port)],
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)

        async def run() -> float:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                return await _send_turns(client, turns)

        return anyio.run(run)
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--quick", action="store_true", help="100 turns, 10 calls; prints, writes nothing")
    arguments = parser.parse_args()
    turns, calls = (100, 10) if arguments.quick else (arguments.turns, arguments.calls)

    floor = statistics.median(raw_round_trip(calls) for _ in range(ROUNDS))
    round_trips = [("plain urllib POST (the floor)", "—", f"{floor:.2f}")]
    clients = (("openai", "openai client, chat completions"), ("anthropic", "anthropic client, messages"))
    # One fresh process per client and round, alternating; the median round is reported.
    measured: dict[str, list[tuple[float, float]]] = {wire: [] for wire, _label in clients}
    for _round in range(ROUNDS):
        for wire, _label in clients:
            measured[wire].append(adapter_round_trip(wire, calls))
    for wire, label in clients:
        cold = statistics.median(sample[0] for sample in measured[wire])
        warm = statistics.median(sample[1] for sample in measured[wire])
        round_trips.append((f"summarizer through the {label}", f"{cold:.1f}", f"{warm:.2f}"))

    paths = (("engine, in process (`append_turn`)", ingest_engine), ("`MemoryTools`, in process", ingest_tools),
             ("MCP over stdio (`stratagate mcp`)", ingest_mcp_stdio),
             ("MCP over streamable HTTP (`--http`)", ingest_mcp_http))
    samples: dict[str, list[float]] = {label: [] for label, _ingest in paths}
    with tempfile.TemporaryDirectory() as directory:
        # Alternating rounds, so the machine's load hits every path alike; the median round is reported.
        for round_number in range(ROUNDS):
            for label, ingest in paths:
                samples[label].append(ingest(Path(directory) / f"{round_number}-{len(samples[label])}-{ingest.__name__}.sqlite", turns))
    rates = [(label, statistics.median(values)) for label, values in samples.items()]
    engine_rate = rates[0][1]
    rate_rows = [(label, f"{rate:,.0f}", f"{rate / engine_rate:.2f}×") for label, rate in rates]

    text = "\n\n".join([
        "## Agent side: adapter round trip and ingestion through MCP",
        f"`bench/agent.py --turns {turns} --calls {calls}`. Adapter round trip: one summarizer call on a block of "
        "6 turns against `ScriptedModelServer` on 127.0.0.1 (it answers at once, so this is the adapter, the "
        "official client and the local HTTP round trip, not a model). Cold: the first call of a fresh process, "
        f"the client's import and construction included; warm: the median of {calls} more; each the median of "
        f"{ROUNDS} processes per client, alternating.",
        markdown_table(["round trip", "cold ms", "warm ms"], round_trips),
        f"Ingestion: {turns} turns with deferred processing and a receipt each into a new SQLite file, median of "
        f"{ROUNDS} alternating rounds; the MCP rows drive `stratagate mcp` with the official client, one "
        "`memory_append_turn` call per turn. Every turn is one SQLite commit, which sets the pace of all four: "
        "the tool layer costs nothing measurable next to it (the in-process rows differ by the machine's noise), "
        "an MCP call over stdio adds a JSON-RPC round trip between processes, over HTTP a request through the "
        "SDK's streamable-HTTP session.",
        markdown_table(["path", "turns/s", "vs engine"], rate_rows),
    ])
    print(text)
    if not arguments.quick:
        write_section("agent", text)


if __name__ == "__main__":
    main()
