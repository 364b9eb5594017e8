#!/usr/bin/env python3
"""Live follow: from a write committed by another process to the open window showing it.

The inspector's main window (offscreen) is open on a memory; a writer process appends turns through the
memory tools (`memory_append_turn`, one commit each) at random intervals of 0.3–0.7 s and prints each commit's
revision and wall-clock time. The window side records when its open memory is at that revision with every
view's re-read delivered (the database worker idle). Latency = shown − committed, same machine clock. On a
SQLite file and on PostgreSQL (a throwaway server, as the test suite starts it).

    .venv/bin/python bench/live_follow.py [--writes 40] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.postgres_server starts the PostgreSQL server

from report import markdown_table, write_section

NAMESPACE = "agent"
WRITER = textwrap.dedent("""
    import random, sys, time
    import stratagate
    from stratagate.tools import MemoryTools

    location, namespace, writes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    random.seed(7)
    with stratagate.open(location, namespace) as memory:
        tools = MemoryTools(memory)
        for number in range(writes):
            time.sleep(random.uniform(0.3, 0.7))
            result = tools.call("memory_append_turn", {"user": f"We decided step {number}.", "assistant": "Noted.",
                                                       "receipt_id": f"bench:{number}"})
            print(result["revision"], time.time(), flush=True)
""")


def measure(location: str, writes: int) -> list[float]:
    import stratagate
    from stratagate_gui.application import build_main_window, create_application

    with stratagate.open(location, NAMESPACE) as memory:
        memory.append_turn("We decided to deploy Atlas on Friday.", "Noted.")
    app = create_application()
    window = build_main_window()
    window.show()
    window.open_location(location, NAMESPACE)
    window.wait_idle()
    committed: dict[int, float] = {}
    writer = subprocess.Popen([sys.executable, "-c", WRITER, location, NAMESPACE, str(writes)],
                              stdout=subprocess.PIPE, text=True)

    def read() -> None:
        for line in writer.stdout:
            revision, at = line.split()
            committed[int(revision)] = float(at)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    shown: dict[int, float] = {}
    deadline = time.monotonic() + writes * 2 + 30
    while (writer.poll() is None or len(shown) < len(committed)) and time.monotonic() < deadline:
        app.processEvents()
        memory = window.memory
        if memory is not None and window.worker.pending == 0 and memory.revision not in shown:
            shown[memory.revision] = time.time()
        time.sleep(0.002)
    reader.join(5)
    window.close()
    # A window re-read that lands after two commits shows both: each counts from its own commit.
    latencies = []
    for revision, at in committed.items():
        later = [moment for shown_revision, moment in shown.items() if shown_revision >= revision]
        if later:
            latencies.append((min(later) - at) * 1000)
    return latencies


def postgres_location() -> tuple[str, object]:
    from tests.postgres_server import PostgresServer, _bin_dir

    bin_dir = _bin_dir()
    if bin_dir is None:
        raise RuntimeError("no PostgreSQL binaries (initdb) found")
    server = PostgresServer(bin_dir)
    server.start()
    return server.create_database("live_follow_bench"), server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="8 writes; prints, writes nothing")
    arguments = parser.parse_args()
    writes = 8 if arguments.quick else arguments.writes
    from stratagate_gui.follow import POLL_MS

    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for label in ("SQLite file", "PostgreSQL"):
            server = None
            if label == "SQLite file":
                location = str(Path(directory) / "live.sqlite")
            else:
                location, server = postgres_location()
            try:
                latencies = sorted(measure(location, writes))
            finally:
                if server is not None:
                    server.stop()
            p90 = latencies[int(0.9 * (len(latencies) - 1))]
            rows.append((label, len(latencies), f"{statistics.median(latencies):.0f}", f"{p90:.0f}",
                         f"{max(latencies):.0f}"))
    text = "\n\n".join([
        "## Live follow: a write in another process to the window showing it",
        f"`bench/live_follow.py --writes {writes}`. A writer process appends turns through the memory tools "
        "(`memory_append_turn`, one commit each) every 0.3–0.7 s while the main window is open on the memory "
        f"(offscreen); the window polls the stored revision every {POLL_MS} ms when its database worker is idle. "
        "Latency runs from the writer's commit to the window's memory being at that revision with every view's "
        "re-read delivered (its database worker idle).",
        markdown_table(["database", "writes", "median ms", "p90 ms", "max ms"], rows),
        f"The poll interval bounds it: a write waits on average half an interval ({POLL_MS // 2} ms) to be "
        "noticed, then the window re-reads the memory and its views refresh.",
    ])
    print(text)
    if not arguments.quick:
        write_section("live_follow", text)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
